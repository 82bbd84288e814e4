package eval

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/grmdp/grmdp/sim"
	"github.com/grmdp/grmdp/solve"
)

func hardModel(t testing.TB, H int) *sim.Hard {
	t.Helper()
	m, err := sim.New(sim.ScenarioConvergence, sim.Params{Seed: 5, Trajectories: []int{40, 90, 150}, Horizon: H})
	if err != nil {
		t.Fatal(err)
	}
	return m.(*sim.Hard)
}

// minCol returns min_k p[k][a].
func minCol(p [][]float64, a int) float64 {
	v := math.Inf(1)
	for k := range p {
		v = min(v, p[k][a])
	}
	return v
}

// constantPolicy is a policy that takes action a in every state (the
// behaviour method with a constant behaviour table).
func constantPolicy(hm *sim.Hard, a int) *solve.Policy {
	m := hm.Map()
	H := hm.Horizon()
	beh := make([][]int32, H)
	for h := range beh {
		beh[h] = []int32{int32(a), int32(a), int32(a)}
	}
	return &solve.Policy{Method: solve.Behaviour, Map: m, H: H, D: m.Dim(), A: m.A, BehaviourAction: beh, ValueEstimate: math.NaN()}
}

// Exact evaluation on the hard instance reproduces the paper's closed
// forms: V*_1(s0) = (H-1) min_k p_1^k, and a policy choosing b_{a+1} at s0
// has SubOpt = (H-1) [min_k p_1^k - min_k p_{a+1}^k].
func TestExactHardInstance(t *testing.T) {
	for _, H := range []int{2, 6, 40} {
		hm := hardModel(t, H)
		p := hm.P()
		m := hm.Map()
		me := NewModel(hm)
		wantOpt := float64(H-1) * minCol(p, 0)
		t.Run(fmt.Sprintf("H=%d/optimal", H), func(t *testing.T) {
			// Algorithm 1's representation of the robust optimal Q: w_h =
			// w*_h, no penalty; its greedy action at s0 is b_1.
			w := hm.OptimalWeights()
			steps := make([]solve.StepCoef, H)
			for h := range steps {
				steps[h] = solve.StepCoef{W: w[h], M: make([]float64, m.Dim())}
			}
			pol := &solve.Policy{Method: solve.Sitewise, Map: m, H: H, D: m.Dim(), A: m.A, Fallback: solve.FallbackLowest,
				Runs: []solve.PolicyRun{{Group: "all", Steps: steps}}}
			if a, _, _ := pol.Act(1, []float64{0}, make([]float64, m.A)); a != 0 {
				t.Fatalf("the optimal policy chooses action %d at s0, want 0 (b_1)", a)
			}
			got, err := me.Exact(pol)
			if err != nil {
				t.Fatal(err)
			}
			if got.Suboptimality != 0 {
				t.Errorf("Suboptimality: got %v, want 0", got.Suboptimality)
			}
			if !near(got.OptimalValue, wantOpt, 1e-12) || !near(got.PolicyValue, wantOpt, 1e-12) {
				t.Errorf("OptimalValue %v, PolicyValue %v: want (H-1) min_k p1 = %v", got.OptimalValue, got.PolicyValue, wantOpt)
			}
			if !near(got.ValueGap, 0, 1e-12) {
				t.Errorf("ValueGap: got %v, want 0 (Vhat_1 = V*_1)", got.ValueGap)
			}
			if got.States != ExactStates {
				t.Errorf("States: got %d, want %d", got.States, ExactStates)
			}
		})
		for a := 0; a < m.A; a++ {
			t.Run(fmt.Sprintf("H=%d/always-b%d", H, a+1), func(t *testing.T) {
				got, err := me.Exact(constantPolicy(hm, a))
				if err != nil {
					t.Fatal(err)
				}
				want := float64(H-1) * (minCol(p, 0) - minCol(p, a))
				if !near(got.Suboptimality, want, 1e-12) {
					t.Errorf("Suboptimality: got %.15g, want (H-1)(min p1 - min p%d) = %.15g", got.Suboptimality, a+1, want)
				}
				if !near(got.OptimalValue, wantOpt, 1e-12) {
					t.Errorf("OptimalValue: got %v, want %v", got.OptimalValue, wantOpt)
				}
				if !near(got.PolicyValue, float64(H-1)*minCol(p, a), 1e-12) {
					t.Errorf("PolicyValue: got %v, want %v", got.PolicyValue, float64(H-1)*minCol(p, a))
				}
				if !math.IsNaN(got.ValueGap) {
					t.Errorf("ValueGap of a behaviour policy: got %v, want NaN", got.ValueGap)
				}
				if a == 1 && H > 1 && !(got.Suboptimality > 0) {
					t.Errorf("always b2 should be suboptimal, got %v", got.Suboptimality)
				}
			})
		}
	}
}

// A policy learned on the hard instance's data is evaluated consistently
// with the closed form of its first action, and a policy of another shape
// is rejected.
func TestExactLearnedPolicyAndCheck(t *testing.T) {
	const H = 5
	hm := hardModel(t, H)
	tb, err := hm.Sample(11)
	if err != nil {
		t.Fatal(err)
	}
	m := hm.Map()
	s := solve.DefaultSettings
	s.Fallback = solve.FallbackLowest
	pol := solvePolicy(t, tb, m, s, solve.Problem{Method: solve.Sitewise})
	me := NewModel(hm)
	got, err := me.Exact(pol)
	if err != nil {
		t.Fatal(err)
	}
	a, _, _ := pol.Act(1, []float64{0}, make([]float64, m.A))
	p := hm.P()
	want := float64(H-1) * (minCol(p, 0) - minCol(p, a))
	if !near(got.Suboptimality, want, 1e-12) {
		t.Errorf("learned policy (action %d at s0): Suboptimality %.15g, closed form %.15g", a, got.Suboptimality, want)
	}
	q := make([]float64, m.A)
	pol.QValues(1, []float64{0}, q)
	best := 0.0
	for _, x := range q {
		best = max(best, x)
	}
	if !near(got.ValueGap, got.OptimalValue-best, 1e-12) {
		t.Errorf("ValueGap: got %v, want V* - max_a Qhat_1(s0) = %v", got.ValueGap, got.OptimalValue-best)
	}
	// The policy's own value estimate is Vhat_1(s0) averaged over the
	// data's initial states, all s0 here.
	if !near(pol.ValueEstimate, best, 1e-12) {
		t.Errorf("ValueEstimate %v, Vhat_1(s0) %v", pol.ValueEstimate, best)
	}
	ev, err := newSolver(t, tb, m, s).EvaluatePolicy(context.Background(), pol, pol.Beta)
	if err != nil {
		t.Fatal(err)
	}
	if !near(ev.LowerBound, best, 1e-12) {
		t.Errorf("LowerBound %v, Vhat_1(s0) %v", ev.LowerBound, best)
	}

	other := constantPolicy(hardModel(t, H+1), 0)
	if _, err := me.Exact(other); !errors.Is(err, solve.ErrBadPolicy) {
		t.Errorf("a policy with H = %d under a model with H = %d: got error %v, want ErrBadPolicy", H+1, H, err)
	}
}

// With row weights (a compressed sample of the same model) robust FQE
// averages over trajectories, not over distinct rows.
func TestEvaluateCompressedHardInstance(t *testing.T) {
	const H = 5
	hm := hardModel(t, H)
	tb, err := hm.SampleCompressed(11)
	if err != nil {
		t.Fatal(err)
	}
	m := hm.Map()
	s := solve.DefaultSettings
	s.Fallback = solve.FallbackLowest
	pol := constantPolicy(hm, 0)
	ev, err := newSolver(t, tb, m, s).EvaluatePolicy(context.Background(), pol, 0)
	if err != nil {
		t.Fatal(err)
	}
	// Every initial state is s0, so the mean of V^pi_1 over initial states
	// is V^pi_1(s0), whatever the number of distinct step-1 rows.
	if want := denseFQE(tb, &m, allSites(len(tb.Sites)), s.Lambda, 0, func(int, []float64) int { return 0 }); !near(ev.Value, want, 1e-10) {
		t.Errorf("Value: got %.15g, want %.15g", ev.Value, want)
	}
	for k, v := range ev.Sites {
		if want := denseFQE(tb, &m, []int{k}, s.Lambda, 0, func(int, []float64) int { return 0 }); !near(v, want, 1e-10) {
			t.Errorf("Sites[%d]: got %.15g, want %.15g", k, v, want)
		}
	}
}
