package eval

import (
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/grmdp/grmdp/solve"
)

// With one site, robust fitted-Q evaluation is ordinary fitted-Q
// evaluation: Value, PessimisticValue and the site's own value all match the
// dense reference, through solve.Solver.EvaluatePolicy and FromData.
func TestOneSiteIsOrdinaryFQE(t *testing.T) {
	ctx := context.Background()
	for _, m := range testMaps() {
		for _, lambda := range []float64{1, 0.25} {
			t.Run(fmt.Sprintf("%v/lambda=%g", m.Kind, lambda), func(t *testing.T) {
				// The policy is learned on other data: it is a fixed map
				// from (h, s) to an action, unrelated to the evaluation data.
				pset := solve.DefaultSettings
				pset.Beta, pset.BetaSet = 0.05, true
				p := solvePolicy(t, randomTable(t, m, 2, 4, []int{40, 30}, 101), m, pset, solve.Problem{Method: solve.Sitewise})
				pi := actOf(p)

				tb := randomTable(t, m, 1, 4, []int{60}, 7)
				s := solve.DefaultSettings
				s.Lambda = lambda
				sv := newSolver(t, tb, m, s)
				const beta = 0.3
				ev, err := sv.EvaluatePolicy(ctx, p, beta)
				if err != nil {
					t.Fatal(err)
				}
				want := denseFQE(tb, &m, []int{0}, lambda, 0, pi)
				wantLB := denseFQE(tb, &m, []int{0}, lambda, beta, pi)
				if !near(ev.Value, want, 1e-10) {
					t.Errorf("Value: got %.15g, want %.15g", ev.Value, want)
				}
				if !near(ev.LowerBound, wantLB, 1e-10) {
					t.Errorf("LowerBound: got %.15g, want %.15g", ev.LowerBound, wantLB)
				}
				if len(ev.Sites) != 1 || !near(ev.Sites[0], want, 1e-10) {
					t.Errorf("Sites: got %v, want [%.15g]", ev.Sites, want)
				}
				if ev.Beta != beta {
					t.Errorf("Beta: got %v, want %v", ev.Beta, beta)
				}
				if want == 0 || want == wantLB {
					t.Errorf("degenerate case: value %v, lower bound %v", want, wantLB)
				}

				// FromData: the same lower bound, with the site-wise beta of
				// Algorithm 1 (G = 1, N_max = N); the values are the dense
				// recursion's with the evaluation's ridge parameter
				// EvalLambda instead of the policy's.
				want = denseFQE(tb, &m, []int{0}, min(lambda, EvalLambda), 0, pi)
				rep, err := FromData(ctx, sv, p, s, Options{})
				if err != nil {
					t.Fatal(err)
				}
				wantBeta := solve.Beta(s.C, m.Dim(), 1, tb.H, float64(tb.Trajectories[0]), s.Xi)
				if !near(rep.Beta, wantBeta, 1e-14) {
					t.Errorf("report beta: got %v, want %v", rep.Beta, wantBeta)
				}
				if !near(rep.PolicyValue, want, 1e-10) {
					t.Errorf("PolicyValue: got %.15g, want %.15g", rep.PolicyValue, want)
				}
				if lb := denseFQE(tb, &m, []int{0}, lambda, wantBeta, pi); !near(rep.PessimisticValue, lb, 1e-10) {
					t.Errorf("report LowerBound: got %.15g, want %.15g", rep.PessimisticValue, lb)
				}
				if len(rep.Sites) != 1 || !near(rep.Sites[0].Value, want, 1e-10) || rep.WorstSite != tb.Sites[0] {
					t.Errorf("report sites: got %+v (worst %q), want value %.15g", rep.Sites, rep.WorstSite, want)
				}
				if !math.IsNaN(rep.ValueCILow) || !math.IsNaN(rep.ValueCIHigh) {
					t.Errorf("without bootstrap the interval should be NaN, got [%v, %v]", rep.ValueCILow, rep.ValueCIHigh)
				}
			})
		}
	}
}

// With several sites, Value is robust FQE (row-min of the sites' nu at
// every step), PessimisticValue the same with the penalty, and Sites[k] is
// ordinary FQE on site k's data alone.
func TestSeveralSitesRobustFQE(t *testing.T) {
	ctx := context.Background()
	for _, m := range testMaps() {
		t.Run(m.Kind.String(), func(t *testing.T) {
			pset := solve.DefaultSettings
			pset.Beta, pset.BetaSet = 0.02, true
			p := solvePolicy(t, randomTable(t, m, 3, 5, []int{30, 40, 50}, 202), m, pset, solve.Problem{Method: solve.Pooled})
			pi := actOf(p)

			tb := randomTable(t, m, 3, 5, []int{35, 20, 55}, 13)
			sv := newSolver(t, tb, m, solve.DefaultSettings)
			const beta = 0.2
			ev, err := sv.EvaluatePolicy(ctx, p, beta)
			if err != nil {
				t.Fatal(err)
			}
			all := allSites(3)
			tests := []struct {
				name      string
				got, want float64
			}{
				{"Value", ev.Value, denseFQE(tb, &m, all, 1, 0, pi)},
				{"LowerBound", ev.LowerBound, denseFQE(tb, &m, all, 1, beta, pi)},
			}
			for k := range all {
				tests = append(tests, struct {
					name      string
					got, want float64
				}{fmt.Sprintf("Sites[%d]", k), ev.Sites[k], denseFQE(tb, &m, []int{k}, 1, 0, pi)})
			}
			for _, tc := range tests {
				if !near(tc.got, tc.want, 1e-10) {
					t.Errorf("%s: got %.15g, want %.15g", tc.name, tc.got, tc.want)
				}
			}
			// The robust value differs from the plain pooled mean of the
			// sites' own values here: the row-min matters.
			mean := 0.0
			for k := range all {
				mean += ev.Sites[k] * float64(tb.Trajectories[k])
			}
			mean /= float64(tb.Trajectories[0] + tb.Trajectories[1] + tb.Trajectories[2])
			if ev.Value >= mean {
				t.Errorf("robust value %v is not below the sites' mean own value %v", ev.Value, mean)
			}
		})
	}
}

// Robust FQE of Algorithm 1's own site-wise policy, with the policy's beta,
// reproduces the policy's value estimate: the policy acts greedily, so the
// evaluated action's Qhat is Vhat at every state.
func TestEvaluateOwnPolicyIsValueEstimate(t *testing.T) {
	ctx := context.Background()
	for _, m := range testMaps() {
		for _, tc := range []struct {
			fallback solve.Fallback
			beta     float64 // < 0: the formula's
		}{
			{solve.FallbackLowest, -1},
			{solve.FallbackLowest, 0},
			{solve.FallbackLowest, 0.4},
			{solve.FallbackBehaviour, 0.4},
		} {
			t.Run(fmt.Sprintf("%v/%s/beta=%g", m.Kind, tc.fallback, tc.beta), func(t *testing.T) {
				tb := randomTable(t, m, 3, 4, []int{30, 45, 25}, 31)
				s := solve.DefaultSettings
				s.Fallback = tc.fallback
				if tc.beta >= 0 {
					s.Beta, s.BetaSet = tc.beta, true
				}
				sv := newSolver(t, tb, m, s)
				p, err := sv.Solve(ctx, solve.Problem{Method: solve.Sitewise})
				if err != nil {
					t.Fatal(err)
				}
				if p.Beta != sv.SitewiseBeta() {
					t.Fatalf("policy beta %v, SitewiseBeta %v", p.Beta, sv.SitewiseBeta())
				}
				// Greedy: the recommended action's Qhat is the max.
				q := make([]float64, m.A)
				for h := 1; h <= tb.H; h++ {
					st := &tb.Steps[h-1]
					for j := 0; j < st.Len(); j++ {
						state := st.State[j*tb.W : (j+1)*tb.W]
						a, qa, _ := p.Act(h, state, q)
						best := 0.0
						for _, x := range q {
							best = max(best, x)
						}
						if qa != best || q[a] != best {
							t.Fatalf("step %d row %d: action %d has Qhat %v, max is %v", h, j, a, q[a], best)
						}
					}
				}
				ev, err := sv.EvaluatePolicy(ctx, p, p.Beta)
				if err != nil {
					t.Fatal(err)
				}
				if !near(ev.LowerBound, p.ValueEstimate, 1e-12) {
					t.Errorf("LowerBound %.15g, policy ValueEstimate %.15g", ev.LowerBound, p.ValueEstimate)
				}
				if p.Beta == 0 && !near(ev.Value, p.ValueEstimate, 1e-12) {
					t.Errorf("beta 0: Value %.15g, policy ValueEstimate %.15g", ev.Value, p.ValueEstimate)
				}
			})
		}
	}
}
