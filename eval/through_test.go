package eval

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// cloneStates returns t with every step's states copied, so that a
// policy deciding on it reads other memory than the statistics.
func cloneStates(t *traj.Table) *traj.Table {
	c := *t
	c.Steps = slices.Clone(t.Steps)
	for h := range c.Steps {
		c.Steps[h].State = slices.Clone(t.Steps[h].State)
	}
	return &c
}

// reportText is everything a report says: its JSON, the observed care,
// the warnings and notes.
func reportText(t *testing.T, r *Report) string {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	o, err := json.Marshal(r.Observed)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%s\n%s\n%q\n%q", b, o, r.Warnings, r.Notes)
}

// TestDecideOnOwnStates checks that a policy deciding on a copy of the
// solver's own rows (Options.DecideOn, the path of an evaluation through
// another map) gives the report of the plain evaluation bit for bit, for
// indicator and linear maps, with the bootstrap and every estimator.
func TestDecideOnOwnStates(t *testing.T) {
	ctx := context.Background()
	for _, m := range testMaps()[:3] {
		tb := randomTable(t, m, 3, 4, []int{40, 25, 30}, 5)
		s := solve.DefaultSettings
		s.Workers = 2
		sv := newSolver(t, tb, m, s)
		p, err := sv.Solve(ctx, solve.Problem{Method: solve.Sitewise})
		if err != nil {
			t.Fatal(err)
		}
		opts := Options{Bootstrap: 30, Seed: 3, Workers: 2}
		want, err := FromData(ctx, sv, p, s, opts)
		if err != nil {
			t.Fatal(err)
		}
		opts.DecideOn = cloneStates(tb)
		got, err := FromData(ctx, sv, p, s, opts)
		if err != nil {
			t.Fatal(err)
		}
		if got.EvaluationFeatures != m.Describe() {
			t.Errorf("%s: evaluation_features %q, want %q", m.Kind, got.EvaluationFeatures, m.Describe())
		}
		got.EvaluationFeatures = ""
		if g, w := reportText(t, got), reportText(t, want); g != w {
			t.Errorf("%s: deciding on a copy of the rows changes the report:\n got %s\nwant %s", m.Kind, g, w)
		}
	}
}

// TestDecideOnOtherColumns checks that the policy decides on DecideOn's
// states, not the solver's: a tabular policy whose states are DecideOn's
// column, relabelled in the solver's, is valued as it is on its own rows.
func TestDecideOnOtherColumns(t *testing.T) {
	ctx := context.Background()
	m := testMaps()[0]
	tb := randomTable(t, m, 3, 4, []int{40, 25, 30}, 9)
	s := solve.DefaultSettings
	s.Workers = 2
	sv := newSolver(t, tb, m, s)
	p, err := sv.Solve(ctx, solve.Problem{Method: solve.Sitewise})
	if err != nil {
		t.Fatal(err)
	}
	// The evaluation's rows: the states permuted (a relabelling, so the
	// same statistics up to the order of the cells).
	perm := []float64{2, 0, 3, 1}
	ev := cloneStates(tb)
	for h := range ev.Steps {
		for j, v := range ev.Steps[h].State {
			ev.Steps[h].State[j] = perm[int(v)]
		}
	}
	evsv := newSolver(t, ev, m, s)
	want, err := FromData(ctx, sv, p, s, Options{Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	got, err := FromData(ctx, evsv, p, s, Options{Workers: 2, DecideOn: tb})
	if err != nil {
		t.Fatal(err)
	}
	for k := range want.Sites {
		if !near(got.Sites[k].Value, want.Sites[k].Value, 1e-9) {
			t.Errorf("site %d: %g through the relabelled states, %g on the policy's own", k, got.Sites[k].Value, want.Sites[k].Value)
		}
	}
	if !near(got.PolicyValue, want.PolicyValue, 1e-9) || !near(got.Lower, want.Lower, 1e-9) || !near(got.Upper, want.Upper, 1e-9) {
		t.Errorf("robust value %g [%g, %g] through the relabelled states, %g [%g, %g] on the policy's own",
			got.PolicyValue, got.Lower, got.Upper, want.PolicyValue, want.Lower, want.Upper)
	}
	// Without DecideOn the policy would decide on the relabelled states.
	if _, err := FromData(ctx, evsv, p, s, Options{Workers: 2, DecideOn: &traj.Table{W: 2}}); err == nil {
		t.Error("states of another width are accepted")
	}
}

// TestThroughOtherMapClinical evaluates, on the clinical scenario,
// policies learned with a binned map through the scenario's soft-binned
// map: the policy's own map decides, the soft-binned map estimates, and
// WDR's interval holds the true per-hospital value (Monte Carlo) at most
// hospitals.
func TestThroughOtherMapClinical(t *testing.T) {
	if testing.Short() {
		t.Skip("clinical scenario")
	}
	m, sv := clinicalCase(t, 1500)
	ctx := context.Background()
	tb := sv.Stats().Table
	binned := features.Map{Kind: features.Binned, A: tb.A, StateColumns: []string{"lactate", "sofa"},
		Bins: []features.Bins{{Column: "lactate", Cuts: []float64{2, 4}}, {Column: "sofa", Cuts: []float64{6, 10}}}}
	s := solve.DefaultSettings
	s.Workers = 2
	bsv := newSolver(t, tb, binned, s)
	bc, err := bsv.Solve(ctx, solve.Problem{Method: solve.Behaviour})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := FromData(ctx, sv, bc, s, Options{Bootstrap: 200, Seed: 5, Workers: 2, DecideOn: tb})
	if err != nil {
		t.Fatal(err)
	}
	if want := sv.Stats().Map.Describe(); rep.EvaluationFeatures != want {
		t.Errorf("evaluation_features %q, want %q", rep.EvaluationFeatures, want)
	}
	q := make([]float64, bc.A)
	truth := m.Value(func(_, h int, v []float64) int { a, _, _ := bc.Act(h, v, q); return a }, 20000, 9)
	covered := 0
	for k, site := range rep.Sites {
		w := site.Estimates[WDR]
		t.Logf("site %s: truth %.3f±%.3f  fqe %.3f [%.3f, %.3f]  wdr %.3f [%.3f, %.3f]  ess %.0f", site.Site, truth[k].Value, truth[k].StdErr,
			site.Value, site.CILow, site.CIHigh, w.Value, w.CILow, w.CIHigh, site.ESS)
		if w.CILow <= truth[k].Value && truth[k].Value <= w.CIHigh {
			covered++
		}
	}
	if covered < len(rep.Sites)-1 {
		t.Errorf("the binned cloning policy through the soft-binned map: WDR's interval holds the true value at %d of %d sites", covered, len(rep.Sites))
	}
}
