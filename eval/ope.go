package eval

import (
	"context"
	"math"
	"slices"

	"golang.org/x/sync/errgroup"
	"gonum.org/v1/gonum/floats"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/internal/workers"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// The estimators that do not trust the model: per-decision weighted
// importance sampling (PDWIS) and weighted doubly robust (WDR), per site,
// for the deterministic policy being evaluated (see the package
// documentation, "Estimators that do not trust the model").

// Estimator names, the keys of [SiteValue].Estimates.
const (
	FQE   = "fqe"
	PDWIS = "pdwis"
	WDR   = "wdr"
)

// Estimators lists the estimators in the order reports show them.
var Estimators = []string{FQE, PDWIS, WDR}

// RatioClip bounds each per-decision importance ratio pi(a|s)/mu(a|s) =
// 1/mu(a|s) (at rows where the policy takes the logged action): an
// estimated propensity below 1/RatioClip = 0.01 counts as 0.01. It bounds
// what one decision with a tiny estimated propensity (a logistic
// regression's tail) can do to a trajectory's weight; the cost is a bias
// toward the behaviour's value at such decisions.
const RatioClip = 100

// WeightClip bounds a trajectory's cumulative weight (the product of its
// ratios), so that long horizons stay finite in floating point; the
// estimators are self-normalised, so only ratios between weights matter.
const WeightClip = 1e100

// opeCollector gathers, as the evaluation's sweep values each step's rows,
// what the estimators need per row: the policy's action and the row's own
// site's fitted-Q value, and for the bootstrap replicates each site's own
// fitted-Q coefficients, from which the forward pass (sums) values a row
// under a replicate's model where it needs that value. The behaviour's
// propensities, and with them the ratios, are estimated in the forward
// pass too, only at the (site, step)s where a trajectory still follows
// the policy: the rows whose weight is already 0 add nothing, whatever
// their ratio or value.
type opeCollector struct {
	t       *traj.Table
	m       *features.Map
	workers int
	// act[h-1][j] and v[h-1][j] are row j of step h's.
	act [][]int32
	v   [][]float64
	// B is the number of bootstrap replicates, and repCoef[(h-1)*K+k]
	// site k's own fitted-Q coefficients at step h in every replicate,
	// replicate-minor: feature i of replicate b at i*B+b.
	B       int
	repCoef [][]float64
	// models, when set, holds the behaviour models fitted to t (shared
	// with other evaluations of t).
	models *BehaviourModels
	// exact makes every site's forward pass compute every replicate
	// column's weight (see opeSiteSweep.advance); tests set it.
	exact bool
}

// newOPECollector returns the collector of an evaluation of t with B
// bootstrap replicates (0 for none).
func newOPECollector(t *traj.Table, m *features.Map, B, nworkers int) *opeCollector {
	c := &opeCollector{t: t, m: m, workers: nworkers, act: make([][]int32, t.H), v: make([][]float64, t.H), B: B}
	if B > 0 {
		c.repCoef = make([][]float64, t.H*len(t.Sites))
	}
	return c
}

// hook sets o's OnStep and, with replicates, OnReplicateStep to c's.
func (c *opeCollector) hook(o *solve.EvaluateOptions) {
	o.OnStep = c.onStep
	if c.B > 0 {
		o.OnReplicateStep = c.onReplicateStep
	}
}

// onStep is the sweep's [solve.EvaluateOptions].OnStep: it keeps the
// policy's actions act at step u's rows and the rows' own fitted-Q values
// own (as they are).
func (c *opeCollector) onStep(u int, act []int32, own []float64) error {
	c.act[u-1], c.v[u-1] = act, own
	return nil
}

// onReplicateStep is the sweep's [solve.EvaluateOptions].OnReplicateStep:
// it keeps the own-site coefficients of step u of replicates b0,
// b0+1, ... (sites[bi*K+k] is site k's of replicate b0+bi),
// replicate-minor.
func (c *opeCollector) onReplicateStep(u, b0 int, sites [][]float64) error {
	K, B, d := len(c.t.Sites), c.B, c.m.Dim()
	for k := 0; k < K; k++ {
		rc := c.repCoef[(u-1)*K+k]
		if rc == nil {
			rc = make([]float64, d*B)
			c.repCoef[(u-1)*K+k] = rc
		}
		for bi := 0; bi < len(sites)/K; bi++ {
			for i, x := range sites[bi*K+k] {
				rc[i*B+b0+bi] = x
			}
		}
	}
	return nil
}

// repValues sets vb[b] to site k's own fitted-Q value of replicate b at
// the policy's action act in state s (a row of step h): phi(s, act) times
// the replicate's coefficients, clipped to [0, H-h+1] as the sweep clips
// Vhat_h. idx and val must have room for the map's MaxNonzeros.
func (c *opeCollector) repValues(vb []float64, h, k int, s []float64, act int32, idx []int32, val []float64) {
	B := c.B
	rc := c.repCoef[(h-1)*len(c.t.Sites)+k]
	clear(vb)
	nz := c.m.Phi(s, int(act), idx, val)
	for x, i := range idx[:nz] {
		floats.AddScaled(vb, val[x], rc[int(i)*B:(int(i)+1)*B])
	}
	top := float64(c.t.H - h + 1)
	for b, x := range vb {
		vb[b] = min(max(x, 0), top)
	}
}

// ratio returns row j of step s's clipped ratio of the policy to the
// behaviour b (its site's at the step), 0 where the policy departs from
// the logged action, and whether the policy's action is then off the
// site's formulary. scratch must have room for W+1+len(b.actions) values.
func (c *opeCollector) ratio(b *behaviour, s *traj.Step, j int, act int32, scratch []float64) (rho float64, off bool) {
	if act != s.Action[j] {
		return 0, !b.inFormulary(act)
	}
	W := c.t.W
	mu := b.prob(c.m, s.State[j*W:(j+1)*W], s.Action[j], scratch)
	return min(1/mu, RatioClip), false
}

// refitProbs sets mu[r] to the propensity of action a (one the site took
// at the step) at state under refits[r], the refits of b: b.prob's value,
// the state's cell or standardised row formed once for all refits (they
// share b's cells and standardisation). With skip, the replicates whose
// count is 0 are left as they are, unless the standardised state is not
// finite: it reports whether they were. scratch must have room for
// W+1+len(b.actions) values.
func (c *opeCollector) refitProbs(b *behaviour, refits []*behaviour, counts []uint8, state []float64, a int32, scratch, mu []float64, skip bool) (skipped bool) {
	x, _ := slices.BinarySearch(b.actions, a)
	M := len(b.actions)
	switch {
	case M == 1:
		for r := range refits {
			mu[r] = 1
		}
	case b.freq != nil:
		ci, seen := b.cellIndex[behaviourCell(c.m, state)]
		for r, rb := range refits {
			switch {
			case skip && counts[r] == 0:
			case !seen:
				mu[r] = 1 / float64(M)
			default:
				mu[r] = rb.freq[ci*M+x]
			}
		}
	default:
		P := len(state) + 1
		xs, pr := scratch[:P], scratch[P:P+M]
		b.standardise(xs, state)
		for _, v := range xs {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				skip = false
			}
		}
		for r, rb := range refits {
			if !skip || counts[r] != 0 {
				mu[r] = rb.classProb(pr, xs, x)
			}
		}
	}
	return skip
}

// opeSite is one site's sums per step for every column: column 0 the
// data as they are, column 1+b bootstrap replicate b. Entry h*nb+col (h =
// 0..H-1 for step h+1) of:
//
//	act  sum of c w_h over the trajectories with a row at step h+1
//	end  the same over those whose last row is at step h+1
//	rew  sum of c w_h r_h                  (PDWIS)
//	res  sum of c w_h (r_h - Vhat_h(s_h))  (WDR)
//	mod  sum of c w_{h-1} Vhat_h(s_h)      (WDR)
//
// with c the trajectory's count in the column times its weight, w_h its
// clipped cumulative ratio through step h+1 (w_{-1} = 1) under the
// column's behaviour model (column 0 the one fitted to the data, column
// 1+b its refit to replicate b, [behaviour.refit]) and Vhat the
// site's own fitted-Q value at the policy's action under the column's
// fitted-Q model (column 0 the one fitted to the data, column 1+b the
// one fitted to replicate b in the sweep). first is sum c over
// the step-1 rows, ess1 and ess2 the sums of c w and c w^2 of the final
// weights (column 0 only), offFormulary the weighted trajectories whose
// weight an off-formulary choice of the policy set to 0.
type opeSite struct {
	act, end, rew, res, mod []float64
	first                   []float64
	ess1, ess2              float64
	offFormulary            float64
}

// sums returns every site's sums (see opeSite) for the data and the
// c.B replicates whose counts are counts (nil for none), reading the kept
// per-row values and coefficients forward, step by step, one task per
// site. A site's behaviour at a step is fitted only when one of its
// trajectories still has a weight other than 0 there, and a row's ratio
// and replicates' values computed only then.
func (c *opeCollector) sums(ctx context.Context, counts []uint8) ([]opeSite, error) {
	t := c.t
	K := len(t.Sites)
	out := make([]opeSite, K)
	offs := make([]int, K+1)
	for k := 0; k < K; k++ {
		offs[k+1] = offs[k] + t.Trajectories[k]
	}
	cw0 := censorWeights(t)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers.Or(c.workers))
	for k := 0; k < K; k++ {
		g.Go(func() error {
			sw := c.newSiteSweep(k, offs[k], offs[k+1], counts, cw0)
			for h := 1; h <= t.H; h++ {
				if err := gctx.Err(); err != nil {
					return err
				}
				sw.step(h)
			}
			out[k] = sw.o
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
}

// opeSiteSweep is one site's forward pass for sums: its trajectories'
// cumulative weights, the behaviour models of the current step, and the
// site's sums so far.
type opeSiteSweep struct {
	c *opeCollector
	k int
	// first is the table's index of the site's first trajectory.
	first int
	// counts and nb are sums' replicate counts and 1+B, the columns.
	counts []uint8
	nb     int
	// cw0 is the table's censorWeights.
	cw0 []float64
	o   opeSite
	// w[i*nb+col] is trajectory first+i's cumulative weight in column
	// col, 0 before its step-1 row. A ratio is 0 only where the policy
	// departs, and at least 1 otherwise, so w[i*nb] = 0 after a departure
	// and the trajectory's other columns are then not read (they keep
	// what they held); a column whose replicate does not draw the
	// trajectory holds 0 (see advance).
	w []float64
	// wt[col] is the current row's trajectory's weight in column col
	// (its count times its return weight); prevs[col] its cumulative
	// weight before the row.
	wt, prevs []float64
	// b and refits are the site's behaviour at the current step and its
	// refits to the replicates, nil until fitted; scratch is b.prob's.
	b       *behaviour
	refits  []*behaviour
	scratch []float64
	// exact, once set, makes advance compute every replicate column's
	// weight (see advance): set at the first non-finite refit or
	// standardised state of the sweep.
	exact bool
	// vb[col] is the current row's Vhat under column col's fitted-Q
	// model; idx and val hold the row's features.
	vb  []float64
	idx []int32
	val []float64
}

// newSiteSweep returns site k's sweep over its trajectories first..end-1.
func (c *opeCollector) newSiteSweep(k, first, end int, counts []uint8, cw0 []float64) *opeSiteSweep {
	H, nb := c.t.H, 1+c.B
	o := opeSite{act: make([]float64, H*nb), end: make([]float64, H*nb), rew: make([]float64, H*nb), res: make([]float64, H*nb),
		mod: make([]float64, H*nb), first: make([]float64, nb)}
	return &opeSiteSweep{c: c, k: k, first: first, counts: counts, nb: nb, cw0: cw0, o: o, exact: c.exact,
		w: make([]float64, (end-first)*nb), wt: make([]float64, nb), prevs: make([]float64, nb), vb: make([]float64, nb),
		idx: make([]int32, c.m.MaxNonzeros()), val: make([]float64, c.m.MaxNonzeros())}
}

// step adds the site's rows at step h to the sums, in row order. The
// site's behaviour at the step, and its refits to the replicates, are
// fitted at the first row that still follows the policy.
func (sw *opeSiteSweep) step(h int) {
	s := &sw.c.t.Steps[h-1]
	sw.b, sw.refits = nil, nil
	for j := int(s.SiteStart[sw.k]); j < int(s.SiteStart[sw.k+1]); j++ {
		sw.row(h, s, j)
	}
}

// row adds row j of step h to the sums and carries its trajectory's
// weights past it. A censored trajectory, or one that no longer follows
// the policy, adds nothing.
func (sw *opeSiteSweep) row(h int, s *traj.Step, j int) {
	if sw.c.t.IsCensored(s.Traj[j]) {
		// A censored trajectory's return is unknown: it is in no sum
		// (see "Censored episodes" in doc.go).
		return
	}
	i := int(s.Traj[j]) - sw.first
	cw := sw.w[i*sw.nb : (i+1)*sw.nb]
	if h == 1 {
		for col := range sw.prevs {
			sw.prevs[col] = 1
		}
	} else {
		if cw[0] == 0 {
			return
		}
		copy(sw.prevs, cw)
	}
	om := sw.columnWeights(i, s, j)
	if h == 1 {
		floats.Add(sw.o.first, sw.wt)
	}
	sw.fitStepBehaviour(h, s)
	if sw.advance(h, s, j, i, cw) {
		sw.o.offFormulary += om
	}
	sw.addRow(h, s, j, cw, om)
}

// columnWeights sets wt to trajectory first+i's weight in each column,
// its count there times its return weight at row j, and returns the
// return weight.
func (sw *opeSiteSweep) columnWeights(i int, s *traj.Step, j int) float64 {
	om := returnWeight(sw.c.t, sw.cw0, s, j)
	sw.wt[0] = om
	if B := sw.nb - 1; B > 0 {
		at := (sw.first + i) * B
		for bi, n := range sw.counts[at : at+B] {
			sw.wt[1+bi] = float64(n) * om
		}
	}
	return om
}

// fitStepBehaviour fits the site's behaviour at step h, and its refits
// to the replicates, unless they are fitted already.
func (sw *opeSiteSweep) fitStepBehaviour(h int, s *traj.Step) {
	if sw.b != nil {
		return
	}
	c, W := sw.c, sw.c.t.W
	lo, hi := int(s.SiteStart[sw.k]), int(s.SiteStart[sw.k+1])
	sw.b = c.models.fit(c.m, s, W, h, sw.k, lo, hi, sw.nb > 1)
	n := W + 1 + len(sw.b.actions)
	sw.scratch = slices.Grow(sw.scratch[:0], n)[:n]
	if B := sw.nb - 1; B > 0 {
		sw.refits = c.models.refit(sw.b, c.m, s, W, h, sw.k, lo, hi, sw.counts, B)
		if !sw.exact && !finiteRefits(sw.refits) {
			sw.exact = true
		}
	}
}

// finiteRefits reports whether every refit's frequencies or coefficients
// are finite.
func finiteRefits(refits []*behaviour) bool {
	for _, rb := range refits {
		for _, v := range rb.freq {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return false
			}
		}
		for _, v := range rb.coef {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return false
			}
		}
	}
	return true
}

// advance sets trajectory first+i's cumulative weights cw to prevs times
// row j's ratio under each column's behaviour, clipped at WeightClip, and
// reports whether the policy's action there is off the site's formulary.
//
// Two shortcuts leave what is never read unformed. At a departure (cw[0]
// = 0) the other columns are left as they are: the trajectory adds
// nothing after it. A replicate that does not draw the trajectory gets
// weight 0 in its column, its propensity unformed: every term the
// trajectory adds there is multiplied by its count 0, which leaves the
// sums as they are while the weight it replaces is finite. Each weight is
// finite while the refits and the standardised states are (a ratio then
// lies in [1, RatioClip]); from the first that is not, every column is
// computed (exact).
func (sw *opeSiteSweep) advance(h int, s *traj.Step, j, i int, cw []float64) (off bool) {
	act := sw.c.act[h-1][j]
	rho, off := sw.c.ratio(sw.b, s, j, act, sw.scratch)
	cw[0] = min(sw.prevs[0]*rho, WeightClip)
	B := len(sw.refits)
	if B == 0 {
		return off
	}
	if act != s.Action[j] {
		// Every column's ratio is 0.
		if cw[0] != 0 {
			for bi := range B {
				cw[1+bi] = min(sw.prevs[1+bi]*0, WeightClip)
			}
		}
		return off
	}
	at := (sw.first + i) * B
	counts := sw.counts[at : at+B]
	W := sw.c.t.W
	if !sw.c.refitProbs(sw.b, sw.refits, counts, s.State[j*W:(j+1)*W], act, sw.scratch, cw[1:], !sw.exact) {
		sw.exact = true
	}
	for bi, mu := range cw[1:] {
		if counts[bi] == 0 && !sw.exact {
			cw[1+bi] = 0
			continue
		}
		cw[1+bi] = min(sw.prevs[1+bi]*min(1/mu, RatioClip), WeightClip)
	}
	return off
}

// addRow adds row j of step h to the site's sums, with the row's Vhat
// under each column's fitted-Q model: the model term with the weights
// before the row, and, while the trajectory follows the policy,
// the terms with its weights after the row and, at its last row, its
// final weight.
func (sw *opeSiteSweep) addRow(h int, s *traj.Step, j int, cw []float64, om float64) {
	o, vb := &sw.o, sw.vb
	vb[0] = sw.c.v[h-1][j]
	if sw.nb > 1 {
		W := sw.c.t.W
		sw.c.repValues(vb[1:], h, sw.k, s.State[j*W:(j+1)*W], sw.c.act[h-1][j], sw.idx, sw.val)
	}
	at := (h - 1) * sw.nb
	ended := h == sw.c.t.H || s.Next[j] < 0
	for col, x := range sw.wt {
		o.mod[at+col] += sw.prevs[col] * vb[col] * x
	}
	cur := cw[0]
	if cur == 0 {
		return
	}
	r := s.Reward[j]
	for col, x := range sw.wt {
		cc := cw[col]
		o.act[at+col] += cc * x
		o.rew[at+col] += cc * r * x
		o.res[at+col] += cc * (r - vb[col]) * x
		if ended {
			o.end[at+col] += cc * x
		}
	}
	if ended {
		o.ess1 += om * cur
		o.ess2 += om * cur * cur
	}
}

// estimates returns the site's PDWIS and WDR of column col:
//
//	PDWIS = sum_h rew_h / N_h
//	WDR   = sum_h (res_h / N_h + mod_h / N_{h-1})
//
// with N_h = act_h + the end_{h'} of the steps h' before (the trajectories
// that ended keep their last weight and add 0 after it) and N_{-1} =
// first. PDWIS is NaN when every final weight is 0 (nothing the data saw
// follows the policy); WDR then keeps the terms whose weights are not all
// 0 (a term over weights that are all 0 is 0), falling back on the model
// where the data stop following the policy. Both are NaN for a column
// without step-1 rows.
func (o *opeSite) estimates(col, nb, H int) (pdwis, wdr float64) {
	nprev := o.first[col]
	if nprev == 0 {
		return math.NaN(), math.NaN()
	}
	ended := 0.0
	n := 0.0
	for h := 0; h < H; h++ {
		at := h*nb + col
		n = o.act[at] + ended
		if n > 0 {
			pdwis += o.rew[at] / n
			wdr += o.res[at] / n
		}
		if nprev > 0 {
			wdr += o.mod[at] / nprev
		}
		ended += o.end[at]
		nprev = n
	}
	if n == 0 {
		pdwis = math.NaN()
	}
	return pdwis, wdr
}

// ess returns the effective sample size of the site's final weights,
// (sum c w)^2 / sum c w^2 (0 when every weight is 0).
func (o *opeSite) ess() float64 {
	if o.ess2 == 0 {
		return 0
	}
	return o.ess1 * o.ess1 / o.ess2
}
