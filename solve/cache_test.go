package solve

import (
	"testing"
)

// groupingOf tells apart groupings whose sites are the same but split
// differently, and gives equal keys to equal groupings.
func TestGroupingKeys(t *testing.T) {
	a := groupingOf([][]int{{0, 1}, {2}})
	b := groupingOf([][]int{{0}, {1, 2}})
	c := groupingOf([][]int{{0, 1, 2}})
	if a == b || a == c || b == c {
		t.Fatalf("distinct groupings share a key: %q %q %q", a, b, c)
	}
	if a != groupingOf([][]int{{0, 1}, {2}}) {
		t.Fatal("equal groupings have different keys")
	}
	if groupingOf([][]int{{300}}) == groupingOf([][]int{{44}}) {
		t.Fatal("site indices above 127 collide")
	}
	if keyOfRun([][]int{{0}}, pevi, 0.5) == keyOfRun([][]int{{0}}, featurewise, 0.5) {
		t.Fatal("runs of different penalties share a key")
	}
}

// A solver made by WithPenalty shares the factors (the same pointers: no
// refactorisation) but not the cached runs, and solves as a fresh solver
// with those settings does, bit for bit; solving with it leaves the
// original's runs alone.
func TestWithPenaltySharesFactorsOnly(t *testing.T) {
	ctx := t.Context()
	m := testMaps()[1]
	tb := randomTable(t, m, 3, 4, []int{30, 20, 40}, 7)
	st, err := NewStats(ctx, tb, m, BlocksFor(tb, &m), 0)
	if err != nil {
		t.Fatal(err)
	}
	s := DefaultSettings
	s.C = 2e-3
	sv := NewSolver(st, s)
	if _, err := sv.Solve(ctx, Problem{Method: Sitewise}); err != nil {
		t.Fatal(err)
	}
	runs := len(sv.runs)
	s2 := s
	s2.C = 7e-3
	derived := sv.WithPenalty(s2)
	got, err := derived.Solve(ctx, Problem{Method: Sitewise})
	if err != nil {
		t.Fatal(err)
	}
	want, err := NewSolver(st, s2).Solve(ctx, Problem{Method: Sitewise})
	if err != nil {
		t.Fatal(err)
	}
	for h := range got.Runs[0].Steps {
		g, w := &got.Runs[0].Steps[h], &want.Runs[0].Steps[h]
		if !bitsEqual(g.W, w.W) || !bitsEqual(g.M, w.M) || got.Beta != want.Beta {
			t.Fatalf("step %d: the derived solver's coefficients differ from a fresh solver's", h+1)
		}
	}
	if len(sv.runs) != runs {
		t.Fatalf("the derived solver added runs to the original's cache: %d, was %d", len(sv.runs), runs)
	}
	if derived.factors != sv.factors {
		t.Fatal("the derived solver does not share the factor cache")
	}
}
