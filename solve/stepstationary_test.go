package solve

import (
	"context"
	"fmt"
	"testing"
)

// TestStepStationaryFromSumsEqualsDriver checks the stationary variant one
// step at a time: for every map and method, with and without disclosure
// control, StepStationary from every site's Grams of every step and the
// stationary right-hand sides SiteRHS forms (every step's rows, given the
// driver's step-(h+1) coefficients) gives bit for bit the stationary
// driver's w, m and Lambda^{-1} at every step.
func TestStepStationaryFromSumsEqualsDriver(t *testing.T) {
	ctx := context.Background()
	s := DefaultSettings
	s.Stationary = true
	for _, m := range testMaps() {
		differs := 0
		tb := randomTable(t, m, 4, 3, []int{20, 35, 9, 26}, 13)
		for _, dc := range []Disclosure{{}, {MinCount: 3, MinRows: 5}} {
			st, err := NewStatsDisclosed(ctx, tb, m, BlocksFor(tb, &m), 2, dc)
			if err != nil {
				t.Fatal(err)
			}
			// grams[k][h-1]: site k's Gram of step h.
			grams := make([][]Gram, len(tb.Sites))
			for h := 1; h <= tb.H; h++ {
				step, err := st.StepGrams(ctx, h)
				if err != nil {
					t.Fatal(err)
				}
				for k := range grams {
					grams[k] = append(grams[k], step[k])
				}
			}
			sv := NewSolver(st, s)
			for _, prob := range everyProblem() {
				what := fmt.Sprintf("%s %s %+v", m.Kind, prob.Method, dc)
				p, err := sv.Solve(ctx, prob)
				if err != nil {
					t.Fatal(err)
				}
				pl, err := PlanFor(prob, s, tb.Sites, tb.Trajectories, tb.H, m.Dim())
				if err != nil {
					t.Fatal(err)
				}
				for h := tb.H; h >= 1; h-- {
					var next []*StepCoef
					for r := range p.Runs {
						if h < tb.H {
							next = append(next, &p.Runs[r].Steps[h])
						}
					}
					rhs, err := sv.SiteRHS(ctx, h, pl.Passes, next)
					if err != nil {
						t.Fatal(err)
					}
					for r, pass := range pl.Passes {
						c, err := StepStationary(ctx, &st.Layout, s, h, pass, grams, rhs[r])
						if err != nil {
							t.Fatal(err)
						}
						want := &p.Runs[r].Steps[h-1]
						if !bitsEqual(c.W, want.W) || !bitsEqual(c.M, want.M) || !bitsEqual(c.Linv, want.Linv) {
							t.Fatalf("%s: run %d step %d: StepStationary's w, m or Lambda^-1 differ from the driver's", what, r, h)
						}
						// The non-stationary step from the same sums is another
						// regression: the test can tell them apart.
						one := make([]Gram, len(grams))
						for k := range grams {
							one[k] = grams[k][h-1]
						}
						if c2, err := Step(ctx, &st.Layout, s, h, pass, one, rhs[r]); err == nil && !bitsEqual(c2.W, want.W) {
							differs++
						}
					}
				}
			}
		}
		if differs == 0 {
			t.Fatalf("%s: one step's Gram gives the stationary w everywhere: the case tests nothing", m.Kind)
		}
	}
}
