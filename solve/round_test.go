package solve

// Tests of the backward pass one step at a time from per-site sums
// (Round.Solve, Round.RHS, PlanFor), the federated coordinator's and
// site's parts.

import (
	"context"
	"fmt"
	"testing"
)

// stepGrams returns grams[k] = site k's Gram of step h, or of every step
// when stationary.
func stepGrams(t *testing.T, st *Stats, h int, stationary bool) [][]Gram {
	t.Helper()
	ctx := context.Background()
	K := len(st.Table.Sites)
	grams := make([][]Gram, K)
	lo, hi := h, h
	if stationary {
		lo, hi = 1, st.Table.H
	}
	for u := lo; u <= hi; u++ {
		step, err := st.StepGrams(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		for k := range grams {
			grams[k] = append(grams[k], step[k])
		}
	}
	return grams
}

// TestRoundFromSumsEqualsDriver checks that, for every map and method,
// with and without stationary transitions, solving each step with a Round
// from the per-site Grams and the per-site right-hand sides that
// Round.RHS forms (given the driver's step-(h+1) coefficients) gives bit
// for bit the driver's w, m and Lambda^{-1} at that step, with and without
// disclosure control, and that PlanFor's groups and betas are the
// policy's.
func TestRoundFromSumsEqualsDriver(t *testing.T) {
	ctx := context.Background()
	for _, stationary := range []bool{false, true} {
		s := DefaultSettings
		s.Stationary = stationary
		for _, m := range testMaps() {
			differs := 0
			tb := randomTable(t, m, 4, 3, []int{20, 35, 9, 26}, 11)
			for _, dc := range []Disclosure{{}, {MinCount: 3, MinRows: 5}} {
				st, err := NewStatsDisclosed(ctx, tb, m, BlocksFor(tb, &m), 2, dc)
				if err != nil {
					t.Fatal(err)
				}
				sv := NewSolver(st, s)
				for _, prob := range everyProblem() {
					what := fmt.Sprintf("%s %s %+v stationary %v", m.Kind, prob.Method, dc, stationary)
					p, err := sv.Solve(ctx, prob)
					if err != nil {
						t.Fatal(err)
					}
					pl, err := PlanFor(prob, s, tb.Sites, tb.Trajectories, tb.H, m.Dim())
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
					for r, pass := range pl.Passes {
						if pass.Name != p.Runs[r].Group || !sameBits(pass.Beta, p.Runs[r].Beta) {
							t.Fatalf("%s: pass %d is %s beta %v, the run %s beta %v", what, r, pass.Name, pass.Beta, p.Runs[r].Group, p.Runs[r].Beta)
						}
					}
					rd := &Round{Passes: pl.Passes, Settings: s}
					for h := tb.H; h >= 1; h-- {
						var next []*StepCoef
						for r := range p.Runs {
							if h < tb.H {
								next = append(next, &p.Runs[r].Steps[h])
							}
						}
						rhs, err := rd.RHS(ctx, st, h, next)
						if err != nil {
							t.Fatal(err)
						}
						cs, err := rd.Solve(ctx, &st.Layout, h, RoundSums{Grams: stepGrams(t, st, h, stationary), RHS: rhs})
						if err != nil {
							t.Fatal(err)
						}
						for r, c := range cs {
							want := &p.Runs[r].Steps[h-1]
							if !bitsEqual(c.W, want.W) || !bitsEqual(c.M, want.M) || !bitsEqual(c.Linv, want.Linv) {
								t.Fatalf("%s: run %d step %d: the round's w, m or Lambda^-1 differ from the driver's", what, r, h)
							}
						}
						if !stationary {
							continue
						}
						// The non-stationary step from the same sums is
						// another regression: the test can tell them apart.
						ns := &Round{Passes: pl.Passes, Settings: DefaultSettings}
						if c2, err := ns.Solve(ctx, &st.Layout, h, RoundSums{Grams: stepGrams(t, st, h, false), RHS: rhs}); err == nil && len(c2) > 0 && !bitsEqual(c2[0].W, p.Runs[0].Steps[h-1].W) {
							differs++
						}
					}
				}
			}
			if stationary && differs == 0 {
				t.Fatalf("%s: one step's Gram gives the stationary w everywhere: the case tests nothing", m.Kind)
			}
		}
	}
}

// TestRoundRefusesMissingSums checks that Round.Solve refuses a pass
// naming a site without a right-hand side, or sums of unequal lengths,
// instead of solving from zeros.
func TestRoundRefusesMissingSums(t *testing.T) {
	ctx := context.Background()
	m := testMaps()[0]
	tb := randomTable(t, m, 2, 2, []int{10, 10}, 3)
	st, err := NewStats(ctx, tb, m, BlocksFor(tb, &m), 1)
	if err != nil {
		t.Fatal(err)
	}
	grams := stepGrams(t, st, 1, false)
	rd := &Round{Passes: []Pass{{Name: "all", Groups: [][]int{{0, 1}}, Beta: 1}}, Settings: DefaultSettings}
	if _, err := rd.Solve(ctx, &st.Layout, 1, RoundSums{Grams: grams, RHS: [][][]float64{{make([]float64, m.Dim()), nil}}}); err == nil {
		t.Fatal("a member without a right-hand side was accepted")
	}
	if _, err := rd.Solve(ctx, &st.Layout, 1, RoundSums{Grams: grams, RHS: [][][]float64{{make([]float64, m.Dim())}}}); err == nil {
		t.Fatal("one right-hand side for two Grams was accepted")
	}
	if _, err := PlanFor(Problem{Method: Pooled}, DefaultSettings, []string{"a", "b"}, []int{3}, 2, m.Dim()); err == nil {
		t.Fatal("two sites with one trajectory count were accepted")
	}
}
