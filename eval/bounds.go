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

// BoundsLevel is the confidence level of the robust upper bound's cell
// limits: at each step and cell, the minimum over the sites of their upper
// confidence limits is at least the cell's robust value with probability
// at least BoundsLevel (each site's limit at level 1 - (1-BoundsLevel)/K,
// Bonferroni over the K sites of the minimum). See the package
// documentation.
const BoundsLevel = 0.95

// valueRange is the range of the value from each step on: from step h, an
// episode's remaining return lies in [lo[h-1], hi[h-1]]. Cells without
// data count as its ends; the upper confidence limits take it as the
// range of a row's r + V_{h+1}(s').
type valueRange struct {
	lo, hi []float64
}

// stepRange is the value range a return range g (the zero Range: [0, H
// RewardMax]) gives over H steps: from step h on, [0, min((H-h+1)
// RewardMax, g.Hi)], since rewards lie in [0, RewardMax] and the rest of
// an episode's return is at most its total.
func stepRange(g Range, H int) valueRange {
	g = returnRange(g, H)
	r := valueRange{lo: make([]float64, H), hi: make([]float64, H)}
	for h := 1; h <= H; h++ {
		r.hi[h-1] = min(float64(H-h+1)*RewardMax, g.Hi)
	}
	return r
}

// indicatorMap reports whether every phi(s,a) of m is a standard basis
// vector (tabular, indicator, binned: a binned map's cell and action), so
// that Q_h(s,a) is one coefficient and a cell is either observed at a site
// and step or not.
func indicatorMap(m *features.Map) bool {
	return m.Kind == features.Tabular || m.Kind == features.Indicator || m.Kind == features.Binned
}

// boundsPlan holds, for an indicator map, the cell (feature index) of
// every row under the policy's action and under the action taken, and
// the cells disclosure control withholds.
type boundsPlan struct {
	t *traj.Table
	d int
	// lambda is the ridge of the evaluation's regressions: the lower
	// bound's cell means divide by n + lambda, as fitted-Q's do.
	lambda  float64
	rng     valueRange
	cellPi  [][]int32 // [h-1][row]: index of phi(s, pi(h,s))
	cellObs [][]int32 // [h-1][row]: index of phi(s, a)
	// hidden[h-1][k*d+i]: disclosure control withholds cell i at site k
	// and step h, whose rows are then not observations (nil: nothing is
	// withheld).
	hidden [][]bool
}

// newBoundsPlan returns the bounds' plan of p on st's table and map (nil
// for a map whose features are not indicators), with the cells st's
// disclosure control withholds (a feature whose released count is 0)
// treated as never observed, as every other statistic of st treats them;
// a cell without data is worth what the return range g allows
// ([stepRange]). The policy decides on on's states when on is not nil
// (see [Options].DecideOn): the cells are the evaluation map's, the
// decisions the policy's own.
func newBoundsPlan(st *solve.Stats, p *solve.Policy, on *traj.Table, lambda float64, g Range) *boundsPlan {
	t, m := st.Table, &st.Map
	if !indicatorMap(m) {
		return nil
	}
	bp := &boundsPlan{t: t, d: m.Dim(), lambda: lambda, rng: stepRange(g, t.H), cellPi: make([][]int32, t.H), cellObs: make([][]int32, t.H)}
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
			a, _, _ := p.Act(h, decisionState(on, h, j, state), q)
			m.Phi(state, a, idx, val)
			bp.cellPi[h-1][j] = idx[0]
		}
	}
	if st.Disclosure().Active() {
		K := len(t.Sites)
		bp.hidden = make([][]bool, t.H)
		for h := 1; h <= t.H; h++ {
			bp.hidden[h-1] = make([]bool, K*bp.d)
			for k := 0; k < K; k++ {
				for i, c := range st.Counts(h, k) {
					bp.hidden[h-1][k*bp.d+i] = c == 0
				}
			}
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
// weight 0 are not observations, nor are the rows of a cell disclosure
// control withholds.
//
// At step h, cell i and site k with weighted count n > 0 the bounds of
// Q^k_h(i) are the means of r + Vlo_{h+1}(s') (their weighted sum divided
// by n + lambda) and of r + Vhi_{h+1}(s') over the site's rows in the cell
// (0 after the episode ends), each moved outward by boundsSlack of its
// size; with n = 0 they are the ends of the value range from step h (the
// plan's, from the report's return range). The robust bounds are
// [robustCell]'s. V(s) = Q(s, pi(h,s)).
func (bp *boundsPlan) compute(counts []uint8, B, b int) boundsResult {
	bs := newBoundsSweep(bp, counts, B, b)
	for h := bp.t.H; h >= 1; h-- {
		bs.sumStep(h)
		bs.cellBounds(h)
		bs.valueRows(h)
	}
	return bs.result()
}

// boundsSweep is compute's working state: the weighted counts and sums of
// the step being read, the cells' bounds they give, and the bounds of
// V_{h+1} at the rows of the step read before.
type boundsSweep struct {
	*boundsPlan
	K      int
	counts []uint8
	B, b   int
	n      []float64   // [k*d+i]: weighted count of site k's rows in cell i
	sum    [][]float64 // site lo, site hi, robust lo, robust hi, per (k, i)
	// q[0], q[1]: the site bounds per (k, i); q[2], q[3]: the robust
	// bounds per cell.
	q    [][]float64
	done []bool
	next [4][]float64 // the bounds of V_{h+1} at step h+1's rows
	// visits and supported per site, and their robust totals.
	visits, supported       []float64
	robVisits, robSupported float64
}

func newBoundsSweep(bp *boundsPlan, counts []uint8, B, b int) *boundsSweep {
	K, d := len(bp.t.Sites), bp.d
	bs := &boundsSweep{boundsPlan: bp, K: K, counts: counts, B: B, b: b,
		n: make([]float64, K*d), sum: make([][]float64, 4), q: make([][]float64, 4), done: make([]bool, d),
		visits: make([]float64, K), supported: make([]float64, K)}
	for i := range bs.sum {
		bs.sum[i] = make([]float64, K*d)
	}
	bs.q[0], bs.q[1] = make([]float64, K*d), make([]float64, K*d)
	bs.q[2], bs.q[3] = make([]float64, d), make([]float64, d)
	return bs
}

// weight is row j's weight in the sweep: its own, times its trajectory's
// multiplicity in replicate b when the sweep has counts.
func (bs *boundsSweep) weight(s *traj.Step, j int) float64 {
	w := weight(s, j)
	if bs.counts != nil {
		w *= float64(bs.counts[int(s.Traj[j])*bs.B+bs.b])
	}
	return w
}

// sumStep forms step h's weighted counts and sums of r + V_{h+1}(s') per
// (site, observed cell), leaving out rows of weight 0 and withheld cells.
func (bs *boundsSweep) sumStep(h int) {
	s := &bs.t.Steps[h-1]
	var hidden []bool
	if bs.hidden != nil {
		hidden = bs.hidden[h-1]
	}
	clear(bs.n)
	for i := range bs.sum {
		clear(bs.sum[i])
	}
	for k := 0; k < bs.K; k++ {
		for j := int(s.SiteStart[k]); j < int(s.SiteStart[k+1]); j++ {
			w := bs.weight(s, j)
			c := k*bs.d + int(bs.cellObs[h-1][j])
			if w == 0 || hidden != nil && hidden[c] {
				continue
			}
			bs.n[c] += w
			for x := range bs.sum {
				v := s.Reward[j]
				if h < bs.t.H && s.Next[j] >= 0 {
					v += bs.next[x][s.Next[j]]
				}
				bs.sum[x][c] += w * v
			}
		}
	}
}

// cellBounds turns step h's sums into the cells' bounds: each site's, and
// the robust bounds of the cells the policy visits at the step (the only
// ones read).
func (bs *boundsSweep) cellBounds(h int) {
	n, sum, q, d := bs.n, bs.sum, bs.q, bs.d
	bot, top := bs.rng.lo[h-1], bs.rng.hi[h-1]
	for c := range n {
		if n[c] > 0 {
			q[0][c], q[1][c] = lowerMean(sum[0][c], n[c], bs.lambda), outward(sum[1][c]/n[c])
		} else {
			q[0][c], q[1][c] = bot, top
		}
	}
	clear(bs.done)
	for _, i := range bs.cellPi[h-1] {
		if bs.done[i] {
			continue
		}
		bs.done[i] = true
		q[2][i], q[3][i] = robustCell(bs.K, func(k int) (float64, float64, float64) {
			c := k*d + int(i)
			return n[c], sum[2][c], sum[3][c]
		}, bs.lambda, bot, top)
	}
}

// valueRows sets the bounds of V_h at step h's rows (the cell of the
// policy's action) and counts the rows' support.
func (bs *boundsSweep) valueRows(h int) {
	s := &bs.t.Steps[h-1]
	K, d, n, q := bs.K, bs.d, bs.n, bs.q
	var cur [4][]float64
	for x := range cur {
		cur[x] = make([]float64, s.Len())
	}
	for k := 0; k < K; k++ {
		for j := int(s.SiteStart[k]); j < int(s.SiteStart[k+1]); j++ {
			i := int(bs.cellPi[h-1][j])
			cur[0][j], cur[1][j] = q[0][k*d+i], q[1][k*d+i]
			cur[2][j], cur[3][j] = q[2][i], q[3][i]
			w := bs.weight(s, j)
			bs.visits[k] += w
			bs.robVisits += w
			if n[k*d+i] > 0 {
				bs.supported[k] += w
			}
			all := true
			for kk := 0; kk < K && all; kk++ {
				all = n[kk*d+i] > 0
			}
			if all {
				bs.robSupported += w
			}
		}
	}
	bs.next = cur
}

// result averages the bounds of V_1 over each site's first rows. The
// robust bounds' sums are formed per site and added in site order, as a
// federated evaluation adds the sites' sums ([SiteBoundsFinal]).
func (bs *boundsSweep) result() boundsResult {
	K, next := bs.K, bs.next
	res := boundsResult{siteLo: make([]float64, K), siteHi: make([]float64, K), siteSupport: make([]float64, K)}
	s1 := &bs.t.Steps[0]
	tot := 0.0
	for k := 0; k < K; k++ {
		sk, lo, hi := 0.0, 0.0, 0.0
		for j := int(s1.SiteStart[k]); j < int(s1.SiteStart[k+1]); j++ {
			w := bs.weight(s1, j)
			sk += w
			res.siteLo[k] += w * next[0][j]
			res.siteHi[k] += w * next[1][j]
			lo += w * next[2][j]
			hi += w * next[3][j]
		}
		res.siteLo[k] /= sk
		res.siteHi[k] /= sk
		res.lo += lo
		res.hi += hi
		tot += sk
		res.siteSupport[k] = bs.supported[k] / bs.visits[k]
	}
	res.lo /= tot
	res.hi /= tot
	res.support = bs.robSupported / bs.robVisits
	return res
}

// robustCell returns the robust bounds of one cell's Q at a step from the
// K sites' weighted counts n and sums lo, hi of r + Vlo_{h+1}(s') and r +
// Vhi_{h+1}(s') over their rows in the cell (at(k), in site order), with
// the value from the step on in [bot, top]. The lower bound is the
// minimum over all sites of lo/(n + lambda), a site without rows counting
// bot; the upper bound is the minimum over the sites with rows of their
// upper confidence limits for the mean of r + Vhi_{h+1}(s') ([upperLimit]
// at level 1 - (1-BoundsLevel)/K), top where no site has rows.
func robustCell(K int, at func(k int) (n, lo, hi float64), lambda, bot, top float64) (l, u float64) {
	l, u = math.Inf(1), top
	alpha := (1 - BoundsLevel) / float64(K)
	for k := 0; k < K; k++ {
		n, lo, hi := at(k)
		if n > 0 {
			l = min(l, lowerMean(lo, n, lambda))
			u = min(u, upperLimit(hi/n, n, bot, top, alpha))
		} else {
			l = min(l, bot)
		}
	}
	return l, u
}

// boundsSlack is the relative margin by which the bounds' cell means are
// moved outward: far above the rounding of fitted-Q's factorisation over
// H steps (a few units of 1e-16 per step), far below any width the bounds
// are read at. Without it a value can lie one rounding error outside its
// own bound where the two are equal in exact arithmetic (a lower bound
// with fitted-Q's ridge, an upper bound on a cell of millions of rows).
const boundsSlack = 1e-12

// outward returns x moved away from 0 by boundsSlack |x|.
func outward(x float64) float64 { return x + boundsSlack*math.Abs(x) }

// lowerMean returns the lower bound's cell mean sum/(n + lambda), moved
// toward minus infinity by boundsSlack of its size.
func lowerMean(sum, n, lambda float64) float64 {
	x := sum / (n + lambda)
	return x - boundsSlack*math.Abs(x)
}

// upperLimit returns an upper confidence limit at level 1 - alpha for the
// mean of independent variables in [bot, top] from their mean over n
// observations: the Chernoff bound in Kullback-Leibler form (Hoeffding
// 1963, theorem 1; the kl-UCB index of Garivier and Cappe 2011). With x
// = (mean - bot) / (top - bot) it is bot + (top - bot) q for the largest
// q in [x, 1] with n kl(x, q) <= ln(1/alpha), kl the Bernoulli relative
// entropy: P(q < true mean) <= alpha for any law on [bot, top], since
// the law's moment generating function is at most the Bernoulli's with
// the same mean. It is top when n is small (below ln(1/alpha) / ln(1/x)
// when x > 0: a cell with a handful of rows says nothing), and never
// below the mean.
func upperLimit(mean, n, bot, top, alpha float64) float64 {
	w := top - bot
	if w <= 0 {
		return top
	}
	x := min(max((mean-bot)/w, 0), 1)
	c := math.Log(1/alpha) / n
	var q float64
	switch {
	case x >= 1:
		return top
	case x == 0:
		q = -math.Expm1(-c)
	default:
		q = klUpper(x, c)
	}
	return min(bot+w*max(q, x), top)
}

// klUpper returns the largest q in [x, 1) with kl(x, q) <= c, for x in
// (0, 1) and c > 0, from above: Newton's method on the convex increasing
// function kl(x, .) - c on [x, 1), started at q0 = 1 - (1-x) e^{-(c + x
// ln(1/x))/(1-x)} (kl(x, q0) >= x ln x + (1-x) ln((1-x)/(1-q0)) = c),
// stays above the root and stops when a step moves q by at most 1e-13 q:
// the limit errs high, never low. Deterministic.
func klUpper(x, c float64) float64 {
	kl := func(q float64) float64 {
		return x*math.Log(x/q) + (1-x)*math.Log((1-x)/(1-q))
	}
	q := 1 - (1-x)*math.Exp(-(c-x*math.Log(x))/(1-x))
	if q >= 1 {
		return 1
	}
	for range 100 {
		f := kl(q) - c
		df := (q - x) / (q * (1 - q))
		if df <= 0 {
			break
		}
		step := f / df
		if step <= 1e-13*q {
			break
		}
		q -= step
	}
	return q
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
// sum of rewards, censored trajectories excluded and the others weighted
// by the inverse probability of their not being censored (see
// censorWeights). It is a consistent estimate of the behaviour's value
// when censoring depends on nothing but the step.
func observedReturns(t *traj.Table) []float64 {
	K := len(t.Sites)
	cw := censorWeights(t)
	out := make([]float64, K)
	for h := range t.Steps {
		s := &t.Steps[h]
		for k := 0; k < K; k++ {
			for j := int(s.SiteStart[k]); j < int(s.SiteStart[k+1]); j++ {
				out[k] += returnWeight(t, cw, s, j) * s.Reward[j]
			}
		}
	}
	s1 := &t.Steps[0]
	for k := 0; k < K; k++ {
		n := 0.0
		for j := int(s1.SiteStart[k]); j < int(s1.SiteStart[k+1]); j++ {
			n += returnWeight(t, cw, s1, j)
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
