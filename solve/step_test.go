package solve

// Tests of the backward pass one step at a time from per-site sums (Step,
// Solver.SiteRHS, PlanFor), the federated coordinator's and site's parts.

import (
	"context"
	"fmt"
	"testing"
)

// TestStepFromSumsEqualsDriver checks that, for every map and method,
// solving each step from the per-site Grams and the per-site right-hand
// sides that SiteRHS forms (given the driver's step-(h+1) coefficients)
// gives bit for bit the driver's w, m and Lambda^{-1} at that step, with
// and without disclosure control, and that PlanFor's groups and betas are
// the policy's.
func TestStepFromSumsEqualsDriver(t *testing.T) {
	ctx := context.Background()
	for _, m := range testMaps() {
		tb := randomTable(t, m, 4, 3, []int{20, 35, 9, 26}, 11)
		for _, dc := range []Disclosure{{}, {MinCount: 3, MinRows: 5}} {
			st, err := NewStatsDisclosed(ctx, tb, m, BlocksFor(tb, &m), 2, dc)
			if err != nil {
				t.Fatal(err)
			}
			sv := NewSolver(st, DefaultSettings)
			for _, prob := range everyProblem() {
				what := fmt.Sprintf("%s %s %+v", m.Kind, prob.Method, dc)
				p, err := sv.Solve(ctx, prob)
				if err != nil {
					t.Fatal(err)
				}
				pl, err := PlanFor(prob, DefaultSettings, tb.Sites, tb.Trajectories, tb.H, m.Dim())
				if err != nil {
					t.Fatal(err)
				}
				if len(pl.Passes) != len(p.Runs) || len(pl.Groups) != len(p.Groups) {
					t.Fatalf("%s: plan has %d passes and %d groups, the policy %d runs and %d groups", what, len(pl.Passes), len(pl.Groups), len(p.Runs), len(p.Groups))
				}
				for i, g := range pl.Groups {
					if g.Name != p.Groups[i].Name || g.Trajectories != p.Groups[i].Trajectories || fmt.Sprint(g.Sites) != fmt.Sprint(p.Groups[i].Sites) {
						t.Fatalf("%s: plan group %d is %+v, the policy's %+v", what, i, g, p.Groups[i])
					}
				}
				for h := tb.H; h >= 1; h-- {
					grams, err := st.StepGrams(ctx, h)
					if err != nil {
						t.Fatal(err)
					}
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
						if pass.Name != p.Runs[r].Group || !sameBits(pass.Beta, p.Runs[r].Beta) {
							t.Fatalf("%s: pass %d is %s beta %v, the run %s beta %v", what, r, pass.Name, pass.Beta, p.Runs[r].Group, p.Runs[r].Beta)
						}
						c, err := Step(ctx, &st.Layout, DefaultSettings, h, pass, grams, rhs[r])
						if err != nil {
							t.Fatal(err)
						}
						want := &p.Runs[r].Steps[h-1]
						if !bitsEqual(c.W, want.W) || !bitsEqual(c.M, want.M) || !bitsEqual(c.Linv, want.Linv) {
							t.Fatalf("%s: run %d step %d: Step's w, m or Lambda^-1 differ from the driver's", what, r, h)
						}
					}
				}
			}
		}
	}
}

// TestStepRefusesMissingSums checks that Step refuses a pass naming a site
// without a right-hand side, or sums of unequal lengths, instead of
// solving from zeros.
func TestStepRefusesMissingSums(t *testing.T) {
	ctx := context.Background()
	m := testMaps()[0]
	tb := randomTable(t, m, 2, 2, []int{10, 10}, 3)
	st, err := NewStats(ctx, tb, m, BlocksFor(tb, &m), 1)
	if err != nil {
		t.Fatal(err)
	}
	grams, err := st.StepGrams(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	pass := Pass{Name: "all", Groups: [][]int{{0, 1}}, Beta: 1}
	if _, err := Step(ctx, &st.Layout, DefaultSettings, 1, pass, grams, [][]float64{make([]float64, m.Dim()), nil}); err == nil {
		t.Fatal("a member without a right-hand side was accepted")
	}
	if _, err := Step(ctx, &st.Layout, DefaultSettings, 1, pass, grams, [][]float64{make([]float64, m.Dim())}); err == nil {
		t.Fatal("one right-hand side for two Grams was accepted")
	}
	if _, err := PlanFor(Problem{Method: Pooled}, DefaultSettings, []string{"a", "b"}, []int{3}, 2, m.Dim()); err == nil {
		t.Fatal("two sites with one trajectory count were accepted")
	}
}
