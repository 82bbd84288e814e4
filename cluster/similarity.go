package cluster

import (
	"math"
	"slices"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/floats/scalar"
)

// symTol is the relative tolerance within which s(a,b) and s(b,a) must
// agree, in a matrix or between repeated pairs of an edge list.
const symTol = 1e-12

// similarities is a symmetric similarity matrix over sites in canonical
// order, stored dense and row-major. The diagonal is unused.
type similarities struct {
	name  string
	sites []string
	val   []float64
}

func (s *similarities) at(i, j int) float64 { return s.val[i*len(s.sites)+j] }

// newSimilarities orders names canonically and returns an empty matrix
// over them with the position of each name.
func newSimilarities(name string, names []string) (*similarities, map[string]int) {
	sites := slices.Clone(names)
	SortSites(sites)
	pos := make(map[string]int, len(sites))
	for i, s := range sites {
		pos[s] = i
	}
	return &similarities{name: name, sites: sites, val: make([]float64, len(sites)*len(sites))}, pos
}

// numberReader returns a function that reads a finite similarity and
// otherwise says what is wrong with it. With decimalComma, a value with one
// comma and no point, such as "0,5", reads as "0.5".
func numberReader(decimalComma bool) func(string) (float64, string) {
	return func(v string) (float64, string) {
		t := v
		if decimalComma && strings.Count(t, ",") == 1 && !strings.Contains(t, ".") {
			t = strings.Replace(t, ",", ".", 1)
		}
		x, err := strconv.ParseFloat(t, 64)
		switch {
		case err != nil && v == "":
			return 0, "is empty"
		case err != nil:
			return 0, "is not a number"
		case math.IsNaN(x):
			return 0, "is NaN"
		case math.IsInf(x, 0):
			return 0, "is not finite"
		}
		return x, ""
	}
}

// parseMatrix reads a square matrix: site names in the header row (its
// first cell is ignored) and in the first column, in any order.
func parseMatrix(recs []record, name string, num func(string) (float64, string)) (*similarities, error) {
	h := recs[0]
	if len(h.fields) < 2 {
		return nil, errAt(name, h.line, 0, "1 field; want site,cluster rows, site_a,site_b,similarity rows, or a square matrix with site names in the header row and the first column")
	}
	cols := h.fields[1:]
	colAt := make(map[string]int, len(cols))
	for j, c := range cols {
		if c == "" {
			return nil, errAt(name, h.line, j+2, "empty site name in the header")
		}
		if prev, ok := colAt[c]; ok {
			return nil, errAt(name, h.line, j+2, "site %q listed twice in the header (columns %d and %d)", c, prev+2, j+2)
		}
		colAt[c] = j
	}
	rows := recs[1:]
	for _, r := range rows {
		if len(r.fields) != len(h.fields) {
			return nil, errAt(name, r.line, 0, "%d fields, want %d (a site name and one value per site in the header)", len(r.fields), len(h.fields))
		}
	}
	if len(rows) != len(cols) {
		return nil, errAt(name, 0, 0, "matrix not square: %d rows, %d columns", len(rows), len(cols))
	}
	rowAt := make(map[string]int, len(rows))
	for i, r := range rows {
		site := r.fields[0]
		if site == "" {
			return nil, errAt(name, r.line, 1, "empty site name in the first column")
		}
		if prev, ok := rowAt[site]; ok {
			return nil, errAt(name, r.line, 1, "site %q listed twice in the first column (lines %d and %d)", site, rows[prev].line, r.line)
		}
		if _, ok := colAt[site]; !ok {
			return nil, errAt(name, r.line, 1, "site %q in the first column is not in the header; the header and the first column must name the same sites", site)
		}
		rowAt[site] = i
	}

	// raw[i][j] is the value in row i, column j of the file.
	raw := make([][]float64, len(rows))
	for i, r := range rows {
		raw[i] = make([]float64, len(cols))
		for j, v := range r.fields[1:] {
			x, bad := num(v)
			if bad != "" {
				return nil, errAt(name, r.line, j+2, "value %q for sites %q and %q %s", v, r.fields[0], cols[j], bad)
			}
			raw[i][j] = x
		}
	}

	s, pos := newSimilarities(name, cols)
	n := len(cols)
	for i, r := range rows {
		a := r.fields[0]
		for j, b := range cols {
			if a == b {
				continue
			}
			// Rows and columns are visited in file order, so the mirror cell
			// (row b, column a) of the first asymmetric pair comes later.
			x, y := raw[i][j], raw[rowAt[b]][colAt[a]]
			if !scalar.EqualWithinRel(x, y, symTol) {
				return nil, errAt(name, rows[rowAt[b]].line, colAt[a]+2, "matrix not symmetric: row %q column %q is %v but row %q column %q is %v (line %d, column %d)",
					b, a, y, a, b, x, r.line, j+2)
			}
			v := x
			if x != y {
				v = x/2 + y/2
			}
			s.val[pos[a]*n+pos[b]] = v
		}
	}
	return s, nil
}

// parseEdges reads "site_a,site_b,similarity" rows. The first row is a
// header if its similarity is not a number. Pairs are unordered; a pair
// may repeat with the same value (within the symmetry tolerance). A row
// with site_a == site_b only declares the site.
func parseEdges(recs []record, name string, num func(string) (float64, string)) (*similarities, error) {
	for _, r := range recs {
		if len(r.fields) != 3 {
			return nil, errAt(name, r.line, 0, "%d fields, want 3 (site_a,site_b,similarity) as on line %d", len(r.fields), recs[0].line)
		}
	}
	if _, bad := num(recs[0].fields[2]); bad == "is not a number" || bad == "is empty" {
		recs = recs[1:]
	}
	if len(recs) == 0 {
		return nil, errAt(name, 0, 0, "no edges: the file has a header only")
	}
	type pair struct{ a, b string }
	type edge struct {
		val  float64
		line int
	}
	edges := make(map[pair]edge, len(recs))
	var order []pair
	var names []string
	seen := make(map[string]bool)
	for _, r := range recs {
		a, b, v := r.fields[0], r.fields[1], r.fields[2]
		for k, site := range []string{a, b} {
			if site == "" {
				return nil, errAt(name, r.line, k+1, "empty site name")
			}
			if !seen[site] {
				seen[site] = true
				names = append(names, site)
			}
		}
		x, bad := num(v)
		if bad != "" {
			return nil, errAt(name, r.line, 3, "similarity %q for sites %q and %q %s", v, a, b, bad)
		}
		if a == b {
			continue
		}
		p := pair{a, b}
		if b < a {
			p = pair{b, a}
		}
		if prev, ok := edges[p]; ok {
			if !scalar.EqualWithinRel(prev.val, x, symTol) {
				return nil, errAt(name, r.line, 3, "sites %q and %q have similarity %v on line %d but %v here", a, b, prev.val, prev.line, x)
			}
			continue
		}
		edges[p] = edge{x, r.line}
		order = append(order, p)
	}
	s, pos := newSimilarities(name, names)
	n := len(names)
	for _, p := range order {
		i, j := pos[p.a], pos[p.b]
		s.val[i*n+j] = edges[p].val
		s.val[j*n+i] = edges[p].val
	}
	return s, nil
}

// cluster turns s into an assignment with the method opts asks for.
func (s *similarities) cluster(opts Options) (*Assignment, error) {
	n := len(s.sites)
	var parts [][]int
	a := &Assignment{Source: s.name}
	switch {
	case opts.HasThreshold:
		a.Method, a.Threshold = MethodThreshold, opts.Threshold
		parts = s.components(opts.Threshold)
	case opts.M > 0:
		if opts.M > n {
			return nil, optionsError("cluster count %d exceeds the %d sites in %s", opts.M, n, s.name)
		}
		a.Method, a.M = MethodAverageLinkage, opts.M
		parts = s.averageLinkage(opts.M)
	default:
		return nil, optionsError("%s holds similarities; give a threshold or a cluster count", s.name)
	}
	for k, p := range parts {
		c := Cluster{Name: "c" + strconv.Itoa(k+1), Sites: make([]string, len(p))}
		for i, site := range p {
			c.Sites[i] = s.sites[site]
		}
		a.Clusters = append(a.Clusters, c)
	}
	return a, nil
}

// partition turns a label per site (the smallest site of its cluster)
// into clusters of ascending site indices, ordered by smallest site.
func partition(label []int) [][]int {
	var parts [][]int
	slot := make(map[int]int)
	for i, l := range label {
		k, ok := slot[l]
		if !ok {
			k = len(parts)
			slot[l] = k
			parts = append(parts, nil)
		}
		parts[k] = append(parts[k], i)
	}
	return parts
}

// components returns the connected components of the graph linking sites
// whose similarity is at least t.
func (s *similarities) components(t float64) [][]int {
	n := len(s.sites)
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for i := range n {
		for j := i + 1; j < n; j++ {
			if s.at(i, j) >= t {
				ri, rj := find(i), find(j)
				// Keep the smaller index as the root so labels are smallest sites.
				if ri < rj {
					parent[rj] = ri
				} else if rj < ri {
					parent[ri] = rj
				}
			}
		}
	}
	label := make([]int, n)
	for i := range label {
		label[i] = find(i)
	}
	return partition(label)
}

// averageLinkage merges clusters, starting from one per site, until m are
// left. Each step merges the pair with the highest average similarity
// between their sites; of equal pairs, the one whose first cluster has the
// smallest site, then whose second has. A cluster is known by its smallest
// site; the merged cluster keeps the smaller of the two.
//
// sum[i*n+j] holds the total similarity between clusters i and j, so the
// average is sum/(size_i*size_j). best[r] caches the best partner j > r
// of each cluster r; a merge rescans only the rows whose cached partner it
// touched. A step costs O(n) plus O(n) per rescanned row: O(n^3) overall
// at worst, near O(n^2) when few rows need rescanning.
func (s *similarities) averageLinkage(m int) [][]int {
	n := len(s.sites)
	sum := slices.Clone(s.val)
	// Scale by a power of two (exact) so that no sum of n*n values can
	// overflow: max |value| * n * n stays below MaxFloat64.
	var maxAbs float64
	for _, v := range sum {
		maxAbs = max(maxAbs, math.Abs(v))
	}
	if limit := math.MaxFloat64 / float64(4*n*n); maxAbs > limit {
		_, e := math.Frexp(maxAbs / limit)
		for i := range sum {
			sum[i] = math.Ldexp(sum[i], -e)
		}
	}

	size := make([]int, n)
	active := make([]bool, n)
	label := make([]int, n)
	for i := range n {
		size[i], active[i], label[i] = 1, true, i
	}
	avg := func(i, j int) float64 { return sum[i*n+j] / (float64(size[i]) * float64(size[j])) }
	best := make([]int, n)
	bestVal := make([]float64, n)
	rescan := func(r int) {
		best[r] = -1
		for j := r + 1; j < n; j++ {
			if !active[j] {
				continue
			}
			if v := avg(r, j); best[r] < 0 || v > bestVal[r] {
				best[r], bestVal[r] = j, v
			}
		}
	}
	for r := range n {
		rescan(r)
	}

	for k := n; k > m; k-- {
		a := -1
		for r := range n {
			if active[r] && best[r] >= 0 && (a < 0 || bestVal[r] > bestVal[a]) {
				a = r
			}
		}
		b := best[a]
		for j := range n {
			if active[j] && j != a && j != b {
				sum[a*n+j] += sum[b*n+j]
				sum[j*n+a] = sum[a*n+j]
			}
		}
		size[a] += size[b]
		active[b] = false
		for i := range label {
			if label[i] == b {
				label[i] = a
			}
		}
		for r := range n {
			switch {
			case !active[r]:
			case r == a:
				rescan(r)
			case r < a && (best[r] == a || best[r] == b):
				rescan(r)
			case r < a:
				// The merged average is a weighted mean of two averages no
				// larger than bestVal[r], so it beats the cached partner
				// only by rounding; keep the cache exact all the same.
				if v := avg(r, a); v > bestVal[r] || (v == bestVal[r] && a < best[r]) {
					best[r], bestVal[r] = a, v
				}
			case r < b && best[r] == b:
				rescan(r)
			}
		}
	}
	return partition(label)
}
