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
	K, H, B := len(t.Sites), t.H, c.B
	nb := 1 + B
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
			o := opeSite{act: make([]float64, H*nb), end: make([]float64, H*nb), rew: make([]float64, H*nb), res: make([]float64, H*nb),
				mod: make([]float64, H*nb), first: make([]float64, nb)}
			// w[i*nb+col] is trajectory offs[k]+i's cumulative weight in
			// column col (0 before its step-1 row and after a departure
			// from the policy, in every column at once: a ratio is 0 only
			// where the policy departs, and at least 1 otherwise).
			w := make([]float64, (offs[k+1]-offs[k])*nb)
			wt := make([]float64, nb)
			prevs := make([]float64, nb)
			// vb[col] is the row's Vhat under column col's fitted-Q
			// model.
			vb := make([]float64, nb)
			idx, val := make([]int32, c.m.MaxNonzeros()), make([]float64, c.m.MaxNonzeros())
			var scratch []float64
			for h := 1; h <= H; h++ {
				if err := gctx.Err(); err != nil {
					return err
				}
				s := &t.Steps[h-1]
				act, v := c.act[h-1], c.v[h-1]
				at := (h - 1) * nb
				lo, hi := int(s.SiteStart[k]), int(s.SiteStart[k+1])
				// The site's behaviour at the step, and its refits to the
				// replicates, fitted at the first row that still follows
				// the policy.
				var b *behaviour
				var refits []*behaviour
				for j := lo; j < hi; j++ {
					if t.IsCensored(s.Traj[j]) {
						// A censored trajectory's return is unknown: it
						// is in no sum (see "Censored episodes" in doc.go).
						continue
					}
					i := int(s.Traj[j]) - offs[k]
					cw := w[i*nb : (i+1)*nb]
					if h == 1 {
						for col := range prevs {
							prevs[col] = 1
						}
					} else {
						copy(prevs, cw)
					}
					if prevs[0] == 0 {
						continue
					}
					om := returnWeight(t, cw0, s, j)
					wt[0] = om
					if B > 0 {
						for bi, n := range counts[(offs[k]+i)*B : (offs[k]+i+1)*B] {
							wt[1+bi] = float64(n) * om
						}
					}
					if h == 1 {
						floats.Add(o.first, wt)
					}
					if b == nil {
						b = c.models.fit(c.m, s, t.W, h, k, lo, hi)
						scratch = slices.Grow(scratch[:0], t.W+1+len(b.actions))[:t.W+1+len(b.actions)]
						if B > 0 {
							refits = c.models.refit(b, c.m, s, t.W, h, k, lo, hi, counts, B)
						}
					}
					rho, off := c.ratio(b, s, j, act[j], scratch)
					cw[0] = min(prevs[0]*rho, WeightClip)
					for bi, rb := range refits {
						r, _ := c.ratio(rb, s, j, act[j], scratch)
						cw[1+bi] = min(prevs[1+bi]*r, WeightClip)
					}
					if off {
						o.offFormulary += om
					}
					vb[0] = v[j]
					if B > 0 {
						c.repValues(vb[1:], h, k, s.State[j*t.W:(j+1)*t.W], act[j], idx, val)
					}
					ended := h == H || s.Next[j] < 0
					for col, x := range wt {
						o.mod[at+col] += prevs[col] * vb[col] * x
					}
					cur := cw[0]
					if cur == 0 {
						continue
					}
					r := s.Reward[j]
					for col, x := range wt {
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
			}
			out[k] = o
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	return out, nil
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
