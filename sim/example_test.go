package sim_test

import (
	"fmt"

	"github.com/grmdp/grmdp/sim"
)

// The hard instance: V*_1(s0) = (H-1) min_k p_1^k, and a policy that
// takes b_2 at s0 loses (H-1)(min_k p_1^k - min_k p_2^k).
func ExampleHard() {
	m, err := sim.NewHard(sim.Params{MinTrajectories: 500, Seed: 1})
	if err != nil {
		panic(err)
	}
	s0 := [][]float64{{0}}
	vstar := m.OptimalValue(s0)[0]
	alwaysB2 := func(h int, state []float64) int { return 1 }
	v := m.PolicyValue(alwaysB2, s0)[0]
	fmt.Printf("V* = %.4f = %.4f\n", vstar, m.OptimalValueClosedForm())
	fmt.Printf("SubOpt(b2) = %.4f = %.4f\n", vstar-v, m.SubOpt(1))

	tab, err := m.Sample(7)
	if err != nil {
		panic(err)
	}
	fmt.Println(tab.Sites, tab.Trajectories, tab.A, tab.H)
	// Output:
	// V* = 19.7889 = 19.7889
	// SubOpt(b2) = 0.7918 = 0.7918
	// [1 2 3 4] [500 750 1000 1500] 7 40
}

// Exact robust evaluation of a policy under the benchmark model.
func ExampleBenchmark() {
	m, err := sim.New(sim.ScenarioBenchmark, sim.Params{Seed: 1})
	if err != nil {
		panic(err)
	}
	states := m.InitialStates(200, 1)
	vstar := m.OptimalValue(states)
	v := m.PolicyValue(func(h int, s []float64) int { return 0 }, states)
	sub := 0.0
	for i := range states {
		sub += (vstar[i] - v[i]) / float64(len(states))
	}
	fmt.Printf("mean SubOpt of always-0 over 200 states: %.2f\n", sub)
	// Output:
	// mean SubOpt of always-0 over 200 states: 1.30
}
