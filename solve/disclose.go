package solve

import (
	"context"
	"fmt"

	"github.com/grmdp/grmdp/internal/workers"
	"github.com/grmdp/grmdp/traj"

	"golang.org/x/sync/errgroup"

	"github.com/grmdp/grmdp/features"
)

// Disclosure is the disclosure control applied to the statistics of every
// (site, step) cell, the same centrally (grmdp solve --min-count) and at a
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
	// silent: the cell has fewer than MinRows rows and contributes nothing.
	silent bool
	// drop[i]: feature i is suppressed (nil: none is).
	drop []bool
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

// cellMask decides what dc suppresses at (site k, step h).
func (st *Stats) cellMask(h, k int) cellMask {
	s := &st.Table.Steps[h-1]
	rows := int(s.SiteStart[k+1] - s.SiteStart[k])
	if rows < st.disclosure.MinRows {
		return cellMask{silent: true}
	}
	var drop []bool
	counts := st.rawCounts(h, k)
	for i, c := range counts {
		if c < int64(st.disclosure.MinCount) {
			if drop == nil {
				drop = make([]bool, len(counts))
			}
			drop[i] = true
		}
	}
	return cellMask{drop: drop}
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
// that the behaviour fallback is chosen from: per (discrete state, action),
// index s*A+a, for discrete maps, or per action otherwise. Under disclosure
// control a count from fewer than MinCount rows reads 0, and a silent cell
// counts nothing.
func (st *Stats) BehaviourCounts(h, k int) []float64 {
	t := st.Table
	S, discrete := st.Map.Discrete()
	n := t.A
	if discrete {
		n = S * t.A
	}
	out := make([]float64, n)
	if st.mask != nil && st.mask[h-1][k].silent {
		return out
	}
	rows := make([]int64, n)
	s := &t.Steps[h-1]
	for j := int(s.SiteStart[k]); j < int(s.SiteStart[k+1]); j++ {
		wt := 1.0
		if s.Weight != nil {
			wt = s.Weight[j]
		}
		c := int(s.Action[j])
		if discrete {
			c += int(s.State[j*t.W]) * t.A
		}
		out[c] += wt
		rows[c]++
	}
	for c := range out {
		if rows[c] < int64(st.disclosure.MinCount) {
			out[c] = 0
		}
	}
	return out
}

// BehaviourTable returns one step's behaviour fallback from action counts
// summed over sites in site order (see [Stats.BehaviourCounts]): the most
// frequent action per discrete state, ties to the lowest, a state without
// counts taking the step's most frequent action; or the step's most
// frequent action for continuous maps.
func BehaviourTable(counts []float64, S, A int, discrete bool) []int32 {
	if !discrete {
		return []int32{int32(argmax(counts))}
	}
	all := make([]float64, A)
	for s := 0; s < S; s++ {
		for a := 0; a < A; a++ {
			all[a] += counts[s*A+a]
		}
	}
	return behaviourTable(all, counts, S, A)
}

// behaviourDisclosed is [Solver.behaviour] under disclosure control: each
// step's table from the sites' released counts, summed in site order.
func (sv *Solver) behaviourDisclosed() [][]int32 {
	st := sv.st
	t := st.Table
	S, discrete := st.Map.Discrete()
	out := make([][]int32, t.H)
	for h := 1; h <= t.H; h++ {
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
		out[h-1] = BehaviourTable(sum, S, t.A, discrete)
	}
	return out
}
