package federate_test

import (
	"context"
	"fmt"

	"github.com/grmdp/grmdp/federate"
	"github.com/grmdp/grmdp/sim"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// A federated sitewise solve over two sites of the trap scenario, in
// memory: in every round each site forms its message from its own rows and
// the coordinator folds them; after the last round the job's policy is the
// one a central solve of both sites' rows finds.
func Example() {
	ctx := context.Background()
	m, err := sim.New(sim.ScenarioTrap, sim.Params{Seed: 1, Trajectories: []int{200, 300}})
	if err != nil {
		panic(err)
	}
	chunks, err := m.SampleRows(2)
	if err != nil {
		panic(err)
	}
	fm := m.Map()
	j := &federate.Job{FormatVersion: federate.FormatVersion, ID: "example", Method: solve.Sitewise, Map: fm, H: m.Horizon(),
		Lambda: 1, C: 5e-4, Xi: 0.05, Fallback: solve.FallbackBehaviour, Sites: m.Sites(), MinSites: 2}
	if err := j.Check(); err != nil {
		panic(err)
	}
	// Each site reads only its own rows.
	var sites []federate.SiteInput
	for k, c := range chunks {
		b := traj.NewBuilder(m.Options())
		if err := b.Add(c); err != nil {
			panic(err)
		}
		tb, err := b.Build()
		if err != nil {
			panic(err)
		}
		st, err := solve.NewStats(ctx, tb, fm, fm.Blocks(), 1)
		if err != nil {
			panic(err)
		}
		sites = append(sites, federate.SiteInput{Stats: st, Site: m.Sites()[k], Numeric: true})
	}
	s := federate.NewState(j)
	for !s.Done(j) {
		var in []federate.Incoming
		for _, site := range sites {
			msg, err := federate.SiteMessage(ctx, j, s, site)
			if err != nil {
				panic(err)
			}
			in = append(in, federate.Incoming{File: "site " + site.Site, Msg: msg})
		}
		if s, err = federate.Fold(ctx, j, s, in); err != nil {
			panic(err)
		}
	}
	p, err := federate.Policy(j, s)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%d rounds: %s policy, beta = %.4f, value estimate %.4f\n", j.Rounds(), p.Method, p.Beta, p.ValueEstimate)
	// Output:
	// 8 rounds: sitewise policy, beta = 0.0781, value estimate 4.2659
}
