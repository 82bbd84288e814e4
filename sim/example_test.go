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

// Per-hospital values of a rule on the vitals against observed care,
// by Monte Carlo with common random numbers, and the best policy that
// sees the latent severity: an upper bound, up to the Monte Carlo error
// (at hospital 4, which gives no vasopressors, the rule is fluids always,
// and the best latent policy barely improves on it).
func ExampleClinical() {
	m, err := sim.NewClinical(sim.Params{Seed: 1})
	if err != nil {
		panic(err)
	}
	// Fluids, with vasopressors too when lactate > 4 and SOFA > 10 and the
	// hospital gives both (the latent bound is over its formulary).
	escalate := func(site, step int, vitals []float64) int {
		if vitals[0] > 4 && vitals[1] > 10 && m.Formulary(site, 3) {
			return 3
		}
		return 1
	}
	rule := m.Value(escalate, 20000, 1)
	care := m.BehaviourValue(20000, 1)
	best := m.LatentValue(nil)
	for k := range rule {
		fmt.Printf("hospital %d: rule %.3f (se %.3f), care %.3f, latent best %.3f\n", k+1, rule[k].Value, rule[k].StdErr, care[k].Value, best[k])
	}
	// Output:
	// hospital 1: rule 0.567 (se 0.004), care 0.507, latent best 0.623
	// hospital 2: rule 0.598 (se 0.003), care 0.561, latent best 0.625
	// hospital 3: rule 0.697 (se 0.003), care 0.624, latent best 0.757
	// hospital 4: rule 0.763 (se 0.003), care 0.693, latent best 0.760
	// hospital 5: rule 0.493 (se 0.004), care 0.440, latent best 0.576
}
