package eval

import (
	"sync"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/traj"
)

// replicates are a report's bootstrap replicates, kept so that a caller
// can combine reports (cross-fitted folds, paired differences) replicate
// by replicate.
type replicates struct {
	// estimates[e][(1+b)*sites+k] is estimator Estimators[e]'s value at
	// site k in replicate b (column 0 holds the estimates themselves).
	estimates [][]float64
	sites     int
	// observed[b][k] is site k's observed care in replicate b.
	observed [][]float64
}

// Replicates returns estimator's (one of [Estimators]) value at each site
// in each bootstrap replicate, out[b][k] (NaN where a replicate leaves the
// site without rows), or nil when the report has no bootstrap or the
// estimator is unknown. Replicate b resamples the trajectories with the
// Poisson counts of (seed, b, trajectory), so two reports on the same
// table with the same seed are paired replicate by replicate.
func (r *Report) Replicates(estimator string) [][]float64 {
	for e, name := range Estimators {
		if name != estimator || e >= len(r.reps.estimates) {
			continue
		}
		K, col := r.reps.sites, r.reps.estimates[e]
		B := len(col)/max(K, 1) - 1
		if B <= 0 {
			return nil
		}
		out := make([][]float64, B)
		for b := range out {
			out[b] = col[(1+b)*K : (2+b)*K]
		}
		return out
	}
	return nil
}

// ObservedReplicates returns each site's observed care in each bootstrap
// replicate, out[b][k], paired with [Report.Replicates'] (nil without a
// bootstrap).
func (r *Report) ObservedReplicates() [][]float64 { return r.reps.observed }

// BasicCI returns the basic bootstrap interval at level of the estimate
// theta from its replicates x (NaN ignored), as every interval of a
// report is formed: [2 theta - q_hi, 2 theta - q_lo], q the (1-level)/2
// and (1+level)/2 quantiles of x. Both ends are NaN without replicates.
func BasicCI(theta float64, x []float64, level float64) (lo, hi float64) {
	lo, hi, _ = basicCI(theta, x, level)
	return lo, hi
}

// BasicCIBias returns [BasicCI]'s interval and the bootstrap's bias
// estimate, mean(x) - theta, as a report's Bias is formed (NaN without
// replicates).
func BasicCIBias(theta float64, x []float64, level float64) (lo, hi, bias float64) {
	return basicCI(theta, x, level)
}

// BehaviourModels keeps the behaviour models (see the package
// documentation) fitted to one table's rows, per (step, site), for the
// evaluations of several policies on that table ([Options].Behaviour).
// It also keeps the bootstrap's Poisson counts of the table's
// trajectories and the observed returns' replicates they give, which are
// functions of (Seed, Bootstrap) and the rows alone: evaluations with the
// same seed and replicate count draw them once (the observed replicates
// are then shared by their reports).
// The zero value is empty; it is safe for concurrent use.
type BehaviourModels struct {
	mu   sync.Mutex
	t    *traj.Table
	fits map[[2]int]*behaviour

	seed     uint64
	B        int
	counts   []uint8
	observed [][]float64
	// refits holds the logistic regressions' refits to the replicates of
	// counts, per (step, site) (cells refit cheaply and are not kept).
	refits map[[2]int][]*behaviour
}

// poissonCounts returns poissonCounts(t, seed, B, nworkers), drawn on
// first use for (seed, B) (every time when c is nil).
func (c *BehaviourModels) poissonCounts(t *traj.Table, seed uint64, B, nworkers int) []uint8 {
	if c == nil {
		return poissonCounts(t, seed, B, nworkers)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.counts == nil || c.seed != seed || c.B != B {
		c.seed, c.B, c.observed, c.refits = seed, B, nil, nil
		c.counts = poissonCounts(t, seed, B, nworkers)
	}
	return c.counts
}

// observedReplicates returns observedReplicates(t, counts, B), computed
// once for the counts c drew (every time when c is nil or the counts are
// not c's).
func (c *BehaviourModels) observedReplicates(t *traj.Table, counts []uint8, B int) [][]float64 {
	if c == nil {
		return observedReplicates(t, counts, B)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(counts) == 0 || len(c.counts) != len(counts) || &c.counts[0] != &counts[0] || c.B != B {
		return observedReplicates(t, counts, B)
	}
	if c.observed == nil {
		c.observed = observedReplicates(t, counts, B)
	}
	return c.observed
}

// of returns c when it may serve table t (it then serves t alone), nil
// otherwise.
func (c *BehaviourModels) of(t *traj.Table) *BehaviourModels {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.t == nil {
		c.t, c.fits = t, map[[2]int]*behaviour{}
	}
	if c.t != t {
		return nil
	}
	return c
}

// fit returns site k's behaviour model at step u (rows lo..hi-1 of s),
// fitted on first use (every time when c is nil). The fit is a function
// of the rows alone, so a model fitted twice at once is the same either
// way. keep is fitBehaviourKeep's: the forward pass asks for it when it
// refits the model to the replicates next.
func (c *BehaviourModels) fit(m *features.Map, s *traj.Step, W, u, k, lo, hi int, keep bool) *behaviour {
	if c == nil {
		return fitBehaviourKeep(m, s, W, lo, hi, keep)
	}
	key := [2]int{u, k}
	c.mu.Lock()
	b, ok := c.fits[key]
	c.mu.Unlock()
	if ok {
		return b
	}
	b = fitBehaviourKeep(m, s, W, lo, hi, keep)
	c.mu.Lock()
	c.fits[key] = b
	c.mu.Unlock()
	return b
}

// refit returns b.refit(m, s, W, lo, hi, counts, B) for site k's model b
// at step u, computed once for the counts c drew when b is a logistic
// regression (every time otherwise, or when c is nil or the counts are
// not c's). Like the fit, the refits are functions of the rows and the
// counts alone.
func (c *BehaviourModels) refit(b *behaviour, m *features.Map, s *traj.Step, W, u, k, lo, hi int, counts []uint8, B int) []*behaviour {
	if c == nil || b.coef == nil {
		return b.refit(m, s, W, lo, hi, counts, B)
	}
	key := [2]int{u, k}
	c.mu.Lock()
	mine := len(counts) > 0 && len(c.counts) == len(counts) && &c.counts[0] == &counts[0] && c.B == B
	r, ok := c.refits[key]
	c.mu.Unlock()
	if !mine {
		return b.refit(m, s, W, lo, hi, counts, B)
	}
	if ok {
		return r
	}
	r = b.refit(m, s, W, lo, hi, counts, B)
	c.mu.Lock()
	if c.refits == nil {
		c.refits = map[[2]int][]*behaviour{}
	}
	c.refits[key] = r
	c.mu.Unlock()
	return r
}
