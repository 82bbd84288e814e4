package eval

import (
	"math"
	"testing"

	"github.com/grmdp/grmdp/sim"
)

// TestObservedCareCensored checks observed care on the clinical scenario,
// whose NULL lactate --nulls truncate turns into censored episodes,
// against each hospital's true value of its clinicians' care (Monte
// Carlo), over two models of five hospitals with 20,000 patients each:
// the sum of the ten squared z-scores stays below the chi-square
// distribution's 95% point with 10 degrees of freedom (18.31). Leaving
// the censored episodes out without weights fails it (22.0 on these
// data): long episodes are censored more often, and length goes with the
// outcome.
func TestObservedCareCensored(t *testing.T) {
	if testing.Short() {
		t.Skip("clinical scenario")
	}
	spec := sim.DefaultClinicalSpec()
	spec.Trajectories = []int{20000, 20000, 20000, 20000, 20000}
	chi2 := 0.0
	for _, seed := range []uint64{3, 4} {
		m, err := sim.NewClinical(sim.Params{Seed: seed, Clinical: &spec})
		if err != nil {
			t.Fatal(err)
		}
		tb, err := m.Sample(11)
		if err != nil {
			t.Fatal(err)
		}
		truth := m.BehaviourValue(50000, 9)
		obs := ObservedCare(tb, 0, 5, 0.95)
		cens := tb.CensoredCount()
		for k, o := range obs {
			// The estimate's standard error, from the binomial variance.
			n := float64(tb.Trajectories[k] - cens[k])
			se := math.Sqrt(o.Value * (1 - o.Value) / n)
			z := (o.Value - truth[k].Value) / math.Hypot(se, truth[k].StdErr)
			chi2 += z * z
			t.Logf("model %d, site %s: observed %.4f, censored %d; truth %.4f±%.4f; z %.2f", seed, o.Site, o.Value, o.Censored, truth[k].Value, truth[k].StdErr, z)
			if o.Censored == 0 || o.Censored != cens[k] {
				t.Errorf("model %d, site %s: %d censored, table says %d; want them counted", seed, o.Site, o.Censored, cens[k])
			}
		}
	}
	if chi2 > 18.31 {
		t.Errorf("sum of squared z-scores %.2f over 10 sites, above the chi-square 95%% point 18.31", chi2)
	}
}

// TestCensorWeights checks the inverse probability of censoring weights
// on a clinical table: 0 for censored trajectories, at least 1 for the
// others and growing with the step of their last row within a site, and
// nil without censoring.
func TestCensorWeights(t *testing.T) {
	spec := sim.DefaultClinicalSpec()
	spec.Trajectories = []int{300, 300}
	spec.Sites = 2
	m, err := sim.NewClinical(sim.Params{Seed: 3, Clinical: &spec})
	if err != nil {
		t.Fatal(err)
	}
	tb, err := m.Sample(11)
	if err != nil {
		t.Fatal(err)
	}
	cw := censorWeights(tb)
	if len(cw) != len(tb.Censored) {
		t.Fatalf("%d weights for %d trajectories", len(cw), len(tb.Censored))
	}
	last, site := make([]int, len(cw)), make([]int, len(cw))
	for h := range tb.Steps {
		s := &tb.Steps[h]
		for k := range tb.Sites {
			for j := s.SiteStart[k]; j < s.SiteStart[k+1]; j++ {
				last[s.Traj[j]], site[s.Traj[j]] = h+1, k
			}
		}
	}
	byStep := map[[2]int]float64{}
	for i, w := range cw {
		switch {
		case tb.Censored[i] && w != 0:
			t.Errorf("censored trajectory %d has weight %g, want 0", i, w)
		case !tb.Censored[i] && w < 1:
			t.Errorf("trajectory %d has weight %g, want at least 1", i, w)
		case !tb.Censored[i]:
			key := [2]int{site[i], last[i]}
			if v, ok := byStep[key]; ok && v != w {
				t.Errorf("site %d, last step %d: weights %g and %g differ", site[i], last[i], v, w)
			}
			byStep[key] = w
		}
	}
	for key, w := range byStep {
		for l := 1; l < key[1]; l++ {
			if v, ok := byStep[[2]int{key[0], l}]; ok && v > w {
				t.Errorf("site %d: weight %g at last step %d above %g at %d", key[0], v, l, w, key[1])
			}
		}
	}
	spec.NullRate = 0
	m, _ = sim.NewClinical(sim.Params{Seed: 3, Clinical: &spec})
	if tb, _ = m.Sample(11); censorWeights(tb) != nil {
		t.Error("weights without censoring, want nil")
	}
}
