package eval

import (
	"math"

	"github.com/grmdp/grmdp/traj"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/solve"
)

// RewardMax is the reward's upper bound that the identification bounds
// assume: a cell without data is worth at most (H-h+1) RewardMax from
// step h on. grmdp's rewards lie in [0, 1].
const RewardMax = 1.0

// IdentifiedShare is the widest bound, as a share of the value range
// [0, H], at which a value still counts as identified: a value whose
// identification bounds are wider than IdentifiedShare*H depends on cells
// the data never observed more than on the data, and is flagged.
const IdentifiedShare = 0.1

// indicatorMap reports whether every phi(s,a) of m is a standard basis
// vector (tabular, indicator, binned: a binned map's cell and action), so
// that Q_h(s,a) is one coefficient and a cell is either observed at a site
// and step or not.
func indicatorMap(m *features.Map) bool {
	return m.Kind == features.Tabular || m.Kind == features.Indicator || m.Kind == features.Binned
}

// boundsPlan holds, for an indicator map, the cell (feature index) of
// every row under the policy's action and under the action taken.
type boundsPlan struct {
	t       *traj.Table
	d       int
	cellPi  [][]int32 // [h-1][row]: index of phi(s, pi(h,s))
	cellObs [][]int32 // [h-1][row]: index of phi(s, a)
	// top, when positive, caps what a cell without data is worth: the
	// return range's upper end (Options.ReturnRange).
	top float64
}

func newBoundsPlan(t *traj.Table, m *features.Map, p *solve.Policy) *boundsPlan {
	if !indicatorMap(m) {
		return nil
	}
	bp := &boundsPlan{t: t, d: m.Dim(), cellPi: make([][]int32, t.H), cellObs: make([][]int32, t.H)}
	W := m.Width()
	q := make([]float64, p.A)
	idx, val := make([]int32, 1), make([]float64, 1)
	for h := 1; h <= t.H; h++ {
		s := &t.Steps[h-1]
		n := s.Len()
		bp.cellPi[h-1], bp.cellObs[h-1] = make([]int32, n), make([]int32, n)
		for j := 0; j < n; j++ {
			state := s.State[j*W : (j+1)*W]
			m.Phi(state, int(s.Action[j]), idx, val)
			bp.cellObs[h-1][j] = idx[0]
			a, _, _ := p.Act(h, state, q)
			m.Phi(state, a, idx, val)
			bp.cellPi[h-1][j] = idx[0]
		}
	}
	return bp
}

// boundsResult holds identification bounds and support.
type boundsResult struct {
	siteLo, siteHi, siteSupport []float64
	lo, hi, support             float64
}

// compute returns the bounds on the plan's table, its rows weighted by
// their own weights or, with counts, by replicate b's (a row of trajectory
// i counts counts[i*B+b] times its weight; see solve.Replicates). Rows of
// weight 0 are not observations.
//
// At step h, cell i and site k with weighted count n > 0 the bounds of
// Q^k_h(i) are the weighted means of r + Vlo_{h+1}(s') and
// r + Vhi_{h+1}(s') over the site's rows in the cell (0 after the
// episode ends); with n = 0 they are 0 and top = (H-h+1) RewardMax (or
// the return range's upper end, bp.top, when smaller). The robust
// lower bound is the minimum over all sites (unobserved counting 0), the
// robust upper bound the minimum over the sites that observed the cell
// (top if none did). V(s) = Q(s, pi(h,s)).
func (bp *boundsPlan) compute(counts []uint8, B, b int) boundsResult {
	bt := bp.t
	K, d, H := len(bt.Sites), bp.d, bt.H
	weight := func(s *traj.Step, j int) float64 {
		w := weight(s, j)
		if counts != nil {
			w *= float64(counts[int(s.Traj[j])*B+b])
		}
		return w
	}
	res := boundsResult{siteLo: make([]float64, K), siteHi: make([]float64, K), siteSupport: make([]float64, K)}
	visits, supported := make([]float64, K), make([]float64, K)
	robVisits, robSupported := 0.0, 0.0
	n := make([]float64, K*d)
	sum := make([][]float64, 4) // site lo, site hi, robust lo, robust hi
	for i := range sum {
		sum[i] = make([]float64, K*d)
	}
	q := make([][]float64, 4) // per site (K*d) for the site recursions, d for robust
	q[0], q[1] = make([]float64, K*d), make([]float64, K*d)
	q[2], q[3] = make([]float64, d), make([]float64, d)
	var next [4][]float64 // V_{h+1} at step h+1's rows
	for h := H; h >= 1; h-- {
		s := &bt.Steps[h-1]
		clear(n)
		for i := range sum {
			clear(sum[i])
		}
		for k := 0; k < K; k++ {
			for j := int(s.SiteStart[k]); j < int(s.SiteStart[k+1]); j++ {
				w := weight(s, j)
				if w == 0 {
					continue
				}
				c := k*d + int(bp.cellObs[h-1][j])
				n[c] += w
				for x := range sum {
					v := s.Reward[j]
					if h < H && s.Next[j] >= 0 {
						v += next[x][s.Next[j]]
					}
					sum[x][c] += w * v
				}
			}
		}
		top := float64(H-h+1) * RewardMax
		if bp.top > 0 {
			top = min(top, bp.top)
		}
		for c := range n {
			if n[c] > 0 {
				q[0][c], q[1][c] = sum[0][c]/n[c], sum[1][c]/n[c]
			} else {
				q[0][c], q[1][c] = 0, top
			}
		}
		for i := 0; i < d; i++ {
			lo, hi := math.Inf(1), math.Inf(1)
			for k := 0; k < K; k++ {
				c := k*d + i
				if n[c] > 0 {
					lo, hi = min(lo, sum[2][c]/n[c]), min(hi, sum[3][c]/n[c])
				} else {
					lo = min(lo, 0)
				}
			}
			if math.IsInf(hi, 1) {
				hi = top
			}
			q[2][i], q[3][i] = lo, hi
		}
		var cur [4][]float64
		for x := range cur {
			cur[x] = make([]float64, s.Len())
		}
		for k := 0; k < K; k++ {
			for j := int(s.SiteStart[k]); j < int(s.SiteStart[k+1]); j++ {
				i := int(bp.cellPi[h-1][j])
				cur[0][j], cur[1][j] = q[0][k*d+i], q[1][k*d+i]
				cur[2][j], cur[3][j] = q[2][i], q[3][i]
				w := weight(s, j)
				visits[k] += w
				robVisits += w
				if n[k*d+i] > 0 {
					supported[k] += w
				}
				all := true
				for kk := 0; kk < K && all; kk++ {
					all = n[kk*d+i] > 0
				}
				if all {
					robSupported += w
				}
			}
		}
		next = cur
	}
	s1 := &bt.Steps[0]
	tot := 0.0
	for k := 0; k < K; k++ {
		sk := 0.0
		for j := int(s1.SiteStart[k]); j < int(s1.SiteStart[k+1]); j++ {
			w := weight(s1, j)
			sk += w
			res.siteLo[k] += w * next[0][j]
			res.siteHi[k] += w * next[1][j]
			res.lo += w * next[2][j]
			res.hi += w * next[3][j]
		}
		res.siteLo[k] /= sk
		res.siteHi[k] /= sk
		tot += sk
		res.siteSupport[k] = supported[k] / visits[k]
	}
	res.lo /= tot
	res.hi /= tot
	res.support = robSupported / robVisits
	return res
}

func weight(s *traj.Step, j int) float64 {
	if s.Weight == nil {
		return 1
	}
	return s.Weight[j]
}

// observedReturns returns each site's mean realised return: the weighted
// sum of its rewards over all steps divided by the weighted number of its
// trajectories (its step-1 rows), i.e. the mean over trajectories of the
// sum of rewards, censored trajectories excluded (see returnWeight). It is
// an unbiased estimate of the behaviour's value when censoring is
// independent of the outcome.
func observedReturns(t *traj.Table) []float64 {
	K := len(t.Sites)
	out := make([]float64, K)
	for h := range t.Steps {
		s := &t.Steps[h]
		for k := 0; k < K; k++ {
			for j := int(s.SiteStart[k]); j < int(s.SiteStart[k+1]); j++ {
				out[k] += returnWeight(t, s, j) * s.Reward[j]
			}
		}
	}
	s1 := &t.Steps[0]
	for k := 0; k < K; k++ {
		n := 0.0
		for j := int(s1.SiteStart[k]); j < int(s1.SiteStart[k+1]); j++ {
			n += returnWeight(t, s1, j)
		}
		out[k] /= n
	}
	return out
}

// ObservedCare returns each site's observed care (mean realised return)
// on t with a basic bootstrap interval from the given number of
// replicates (0: no intervals), resampling trajectories within sites as
// [FromData] does, with the same Poisson counts of (seed, replicate,
// trajectory), so the result does not depend on workers.
func ObservedCare(t *traj.Table, bootstrap int, seed uint64, level float64) []ObservedValue {
	if level == 0 {
		level = 0.95
	}
	obs := observedReturns(t)
	var reps [][]float64
	if bootstrap > 0 {
		reps = observedReplicates(t, poissonCounts(t, seed, bootstrap, 0), bootstrap)
	}
	out := make([]ObservedValue, len(obs))
	x := make([]float64, bootstrap)
	cens := t.CensoredCount()
	for k := range obs {
		out[k] = ObservedValue{Site: t.Sites[k], Value: obs[k], CILow: math.NaN(), CIHigh: math.NaN()}
		if cens != nil {
			out[k].Censored = cens[k]
		}
		if bootstrap > 0 {
			for b := range reps {
				x[b] = reps[b][k]
			}
			out[k].CILow, out[k].CIHigh, _ = basicCI(obs[k], x, level)
		}
	}
	return out
}
