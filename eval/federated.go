package eval

// The parts of an evaluation that a site computes from its own rows and a
// coordinator folds from the sites' sums (package federate): the robust
// identification bounds' recursion, the robust support of indicator maps,
// and each site's own results. Each is the computation of [FromData] at
// one site's rows, in the same order, so that its sums are the central
// ones.

import (
	"context"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// IndicatorMap reports whether m's features are indicators, so that the
// identification bounds and the count-based support apply.
func IndicatorMap(m *features.Map) bool { return indicatorMap(m) }

// cellOf returns the cell (feature index) of phi(state, a) under an
// indicator map.
func cellOf(m *features.Map, state []float64, a int, idx []int32, val []float64) int {
	m.Phi(state, a, idx, val)
	return int(idx[0])
}

// SiteBoundSums returns what t's rows (one site's) contribute to step h of
// the robust identification bounds (see boundsPlan.compute): per cell, the
// weighted number of the step's rows and the weighted sums of r +
// Vlo_{h+1}(s') and r + Vhi_{h+1}(s'), with V_{h+1}(s') = qlo[i] and
// qhi[i] at the cell i of the policy's action at s' (qlo and qhi are the
// robust bounds of Q at step h+1; unused at h = H). The sums run over the
// rows in order, as the central ones do.
func SiteBoundSums(t *traj.Table, m *features.Map, p *solve.Policy, h int, qlo, qhi []float64) (n, lo, hi []float64) {
	d, W := m.Dim(), m.Width()
	n, lo, hi = make([]float64, d), make([]float64, d), make([]float64, d)
	q := make([]float64, p.A)
	idx, val := make([]int32, 1), make([]float64, 1)
	s := &t.Steps[h-1]
	for j := 0; j < s.Len(); j++ {
		w := weight(s, j)
		if w == 0 {
			continue
		}
		c := cellOf(m, s.State[j*W:(j+1)*W], int(s.Action[j]), idx, val)
		n[c] += w
		vlo, vhi := s.Reward[j], s.Reward[j]
		if h < t.H && s.Next[j] >= 0 {
			nx := &t.Steps[h]
			state := nx.State[int(s.Next[j])*W : (int(s.Next[j])+1)*W]
			a, _, _ := p.Act(h+1, state, q)
			i := cellOf(m, state, a, idx, val)
			vlo += qlo[i]
			vhi += qhi[i]
		}
		lo[c] += w * vlo
		hi[c] += w * vhi
	}
	return n, lo, hi
}

// RobustBounds returns the robust bounds of Q at step h per cell from the
// sites' sums of [SiteBoundSums] in site order, as [FromData] forms them
// (see robustCell: lambda is the evaluation's ridge; a cell without data
// is worth what the return range g allows, the zero Range meaning [0, H
// RewardMax]), and whether every site observed each cell.
func RobustBounds(H, h int, g Range, lambda float64, n, lo, hi [][]float64) (qlo, qhi []float64, everywhere []bool) {
	d := len(n[0])
	rng := stepRange(g, H)
	qlo, qhi, everywhere = make([]float64, d), make([]float64, d), make([]bool, d)
	for i := 0; i < d; i++ {
		all := true
		for k := range n {
			all = all && n[k][i] > 0
		}
		qlo[i], qhi[i] = robustCell(len(n), func(k int) (float64, float64, float64) { return n[k][i], lo[k][i], hi[k][i] }, lambda, rng.lo[h-1], rng.hi[h-1])
		everywhere[i] = all
	}
	return qlo, qhi, everywhere
}

// SiteBoundsFinal returns what t's rows (one site's) contribute to the
// robust bounds and support: the weighted sums over its step-1 rows of
// Vlo_1 and Vhi_1 (qlo1 and qhi1 at the policy's cell), and the weighted
// number of its visits (rows of every step) and of those whose policy
// cell every site observed at that step (everywhere[h-1]); rows[0] and
// rows[1] are the unweighted numbers of those visits (for disclosure
// control, which counts rows).
func SiteBoundsFinal(t *traj.Table, m *features.Map, p *solve.Policy, qlo1, qhi1 []float64, everywhere [][]bool) (lo, hi, supported, visits float64, rows [2]float64) {
	W := m.Width()
	q := make([]float64, p.A)
	idx, val := make([]int32, 1), make([]float64, 1)
	for h := 1; h <= t.H; h++ {
		s := &t.Steps[h-1]
		for j := 0; j < s.Len(); j++ {
			state := s.State[j*W : (j+1)*W]
			a, _, _ := p.Act(h, state, q)
			i := cellOf(m, state, a, idx, val)
			w := weight(s, j)
			visits += w
			rows[1]++
			if everywhere[h-1][i] {
				supported += w
				rows[0]++
			}
			if h == 1 {
				lo += w * qlo1[i]
				hi += w * qhi1[i]
			}
		}
	}
	return lo, hi, supported, visits, rows
}

// SiteOwn returns what one site's own rows (the solver's, one site) say
// of p: its own value (fitted-Q evaluation on its data alone), its
// support, its own identification bounds (indicator maps; NaN otherwise)
// and its observed care, as [FromData] computes them for that site.
func SiteOwn(ctx context.Context, sv *solve.Solver, p *solve.Policy, settings solve.Settings) (SiteValue, ObservedValue, error) {
	rep, err := FromData(ctx, sv, p, settings, Options{})
	if err != nil {
		return SiteValue{}, ObservedValue{}, err
	}
	return rep.Sites[0], rep.Observed[0], nil
}

// DeltaSummary returns sum_h max_m Delta_{h,m} (cells in step-major
// order over the G groups) and the paper's yardstick for the groups with
// the sites' trajectory counts, as [Delta] does.
func DeltaSummary(cells []DeltaValue, H int, groups [][]int, trajectories []int) (sum, yardstick float64) {
	return sumOfWorst(cells, H, len(groups)), deltaYardstick(groups, trajectories)
}

// Flag sets the report's identified flags and warnings, as [FromData]
// does.
func (r *Report) Flag() { r.flag() }
