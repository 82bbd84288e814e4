package eval

import (
	"context"
	"testing"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/solve"
)

// A leverage support whose Lambda is singular at several steps and sites
// fails with the first step's error whatever the workers, run after run.
func TestLeverageSupportErrorAnyWorkers(t *testing.T) {
	m := features.Map{Kind: features.ActionBlock, A: 3, P: 2, StateColumns: []string{"s1", "s2"}}
	tb := randomTable(t, m, 4, 5, []int{2, 2, 2, 2}, 3)
	p := solvePolicy(t, tb, m, solve.DefaultSettings, solve.Problem{Method: solve.Sitewise})
	s := solve.DefaultSettings
	s.Lambda = 1e-300
	sv := newSolver(t, tb, m, s)
	var want string
	for _, w := range []int{1, 4} {
		for run := 0; run < 20; run++ {
			_, _, err := leverageSupport(context.Background(), sv, p, tb, w)
			if err == nil {
				t.Fatal("no error")
			}
			if want == "" {
				want = err.Error()
			} else if err.Error() != want {
				t.Fatalf("workers %d, run %d: %q, want %q", w, run, err, want)
			}
		}
	}
}
