package eval_test

import (
	"context"
	"fmt"

	"github.com/grmdp/grmdp/eval"
	"github.com/grmdp/grmdp/sim"
	"github.com/grmdp/grmdp/solve"
)

// Evaluate a policy solved on data from the trap scenario: its robust
// value from the data with a bootstrap interval, its lower bound and value
// per site, its agreement with the recorded actions, and its exact robust
// value under the known model.
func Example() {
	ctx := context.Background()
	m, err := sim.New(sim.ScenarioTrap, sim.Params{Seed: 1, Trajectories: []int{200, 300}})
	if err != nil {
		panic(err)
	}
	tb, err := m.Sample(2)
	if err != nil {
		panic(err)
	}
	fm := m.Map()
	st, err := solve.NewStats(ctx, tb, fm, solve.BlocksFor(tb, &fm), 1)
	if err != nil {
		panic(err)
	}
	s := solve.DefaultSettings
	sv := solve.NewSolver(st, s)
	p, err := sv.Solve(ctx, solve.Problem{Method: solve.Sitewise})
	if err != nil {
		panic(err)
	}
	rep, err := eval.FromData(ctx, sv, p, s, eval.Options{Bootstrap: 50, Seed: 1, Workers: 1})
	if err != nil {
		panic(err)
	}
	fmt.Printf("robust value %.3f [%.3f, %.3f], pessimistic value %.3f\n", rep.PolicyValue, rep.ValueCILow, rep.ValueCIHigh, rep.PessimisticValue)
	for _, site := range rep.Sites {
		fmt.Printf("site %s: %.3f\n", site.Site, site.Value)
	}
	a, err := eval.AgreementOf(ctx, p, tb, 1)
	if err != nil {
		panic(err)
	}
	fmt.Printf("agreement with the recorded actions %.3f over %g rows\n", a.Share, a.Rows)
	ex, err := eval.NewModel(m).Exact(p)
	if err != nil {
		panic(err)
	}
	fmt.Printf("exact: optimal %.3f, policy %.3f, suboptimality %.3f\n", ex.OptimalValue, ex.PolicyValue, ex.Suboptimality)
	// Output:
	// robust value 4.559 [4.527, 4.809], pessimistic value 4.266
	// site 1: 4.943
	// site 2: 4.838
	// agreement with the recorded actions 0.980 over 3500 rows
	// exact: optimal 4.900, policy 4.900, suboptimality 0.000
}
