package solve

import (
	"context"
	"fmt"
	"slices"

	"github.com/grmdp/grmdp/internal/workers"
	"github.com/grmdp/grmdp/traj"

	"golang.org/x/sync/errgroup"

	"github.com/grmdp/grmdp/features"
)

// Disclosure is the disclosure control applied to the statistics of every
// (site, step) cell, the same centrally (NewStatsDisclosed) and at a
// hospital that sends its sums to a coordinator, so that a federated result
// can be checked against a central one.
//
// A feature's count at (site k, step h) is the number of rows of that cell
// (unweighted) whose phi_i is positive. A feature counted at fewer than
// MinCount rows is suppressed at that cell as if never observed: phi_i is
// taken as zero in every row of the cell before any sum is formed, so its
// Gram row and column and its right-hand-side entry are zero there (for an
// indicator or tabular map that removes exactly the rows of that feature;
// for other maps it removes those rows' contributions to feature i only).
// A cell with fewer than MinRows rows contributes nothing: no rows, no Gram,
// no right-hand side, no behaviour counts. The zero value suppresses
// nothing and leaves every statistic, bit for bit, as without it.
type Disclosure struct {
	MinCount int `json:"min_count"`
	MinRows  int `json:"min_rows"`
}

// Active reports whether the rule can suppress anything.
func (dc Disclosure) Active() bool { return dc.MinCount > 0 || dc.MinRows > 0 }

// cellMask is what disclosure control suppresses at one (site, step).
type cellMask struct {
	// silent: the cell has fewer than MinRows or MinCount rows and
	// contributes nothing.
	silent bool
	// drop[i]: feature i is suppressed (nil: none is).
	drop []bool
	// leaf[c]: behaviour cell c (see Stats.BehaviourCounts) is suppressed
	// (nil: none is).
	leaf []bool
}

// NewStatsDisclosed is [NewStats] under disclosure control dc: every
// per-(site, step) statistic (Gram, right-hand side, behaviour counts) is
// formed from the rows as dc leaves them. With the zero Disclosure it is
// NewStats.
func NewStatsDisclosed(ctx context.Context, t *traj.Table, m features.Map, blocks features.Blocks, nworkers int, dc Disclosure) (*Stats, error) {
	if !dc.Active() {
		return NewStats(ctx, t, m, blocks, nworkers)
	}
	if dc.MinCount < 0 || dc.MinRows < 0 {
		return nil, fmt.Errorf("solve: disclosure thresholds must not be negative (min count %d, min rows %d)", dc.MinCount, dc.MinRows)
	}
	// The masks are made first: NewStats forms the Grams through them.
	st := &Stats{Table: t, Map: m, disclosure: dc}
	K := len(t.Sites)
	st.mask = make([][]cellMask, t.H)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers.Or(nworkers))
	for h := 1; h <= t.H; h++ {
		st.mask[h-1] = make([]cellMask, K)
		for k := 0; k < K; k++ {
			g.Go(func() error {
				if err := gctx.Err(); err != nil {
					return err
				}
				st.mask[h-1][k] = st.cellMask(h, k)
				return nil
			})
		}
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return completeStats(ctx, st, blocks, nworkers, Tuning{})
}

// cellMask decides what dc suppresses at (site k, step h): nothing but
// silence when the cell has fewer than MinRows rows or fewer than MinCount
// rows (its row count would itself be a count below MinCount), and
// otherwise the cells [suppression] withholds.
func (st *Stats) cellMask(h, k int) cellMask {
	s := &st.Table.Steps[h-1]
	rows := int(s.SiteStart[k+1] - s.SiteStart[k])
	K := st.disclosure.MinCount
	if rows < st.disclosure.MinRows || rows < K {
		return cellMask{silent: true}
	}
	if K == 0 {
		return cellMask{}
	}
	leaves := st.rawLeaves(h, k)
	counts := st.rawCounts(h, k)
	var nested [][]int32
	if ownedByLeaf(&st.Map) {
		nested = st.nestedFeatures(h, k, counts)
	}
	feat, leaf := suppression(&st.Map, int64(rows), leaves, counts, nested, int64(K))
	mk := cellMask{}
	if slices.Contains(feat, true) {
		mk.drop = feat
	}
	if slices.Contains(leaf, true) {
		mk.leaf = leaf
	}
	return mk
}

// rawLeaves returns the row counts of (site k, step h)'s behaviour cells:
// per (discrete state, action), index s*A+a, for discrete maps, or per
// action otherwise. They partition the cell's rows.
func (st *Stats) rawLeaves(h, k int) []int64 {
	t := st.Table
	S, discrete := st.Map.Discrete()
	n := t.A
	if discrete {
		n = S * t.A
	}
	out := make([]int64, n)
	s := &t.Steps[h-1]
	for j := int(s.SiteStart[k]); j < int(s.SiteStart[k+1]); j++ {
		c := int(s.Action[j])
		if discrete {
			c += int(s.State[j*t.W]) * t.A
		}
		out[c]++
	}
	return out
}

// nestedFeatures returns, per feature i, the other features j whose rows
// (of site k, step h, with phi_j > 0) include every row of i: the
// features whose count minus i's is the number of rows holding j but not
// i. counts are the features' raw counts.
func (st *Stats) nestedFeatures(h, k int, counts []int64) [][]int32 {
	s := &st.Table.Steps[h-1]
	m := &st.Map
	W := st.Table.W
	out := make([][]int32, m.Dim())
	seen := make([]bool, m.Dim())
	idx := make([]int32, m.MaxNonzeros())
	val := make([]float64, m.MaxNonzeros())
	buf := make([]int32, m.MaxNonzeros())
	for j := int(s.SiteStart[k]); j < int(s.SiteStart[k+1]); j++ {
		n := m.Phi(s.State[j*W:(j+1)*W], int(s.Action[j]), idx, val)
		pos := buf[:0]
		for x := 0; x < n; x++ {
			if val[x] > 0 {
				pos = append(pos, idx[x])
			}
		}
		for _, i := range pos {
			if !seen[i] {
				seen[i] = true
				for _, o := range pos {
					if o != i {
						out[i] = append(out[i], o)
					}
				}
				continue
			}
			// Keep the candidates this row also holds (both ascend).
			keep := out[i][:0]
			for _, o := range out[i] {
				if _, ok := slices.BinarySearch(pos, o); ok {
					keep = append(keep, o)
				}
			}
			out[i] = keep
		}
	}
	return out
}

// ownedByLeaf reports whether the map's features are not a partition of
// a step's rows (action-block, soft-binned, precomputed): a feature's rows
// then lie inside its action's rows (the whole step's for precomputed)
// without the features summing to them.
func ownedByLeaf(m *features.Map) bool {
	switch m.Kind {
	case features.ActionBlock, features.SoftBinned, features.Precomputed:
		return true
	}
	return false
}

// suppression decides which features and behaviour cells of one
// (site, step) with rows rows (at least K) are withheld, from their row
// counts (leaves: the behaviour cells, see [Stats.rawLeaves]; feat: the
// features'; nested[i]: the features whose rows include feature i's, for
// the maps where ownedByLeaf). Its guarantee: no released count, and no
// difference of a released count and released counts inside it, is in
// 1..K-1.
//
//   - Primary suppression: a cell or feature counted 1..K-1 is withheld.
//   - Nesting: withholding a cell withholds what lies inside it (a
//     behaviour cell's features, an indicator map's state feature's
//     behaviour cells); the tabular map's features and the indicator
//     map's state-0 features are their behaviour cells.
//   - Margins: where released counts partition a released count (the
//     step's rows into behaviour cells, and for the tabular, indicator
//     and binned maps into features; an indicator state feature into its
//     behaviour cells; a binned action's behaviour cell into its
//     features), the withheld parts must total 0 or at least 2K-1: while
//     they total 1..2K-2 the smallest released part is withheld too
//     (complementary suppression; ties to the lowest index). The total
//     T is the margin minus its released parts, so anyone can compute
//     it, and the rule is public. A T in 1..K-1 is itself a count below
//     K; a T in K..2K-2 made of a part s in 1..K-1 and a complement of
//     at least K bounds s by T-K (T = K+1 gives s = 1). From 2K-1 on,
//     s can be any count in 1..K-1.
//   - Pairs: where a released feature lies inside a released count that
//     it does not partition (a feature inside its action's rows, or
//     inside another feature's rows; for a precomputed map inside the
//     step's rows), the difference must be 0 or at least K, or the
//     feature is withheld.
//
// Withholding only adds: the rules are applied until none applies.
func suppression(m *features.Map, rows int64, leaves, feat []int64, nested [][]int32, K int64) (dropF, dropL []bool) {
	g := newCountGraph(m, rows, leaves, feat, nested)
	for x := 0; x < g.step; x++ {
		if g.n[x] > 0 && g.n[x] < K {
			g.withhold(x)
		}
	}
	for {
		margins := g.applyMargins(K)
		pairs := g.applyPairs(K)
		if !margins && !pairs {
			break
		}
	}
	return g.sup[g.nL:g.step], g.sup[:g.nL]
}

// countGraph is one (site, step)'s released counts and how they relate:
// nodes 0..nL-1 are the behaviour cells, nL..nL+d-1 the features, nL+d
// the step's rows; kids[x] lie inside x (withholding x withholds them),
// margins partition their parent, pairs hold a smaller count inside a
// bigger one that it does not partition.
type countGraph struct {
	nL, step int
	n        []int64
	sup      []bool
	kids     [][]int
	margins  []countMargin
	pairs    [][2]int // {big, small}: small's rows inside big's
}

type countMargin struct {
	parent int
	parts  []int
}

func newCountGraph(m *features.Map, rows int64, leaves, feat []int64, nested [][]int32) *countGraph {
	nL, d := len(leaves), len(feat)
	step := nL + d
	g := &countGraph{nL: nL, step: step, n: make([]int64, step+1), sup: make([]bool, step+1), kids: make([][]int, step+1)}
	copy(g.n, leaves)
	copy(g.n[nL:], feat)
	g.n[step] = rows
	g.margins = append(g.margins, countMargin{step, seq(0, nL)})
	A := m.A
	switch m.Kind {
	case features.Tabular:
		for i := 0; i < d; i++ {
			g.link(i, nL+i)
			g.link(nL+i, i)
		}
	case features.Indicator:
		for a := 0; a < A; a++ {
			g.link(a, nL+a)
			g.link(nL+a, a)
		}
		for s := 1; s <= 2; s++ {
			f := nL + A + s - 1
			g.margins = append(g.margins, countMargin{f, seq(s*A, (s+1)*A)})
			for c := s * A; c < (s+1)*A; c++ {
				g.link(f, c)
			}
		}
		g.margins = append(g.margins, countMargin{step, seq(nL, nL+d)})
	case features.Binned:
		parts := make([][]int, A)
		for i := 0; i < d; i++ {
			a := m.ActionOf(i)
			g.link(a, nL+i)
			parts[a] = append(parts[a], nL+i)
		}
		for a := 0; a < A; a++ {
			g.margins = append(g.margins, countMargin{a, parts[a]})
		}
		g.margins = append(g.margins, countMargin{step, seq(nL, nL+d)})
	default:
		for i := 0; i < d; i++ {
			big := step
			if a := m.ActionOf(i); a >= 0 {
				big = a
				g.link(a, nL+i)
			}
			g.pairs = append(g.pairs, [2]int{big, nL + i})
			if i < len(nested) {
				for _, j := range nested[i] {
					g.pairs = append(g.pairs, [2]int{nL + int(j), nL + i})
				}
			}
		}
	}
	return g
}

func (g *countGraph) link(a, b int) { g.kids[a] = append(g.kids[a], b) }

// withhold withholds x and what lies inside it.
func (g *countGraph) withhold(x int) {
	if g.sup[x] {
		return
	}
	g.sup[x] = true
	for _, y := range g.kids[x] {
		g.withhold(y)
	}
}

// applyMargins applies the margin rule once to every margin and reports
// whether it withheld anything: while a released margin's withheld parts
// total 1..2K-2, its smallest released part (the lowest index among
// ties) is withheld too.
func (g *countGraph) applyMargins(K int64) bool {
	changed := false
	for _, mg := range g.margins {
		if g.sup[mg.parent] {
			continue
		}
		var t int64
		best := -1
		for _, x := range mg.parts {
			switch {
			case g.sup[x]:
				t += g.n[x]
			case g.n[x] > 0 && (best < 0 || g.n[x] < g.n[best]):
				best = x
			}
		}
		if t > 0 && t < 2*K-1 && best >= 0 {
			g.withhold(best)
			changed = true
		}
	}
	return changed
}

// applyPairs applies the pair rule once to every pair and reports whether
// it withheld anything: a released count inside a released bigger one
// that differs from it by 1..K-1 is withheld.
func (g *countGraph) applyPairs(K int64) bool {
	changed := false
	for _, p := range g.pairs {
		if g.sup[p[0]] || g.sup[p[1]] {
			continue
		}
		if diff := g.n[p[0]] - g.n[p[1]]; diff > 0 && diff < K {
			g.withhold(p[1])
			changed = true
		}
	}
	return changed
}

// seq returns lo, lo+1, ..., hi-1.
func seq(lo, hi int) []int {
	out := make([]int, 0, hi-lo)
	for x := lo; x < hi; x++ {
		out = append(out, x)
	}
	return out
}

// rawCounts returns, per feature, the number of rows of (site k, step h)
// whose phi_i is positive, before disclosure control.
func (st *Stats) rawCounts(h, k int) []int64 {
	s := &st.Table.Steps[h-1]
	m := &st.Map
	W := st.Table.W
	out := make([]int64, m.Dim())
	idx := make([]int32, m.MaxNonzeros())
	val := make([]float64, m.MaxNonzeros())
	for j := int(s.SiteStart[k]); j < int(s.SiteStart[k+1]); j++ {
		n := m.Phi(s.State[j*W:(j+1)*W], int(s.Action[j]), idx, val)
		for x := 0; x < n; x++ {
			if val[x] > 0 {
				out[idx[x]]++
			}
		}
	}
	return out
}

// maskAt returns the mask of the cell holding row j of step h, or nil when
// no disclosure control applies.
func (st *Stats) maskAt(h, j int) *cellMask {
	if st.mask == nil {
		return nil
	}
	return &st.mask[h-1][st.Table.Steps[h-1].Site(j)]
}

// suppress removes from a row's phi (idx, val: n nonzeros) the features
// mask suppresses and returns the number left. This is the one place
// disclosure control touches a row: every Gram, right-hand side and
// behaviour count is formed from what it leaves.
func suppress(mask *cellMask, idx []int32, val []float64, n int) int {
	if mask.silent {
		return 0
	}
	if mask.drop == nil {
		return n
	}
	out := 0
	for x := 0; x < n; x++ {
		if !mask.drop[idx[x]] {
			idx[out], val[out] = idx[x], val[x]
			out++
		}
	}
	return out
}

// Disclosure returns the disclosure control the statistics were formed
// under.
func (st *Stats) Disclosure() Disclosure { return st.disclosure }

// Counts returns, per feature, the number of rows of (site k, step h) whose
// phi_i is positive, as released under disclosure control: a suppressed
// feature (and every feature of a silent cell) reads 0, so that no count
// below MinCount is ever returned.
func (st *Stats) Counts(h, k int) []int64 {
	c := st.rawCounts(h, k)
	if st.mask == nil {
		return c
	}
	mk := &st.mask[h-1][k]
	for i := range c {
		if mk.silent || mk.drop != nil && mk.drop[i] {
			c[i] = 0
		}
	}
	return c
}

// Suppressed reports, for (site k, step h), whether the whole cell is
// silent (fewer than MinRows rows) and how many features with at least
// one row were suppressed (fewer than MinCount rows).
func (st *Stats) Suppressed(h, k int) (silent bool, features int) {
	if st.mask == nil {
		return false, 0
	}
	mk := &st.mask[h-1][k]
	if mk.silent {
		return true, 0
	}
	if mk.drop == nil {
		return false, 0
	}
	for i, c := range st.rawCounts(h, k) {
		if c > 0 && mk.drop[i] {
			features++
		}
	}
	return false, features
}

// CellRows returns the weighted number of rows (site k, step h) contributes
// to the statistics: 0 for a silent cell.
func (st *Stats) CellRows(h, k int) float64 {
	if st.mask != nil && st.mask[h-1][k].silent {
		return 0
	}
	s := &st.Table.Steps[h-1]
	lo, hi := int(s.SiteStart[k]), int(s.SiteStart[k+1])
	if s.Weight == nil {
		return float64(hi - lo)
	}
	n := 0.0
	for _, w := range s.Weight[lo:hi] {
		n += w
	}
	return n
}

// BehaviourCounts returns the weighted action counts of (site k, step h)
// that the behaviour fallback is chosen from: per (cell, action), index
// c*A+a, for maps with [BehaviourCells], or per action otherwise. Under
// disclosure control a cell the rule withholds (see [suppression]: every
// count from fewer than MinCount rows, and the cells withheld beside them)
// reads 0, and a silent cell counts nothing; a binned map's counts are its
// features' counts and are withheld as its features are.
func (st *Stats) BehaviourCounts(h, k int) []float64 {
	t := st.Table
	S, discrete := BehaviourCells(&st.Map)
	n := t.A
	if discrete {
		n = S * t.A
	}
	out := make([]float64, n)
	if st.mask != nil && st.mask[h-1][k].silent {
		return out
	}
	s := &t.Steps[h-1]
	for j := int(s.SiteStart[k]); j < int(s.SiteStart[k+1]); j++ {
		wt := 1.0
		if s.Weight != nil {
			wt = s.Weight[j]
		}
		c := int(s.Action[j])
		if discrete {
			c += behaviourCell(&st.Map, s.State[j*t.W:(j+1)*t.W]) * t.A
		}
		out[c] += wt
	}
	if st.mask != nil && st.Map.Kind == features.Binned {
		// A binned map's counts per (cell, action) are its features'
		// counts (feature cell*A+a): released as the features are.
		if drop := st.mask[h-1][k].drop; drop != nil {
			for c := range out {
				if drop[c] {
					out[c] = 0
				}
			}
		}
	} else if st.mask != nil {
		if leaf := st.mask[h-1][k].leaf; leaf != nil {
			for c := range out {
				if leaf[c] {
					out[c] = 0
				}
			}
		}
	}
	return out
}

// BehaviourTable returns one step's behaviour fallback from action counts
// summed over sites in site order (see [Stats.BehaviourCounts]) and the
// step's counts per action (the cells' summed in cell order): for maps
// with [BehaviourCells] (S cells, discrete true) the most frequent action
// per cell, ties to the lowest, a cell without counts taking the step's
// most frequent action; the step's most frequent action for other maps.
// A step without any count takes the most frequent action over all steps
// once every step is counted ([CompleteBehaviour]); its table here holds
// action 0.
func BehaviourTable(counts []float64, S, A int, discrete bool) ([]int32, []float64) {
	if !discrete {
		return []int32{int32(argmax(counts))}, slices.Clone(counts)
	}
	all := make([]float64, A)
	for s := 0; s < S; s++ {
		for a := 0; a < A; a++ {
			all[a] += counts[s*A+a]
		}
	}
	return behaviourTable(all, counts, S, A), all
}

// behaviourDisclosed is [Solver.behaviourStep] under disclosure control:
// step h's table from the sites' released counts, summed in site order.
func (st *Stats) behaviourDisclosed(h int) ([]int32, []float64) {
	t := st.Table
	S, discrete := BehaviourCells(&st.Map)
	var sum []float64
	for k := range t.Sites {
		c := st.BehaviourCounts(h, k)
		if sum == nil {
			sum = make([]float64, len(c))
		}
		for i, v := range c {
			sum[i] += v
		}
	}
	return BehaviourTable(sum, S, t.A, discrete)
}
