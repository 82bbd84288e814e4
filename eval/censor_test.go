package eval

import (
	"math"
	"testing"

	"github.com/grmdp/grmdp/sim"
)

// TestObservedCareCensored checks observed care on the clinical scenario,
// whose NULL lactate --nulls truncate turns into censored episodes,
// against each hospital's true value of its clinicians' care (Monte
// Carlo): within 3 standard errors of the two.
func TestObservedCareCensored(t *testing.T) {
	if testing.Short() {
		t.Skip("clinical scenario")
	}
	spec := sim.DefaultClinicalSpec()
	spec.Trajectories = []int{3000, 3000, 3000, 3000, 3000}
	m, err := sim.NewClinical(sim.Params{Seed: 3, Clinical: &spec})
	if err != nil {
		t.Fatal(err)
	}
	tb, err := m.Sample(11)
	if err != nil {
		t.Fatal(err)
	}
	truth := m.BehaviourValue(40000, 9)
	obs := ObservedCare(tb, 200, 5, 0.95)
	cens := tb.CensoredCount()
	for k, o := range obs {
		se := (o.CIHigh - o.CILow) / (2 * 1.96)
		z := (o.Value - truth[k].Value) / math.Hypot(se, truth[k].StdErr)
		t.Logf("site %s: observed %.4f [%.4f, %.4f], censored %d (%d); truth %.4f±%.4f; z %.2f", o.Site, o.Value, o.CILow, o.CIHigh, o.Censored, cens[k], truth[k].Value, truth[k].StdErr, z)
		if o.Censored == 0 || o.Censored != cens[k] {
			t.Errorf("site %s: %d censored, table says %d; want them counted", o.Site, o.Censored, cens[k])
		}
		if math.Abs(z) > 3 {
			t.Errorf("site %s: observed care %.4f, true %.4f±%.4f (z %.2f)", o.Site, o.Value, truth[k].Value, truth[k].StdErr, z)
		}
	}
}
