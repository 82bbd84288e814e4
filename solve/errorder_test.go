package solve

import (
	"context"
	"errors"
	"testing"

	"github.com/grmdp/grmdp/features"
)

// errorOf runs f repeatedly and returns its error's message, failing the
// test unless every run fails with the same message.
func errorOf(t *testing.T, runs int, f func() error) string {
	t.Helper()
	var first string
	for r := 0; r < runs; r++ {
		err := f()
		if err == nil {
			t.Fatal("no error")
		}
		if r == 0 {
			first = err.Error()
		} else if err.Error() != first {
			t.Fatalf("run %d: %q, run 0: %q", r, err, first)
		}
	}
	return first
}

// A Lambda singular at several (step, group) cells fails with the error of
// the first cell in processing order, whatever the workers: the same
// message on one worker and on several, run after run.
func TestSingularErrorAnyWorkers(t *testing.T) {
	ctx := context.Background()
	m := features.Map{Kind: features.ActionBlock, A: 3, P: 2, StateColumns: []string{"s1", "s2"}}
	// Two trajectories per site: rank-deficient blocks at every cell.
	tb := randomTable(t, m, 4, 5, []int{2, 2, 2, 2}, 3)
	for _, method := range []Method{Sitewise, Pooled, PEVIAvg} {
		var want string
		for _, w := range []int{1, 4} {
			got := errorOf(t, 20, func() error {
				st, err := NewStats(ctx, tb, m, m.Blocks(), w)
				if err != nil {
					return err
				}
				s := DefaultSettings
				s.Lambda, s.Workers = 1e-300, w
				_, err = NewSolver(st, s).Solve(ctx, Problem{Method: method})
				if !errors.Is(err, ErrSingular) {
					t.Fatalf("%s, workers %d: %v, want ErrSingular", method, w, err)
				}
				return err
			})
			if w == 1 {
				want = got
			} else if got != want {
				t.Errorf("%s: workers %d: %q, workers 1: %q", method, w, got, want)
			}
		}
	}
}

// The same for the lockstep sweep: runs of several folds and ridge
// parameters, singular at several cells.
func TestLockstepSingularErrorAnyWorkers(t *testing.T) {
	ctx := context.Background()
	m := features.Map{Kind: features.ActionBlock, A: 3, P: 2, StateColumns: []string{"s1", "s2"}}
	tb := randomTable(t, m, 4, 5, []int{3, 3, 3, 3}, 3)
	of := make([]int32, ntrajOf(tb))
	for i := range of {
		of[i] = int32(i % 2)
	}
	st, err := NewStats(ctx, tb, m, m.Blocks(), 1)
	if err != nil {
		t.Fatal(err)
	}
	var runs []RunSpec
	for _, hold := range []int{-1, 0, 1} {
		for _, method := range []Method{Sitewise, PEVIMin} {
			s := DefaultSettings
			s.Lambda = 1e-300
			runs = append(runs, RunSpec{Holdout: hold, Problem: Problem{Method: method}, Settings: s})
		}
	}
	var want string
	for _, w := range []int{1, 4} {
		got := errorOf(t, 20, func() error {
			_, err := SolveLockstep(ctx, st, Folds{Of: of, K: 2}, runs, w)
			return err
		})
		if w == 1 {
			want = got
		} else if got != want {
			t.Errorf("workers %d: %q, workers 1: %q", w, got, want)
		}
	}
}

// The same for the bootstrap replicates: the table's Lambda is regular,
// the replicates' (two trajectories each per site) are singular at
// several (step, site, replicate) cells.
func TestReplicateSingularErrorAnyWorkers(t *testing.T) {
	ctx := context.Background()
	m := features.Map{Kind: features.ActionBlock, A: 3, P: 2, StateColumns: []string{"s1", "s2"}}
	tb := randomTable(t, m, 3, 4, []int{60, 60, 60}, 5)
	st, err := NewStats(ctx, tb, m, m.Blocks(), 1)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewSolver(st, DefaultSettings).Solve(ctx, Problem{Method: Sitewise})
	if err != nil {
		t.Fatal(err)
	}
	const B = 6
	n := ntrajOf(tb)
	counts := make([]uint8, n*B)
	for i := 0; i < n; i++ {
		for b := 0; b < B; b++ {
			if (i+b)%30 == 0 {
				counts[i*B+b] = 1
			}
		}
	}
	var want string
	for _, w := range []int{1, 4} {
		got := errorOf(t, 20, func() error {
			s := DefaultSettings
			s.Lambda, s.Workers = 1e-300, w
			_, err := NewSolver(st, s).Evaluate(ctx, p, 0.3, EvaluateOptions{Replicates: &Replicates{B: B, Counts: counts}})
			return err
		})
		if w == 1 {
			want = got
		} else if got != want {
			t.Errorf("workers %d: %q, workers 1: %q", w, got, want)
		}
	}
}
