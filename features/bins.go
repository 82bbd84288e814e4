package features

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	quantile7 "github.com/grmdp/grmdp/internal/quantile"
)

// Bins are one numeric column's cut points: the binned map cuts the column
// at them, the soft-binned map centres its triangular memberships on them.
type Bins struct {
	Column string `json:"column"`
	// Cuts ascend strictly and are finite.
	Cuts []float64 `json:"cuts"`
	// Quantiles, when positive, says that the cut points were asked for as
	// the data's K-quantiles (COL:qK, see [QuantileCuts]); Cuts then hold
	// the values computed from the data, which every later use of the map
	// reuses.
	Quantiles int `json:"quantiles,omitempty"`
}

// ParseBins reads one --bins value: "COL:c1,c2,..." (cut points, strictly
// ascending) or "COL:qK" (K quantile bins, K >= 2, resolved from the data
// by the caller with [QuantileCuts]). The column name is everything before
// the last colon.
func ParseBins(spec string) (Bins, error) {
	b, err := parseBins(spec)
	if err != nil {
		return Bins{}, fmt.Errorf("features: bins %q: %v", spec, err)
	}
	return b, nil
}

// parseBins is [ParseBins] with errors that do not name spec.
func parseBins(spec string) (Bins, error) {
	i := strings.LastIndex(spec, ":")
	if i <= 0 || i == len(spec)-1 {
		return Bins{}, errors.New("want COL:c1,c2,... or COL:qK")
	}
	b := Bins{Column: strings.TrimSpace(spec[:i])}
	rest := strings.TrimSpace(spec[i+1:])
	if b.Column == "" {
		return Bins{}, errors.New("empty column name")
	}
	if rest[0] == 'q' || rest[0] == 'Q' {
		k, err := strconv.Atoi(rest[1:])
		if err != nil || k < 2 {
			return Bins{}, errors.New("quantile bins are qK with an integer K >= 2")
		}
		b.Quantiles = k
		return b, nil
	}
	for _, f := range strings.Split(rest, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return Bins{}, fmt.Errorf("cut point %q is not a finite number", f)
		}
		b.Cuts = append(b.Cuts, v)
	}
	return b, b.check()
}

// String returns the spec the bins were asked for: "COL:qK" for quantile
// bins, "COL:c1,c2,..." otherwise.
func (b Bins) String() string {
	if b.Quantiles > 0 {
		return fmt.Sprintf("%s:q%d", b.Column, b.Quantiles)
	}
	parts := make([]string, len(b.Cuts))
	for i, c := range b.Cuts {
		parts[i] = strconv.FormatFloat(c, 'g', -1, 64)
	}
	return b.Column + ":" + strings.Join(parts, ",")
}

func (b Bins) check() error {
	for i, c := range b.Cuts {
		if math.IsNaN(c) || math.IsInf(c, 0) {
			return fmt.Errorf("cut point %v is not finite", c)
		}
		if i > 0 && !(c > b.Cuts[i-1]) {
			return fmt.Errorf("cut points must ascend strictly, but %g follows %g", c, b.Cuts[i-1])
		}
	}
	return nil
}

// CheckBins checks the cut points of a binned or soft-binned map: every
// column has strictly ascending finite cut points, at least one for binned
// (two bins) and two for soft-binned (one centre gives a constant feature).
func CheckBins(k Kind, bins []Bins) error {
	if err := checkBins(k, bins); err != nil {
		return fmt.Errorf("features: %w", err)
	}
	return nil
}

// checkBins is [CheckBins] with errors that do not name the package.
func checkBins(k Kind, bins []Bins) error {
	if len(bins) == 0 {
		return fmt.Errorf("the %s map needs at least one column's bins", k)
	}
	need := 1
	if k == SoftBinned {
		need = 2
	}
	seen := map[string]bool{}
	for _, b := range bins {
		if seen[b.Column] {
			return fmt.Errorf("bins name column %q twice", b.Column)
		}
		seen[b.Column] = true
		if err := b.check(); err != nil {
			return fmt.Errorf("bins of %s: %v", b.Column, err)
		}
		if len(b.Cuts) < need {
			what := "cut point (two bins)"
			if k == SoftBinned {
				what = "centres (one centre gives every row the same feature)"
			}
			return fmt.Errorf("bins of %s: %d distinct cut points, the %s map needs at least %d %s", b.Column, len(b.Cuts), k, need, what)
		}
	}
	return nil
}

// QuantileCuts returns the K-1 cut points of K quantile bins of values: the
// sample quantiles at probabilities 1/K, 2/K, ..., (K-1)/K by linear
// interpolation between order statistics (Hyndman and Fan's type 7, the
// default of R's quantile, NumPy's quantile and pandas; DuckDB's
// quantile_cont): with x sorted ascending and n values, Q(p) =
// x[j] + g (x[j+1] - x[j]) where j = floor((n-1) p) (0-based) and
// g = (n-1) p - j. Cut points that coincide (ties in the data) are kept
// once, so the result may have fewer than K-1 points; it is nil for no
// values. values is sorted in place and must hold no NaN. Cut points
// interpolate between order statistics, so a k above the number of
// distinct values yields up to k-1 points the data do not separate:
// callers refuse such a k (dataset does, naming the column).
func QuantileCuts(values []float64, k int) []float64 {
	n := len(values)
	if n == 0 || k < 2 {
		return nil
	}
	slices.Sort(values)
	var cuts []float64
	for i := 1; i < k; i++ {
		h := float64(n-1) * float64(i) / float64(k)
		j := int(math.Floor(h))
		q := values[j]
		if j+1 < n {
			q += (h - float64(j)) * (values[j+1] - values[j])
		}
		if len(cuts) == 0 || q > cuts[len(cuts)-1] {
			cuts = append(cuts, q)
		}
	}
	return cuts
}

// Cells returns the number of cells of a binned map: the product over the
// columns of their number of bins, len(Cuts)+1.
func (m *Map) Cells() int {
	c := 1
	for _, b := range m.Bins {
		c *= len(b.Cuts) + 1
	}
	return c
}

// centres returns the soft-binned map's d per action: the sum over the
// columns of their number of centres.
func (m *Map) centres() int {
	c := 0
	for _, b := range m.Bins {
		c += len(b.Cuts)
	}
	return c
}

// bin returns the bin of value v among cuts c_1 < ... < c_k: bin 0 is
// v <= c_1, bin i is c_i < v <= c_{i+1}, bin k is v > c_k. A value equal
// to a cut point falls in the bin below it (intervals closed on the right,
// as R's cut and pandas.cut do by default).
func bin(cuts []float64, v float64) int {
	return sort.SearchFloat64s(cuts, v)
}

// Cell returns the binned map's cell of state: the bins of the columns
// numbered row-major in the order of Bins (the last column varies
// fastest): cell = (...(b_1 n_2 + b_2) n_3 + ...) + b_p, where b_j is
// column j's bin (a value equal to a cut point falls in the bin below
// it) and n_j its number of bins.
func (m *Map) Cell(state []float64) int {
	cell := 0
	for j, b := range m.Bins {
		cell = cell*(len(b.Cuts)+1) + bin(b.Cuts, state[j])
	}
	return cell
}

// CellBins returns the bin of each column in cell, the inverse of
// [Map.Cell].
func (m *Map) CellBins(cell int) []int {
	out := make([]int, len(m.Bins))
	for j := len(m.Bins) - 1; j >= 0; j-- {
		n := len(m.Bins[j].Cuts) + 1
		out[j] = cell % n
		cell /= n
	}
	return out
}

// BinLabel names bin i of b for people: "lactate<=2", "2<lactate<=4",
// "lactate>4".
func (b Bins) BinLabel(i int) string {
	f := func(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }
	switch {
	case i == 0:
		return b.Column + "<=" + f(b.Cuts[0])
	case i == len(b.Cuts):
		return b.Column + ">" + f(b.Cuts[i-1])
	}
	return f(b.Cuts[i-1]) + "<" + b.Column + "<=" + f(b.Cuts[i])
}

// membership writes the nonzero triangular memberships of v in centres
// c_1 < ... < c_k to idx (offset by off) and val, each scaled by scale,
// and returns their count (1 or 2). At or below c_1 the membership of c_1
// is 1, at or above c_k that of c_k; strictly between c_i and c_{i+1}
// they are 1-t and t with t = (v - c_i)/(c_{i+1} - c_i), so they sum to 1
// and move continuously with v.
func membership(cuts []float64, v float64, off int, scale float64, idx []int32, val []float64) int {
	k := len(cuts)
	if k == 0 { // not a valid map (CheckBins); no membership rather than a panic
		return 0
	}
	if v <= cuts[0] {
		idx[0], val[0] = int32(off), scale
		return 1
	}
	if v >= cuts[k-1] {
		idx[0], val[0] = int32(off+k-1), scale
		return 1
	}
	i := sort.SearchFloat64s(cuts, v) // cuts[i-1] < v <= cuts[i]
	if cuts[i] == v {
		idx[0], val[0] = int32(off+i), scale
		return 1
	}
	t := (v - cuts[i-1]) / (cuts[i] - cuts[i-1])
	n := 0
	if lo := (1 - t) * scale; lo != 0 {
		idx[n], val[n] = int32(off+i-1), lo
		n++
	}
	if hi := t * scale; hi != 0 {
		idx[n], val[n] = int32(off+i), hi
		n++
	}
	return n
}

// softPhi is [Map.Phi] for the soft-binned map: column j's memberships sit
// at coordinates a*K + (centres of the columns before j) + i, each divided
// by the number of columns, so phi sums to 1.
func (m *Map) softPhi(state []float64, a int, idx []int32, val []float64) int {
	K := m.centres()
	off := a * K
	scale := 1 / float64(len(m.Bins))
	n := 0
	for j, b := range m.Bins {
		n += membership(b.Cuts, state[j], off, scale, idx[n:], val[n:])
		off += len(b.Cuts)
	}
	return n
}

// softDot is [Map.Dot] for the soft-binned map: the sum of phi's nonzeros
// times coef, in the order softPhi gives them.
func (m *Map) softDot(state []float64, a int, coef []float64) float64 {
	var ib [16]int32
	var vb [16]float64
	idx, val := ib[:], vb[:]
	if nz := m.MaxNonzeros(); nz > len(ib) {
		idx, val = make([]int32, nz), make([]float64, nz)
	}
	n := m.softPhi(state, a, idx, val)
	dot := 0.0
	for x := 0; x < n; x++ {
		dot += val[x] * coef[idx[x]]
	}
	return dot
}

// Thresholds of [Scales.Separate].
const (
	// magnitudeRatio: the columns' typical magnitudes differ by more than
	// this factor.
	magnitudeRatio = 10
	// sumRatio: the 90th percentile of the row sums exceeds the 10th by
	// more than this factor.
	sumRatio = 10
)

// Scales summarises action-block state columns for [Scales.Separate].
type Scales struct {
	Columns []string
	// Typical holds each column's typical magnitude: the median of its
	// nonzero values (NaN when the column is all zero).
	Typical []float64
	// SumP10 and SumP90 are the 10th and 90th percentiles of the row sums.
	SumP10, SumP90 float64
}

// MeasureScales summarises rows of p values each (row-major; rows is not
// modified). Medians and percentiles are [QuantileCuts]' type 7.
func MeasureScales(columns []string, rows []float64) Scales {
	p := len(columns)
	s := Scales{Columns: columns, Typical: make([]float64, p)}
	n := 0
	if p > 0 {
		n = len(rows) / p
	}
	col := make([]float64, 0, n)
	for j := 0; j < p; j++ {
		col = col[:0]
		for i := 0; i < n; i++ {
			if v := rows[i*p+j]; v != 0 {
				col = append(col, v)
			}
		}
		s.Typical[j] = math.NaN()
		if len(col) > 0 {
			s.Typical[j] = quantile(col, 0.5)
		}
	}
	sums := make([]float64, n)
	for i := range sums {
		for _, v := range rows[i*p : (i+1)*p] {
			sums[i] += v
		}
	}
	if n > 0 {
		s.SumP10, s.SumP90 = quantile(sums, 0.1), quantile(sums, 0.9)
	}
	return s
}

// quantile returns the type 7 quantile of values at probability q, sorting
// values in place.
func quantile(values []float64, q float64) float64 {
	slices.Sort(values)
	return quantile7.Type7(values, q)
}

// Separate reports why the columns look like separate measurements rather
// than shares of one whole, or "" when they do not: when the largest
// typical magnitude exceeds the smallest (over columns not all zero) by
// more than magnitudeRatio, or when the 90th percentile of the row sums
// exceeds the 10th by more than sumRatio. Shares of a whole have
// comparable magnitudes and nearly constant row sums; dividing separate
// measurements by their sum makes each one's feature depend on the others'
// units.
func (s Scales) Separate() string {
	lo, hi := -1, -1
	for j, v := range s.Typical {
		if math.IsNaN(v) {
			continue
		}
		if lo < 0 || v < s.Typical[lo] {
			lo = j
		}
		if hi < 0 || v > s.Typical[hi] {
			hi = j
		}
	}
	g := func(x float64) string { return strconv.FormatFloat(x, 'g', 3, 64) }
	if lo >= 0 && s.Typical[hi] > magnitudeRatio*s.Typical[lo] {
		return fmt.Sprintf("their typical magnitudes (median of the nonzero values) differ by more than %dx: %s %s, %s %s",
			magnitudeRatio, s.Columns[hi], g(s.Typical[hi]), s.Columns[lo], g(s.Typical[lo]))
	}
	if s.SumP90 > sumRatio*s.SumP10 {
		return fmt.Sprintf("their row sums vary by more than %dx (10th percentile %s, 90th %s)", sumRatio, g(s.SumP10), g(s.SumP90))
	}
	return ""
}

// Unresolved reports whether some of bins are quantiles whose cut points
// are still to be computed from the data.
func Unresolved(bins []Bins) bool {
	for _, b := range bins {
		if b.Cuts == nil {
			return true
		}
	}
	return false
}
