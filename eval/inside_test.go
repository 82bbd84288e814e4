package eval

import (
	"context"
	"testing"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/sim"
	"github.com/grmdp/grmdp/solve"
)

// Every value lies inside its own identification bounds: each site's
// value and the robust value, on the formulary scenario (thin tabular
// cells) and on random tables of every indicator map, for the behaviour
// and the site-wise policy, with and without disclosure control.
func TestValuesInsideBounds(t *testing.T) {
	s := solve.DefaultSettings
	s.C = 1e-4
	check := func(what string, st *solve.Stats, m features.Map) {
		t.Helper()
		for _, method := range []solve.Method{solve.Behaviour, solve.Sitewise} {
			sv := solve.NewSolver(st, s)
			pol, err := sv.Solve(context.Background(), solve.Problem{Method: method})
			if err != nil {
				t.Fatal(err)
			}
			rep, err := FromData(context.Background(), sv, pol, s, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if !(rep.Lower <= rep.PolicyValue && rep.PolicyValue <= rep.Upper) {
				t.Errorf("%s %s: robust value %v outside [%v, %v]", what, method, rep.PolicyValue, rep.Lower, rep.Upper)
			}
			for _, sv := range rep.Sites {
				if !(sv.Lower <= sv.Value && sv.Value <= sv.Upper) {
					t.Errorf("%s %s: site %s's value %v outside [%v, %v]", what, method, sv.Site, sv.Value, sv.Lower, sv.Upper)
				}
			}
		}
	}
	ctx := context.Background()
	for seed := uint64(1); seed <= 2; seed++ {
		mm, err := sim.New(sim.ScenarioFormulary, sim.Params{Seed: seed, Trajectories: []int{300, 200, 60, 150, 90}})
		if err != nil {
			t.Fatal(err)
		}
		tb, err := mm.Sample(seed)
		if err != nil {
			t.Fatal(err)
		}
		m := mm.Map()
		for _, dc := range []solve.Disclosure{{}, {MinCount: 5, MinRows: 10}} {
			st, err := solve.NewStatsDisclosed(ctx, tb, m, solve.BlocksFor(tb, &m), 1, dc)
			if err != nil {
				t.Fatal(err)
			}
			check("formulary", st, m)
		}
	}
	for _, m := range testMaps() {
		if !indicatorMap(&m) {
			continue
		}
		for seed := uint64(1); seed <= 3; seed++ {
			tb := randomTable(t, m, 3, 4, []int{60, 30, 12}, seed)
			for _, dc := range []solve.Disclosure{{}, {MinCount: 5, MinRows: 10}} {
				st, err := solve.NewStatsDisclosed(ctx, tb, m, solve.BlocksFor(tb, &m), 1, dc)
				if err != nil {
					t.Fatal(err)
				}
				check(m.Kind.String(), st, m)
			}
		}
	}
}
