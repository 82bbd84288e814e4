package solve_test

import (
	"context"
	"fmt"

	"github.com/grmdp/grmdp/sim"
	"github.com/grmdp/grmdp/solve"
)

// Solve Algorithm 1 site by site on data drawn from the trap scenario: the
// statistics of the table once, then a policy, its value estimate, and the
// policy's decision at a state.
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
	sv := solve.NewSolver(st, solve.DefaultSettings)
	p, err := sv.Solve(ctx, solve.Problem{Method: solve.Sitewise})
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s over sites %v: H = %d, d = %d, beta = %.4f\n", p.Method, tb.Sites, p.H, p.D, p.Beta)
	fmt.Printf("value estimate %.4f\n", p.ValueEstimate)
	q := make([]float64, p.A)
	a, v, ev := p.Act(1, tb.Steps[0].State[:tb.W], q)
	fmt.Printf("at step 1, first row's state: action %d, Qhat %.4f, evidence %v\n", a, v, ev)
	// Output:
	// sitewise over sites [1 2]: H = 7, d = 6, beta = 0.0781
	// value estimate 4.2659
	// at step 1, first row's state: action 0, Qhat 4.2551, evidence true
}

// Solve the last step of a sitewise pass from sums alone, as a party that
// holds no rows does: the sites' Grams of the step and their right-hand
// sides (formed by Round.RHS from their rows) give the coefficients the
// in-process solve finds, bit for bit.
func ExampleRound() {
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
	prob := solve.Problem{Method: solve.Sitewise}
	pl, err := solve.PlanFor(prob, solve.DefaultSettings, tb.Sites, tb.Trajectories, tb.H, fm.Dim())
	if err != nil {
		panic(err)
	}
	rd := &solve.Round{Passes: pl.Passes, Settings: solve.DefaultSettings}
	h := tb.H
	rhs, err := rd.RHS(ctx, st, h, nil)
	if err != nil {
		panic(err)
	}
	grams, err := st.StepGrams(ctx, h)
	if err != nil {
		panic(err)
	}
	sums := solve.RoundSums{Grams: [][]solve.Gram{{grams[0]}, {grams[1]}}, RHS: rhs}
	coefs, err := rd.Solve(ctx, &st.Layout, h, sums)
	if err != nil {
		panic(err)
	}
	p, err := solve.NewSolver(st, solve.DefaultSettings).Solve(ctx, prob)
	if err != nil {
		panic(err)
	}
	fmt.Printf("w_%d = %.4f\n", h, coefs[0].W)
	fmt.Println("as solved in process:", fmt.Sprint(coefs[0].W) == fmt.Sprint(p.Runs[0].Steps[h-1].W))
	// Output:
	// w_7 = [0.6009 0.7475 0.6053 0.4826 0.2664 -0.0507]
	// as solved in process: true
}
