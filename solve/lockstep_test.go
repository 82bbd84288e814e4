package solve

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/grmdp/grmdp/traj"
)

// trainingTable is t with the rows of fold f's trajectories weighted 0,
// counting only the other folds' trajectories and rows (as package
// dataset's TrainingTable).
func trainingTable(t *traj.Table, of []int32, f int32) *traj.Table {
	w := *t
	w.Steps = make([]traj.Step, len(t.Steps))
	w.Trajectories = make([]int, len(t.Sites))
	w.Rows = 0
	for h := range t.Steps {
		s := t.Steps[h]
		wt := make([]float64, s.Len())
		for k := range t.Sites {
			for j := int(s.SiteStart[k]); j < int(s.SiteStart[k+1]); j++ {
				if f >= 0 && of[s.Traj[j]] == f {
					continue
				}
				wt[j] = 1
				if s.Weight != nil {
					wt[j] = s.Weight[j]
				}
				w.Rows++
				if h == 0 {
					w.Trajectories[k]++
				}
			}
		}
		s.Weight = wt
		w.Steps[h] = s
	}
	return &w
}

// TestSolveLockstepMatchesSeparateSolves checks that every lockstep run
// (every method, several penalties and ridge parameters, every fold left
// out and none) equals bit for bit the policy solved alone on the table
// with its fold's rows weighted 0, for every map and several worker
// counts, row weights or none.
func TestSolveLockstepMatchesSeparateSolves(t *testing.T) {
	ctx := context.Background()
	for _, m := range testMaps() {
		for _, weighted := range []bool{false, true} {
			tb := randomTable(t, m, 4, 5, []int{40, 25, 60, 10}, 3)
			rng := rand.New(rand.NewPCG(7, 11))
			if weighted {
				for h := range tb.Steps {
					s := &tb.Steps[h]
					s.Weight = make([]float64, s.Len())
					for j := range s.Weight {
						s.Weight[j] = float64(1 + rng.IntN(3))
					}
				}
			}
			const K = 3
			of := make([]int32, ntrajOf(tb))
			for i := range of {
				of[i] = int32(rng.IntN(K))
			}
			st, err := NewStats(ctx, tb, m, BlocksFor(tb, &m), 0)
			if err != nil {
				t.Fatal(err)
			}
			var runs []RunSpec
			for _, prob := range everyProblem() {
				for _, hold := range []int{-1, 0, 1, 2} {
					for ci, c := range []float64{2e-3, 0, 1e-4} {
						s := DefaultSettings
						s.C = c
						if ci == 2 {
							s.Lambda = 0.5
						}
						if ci == 1 && hold == 1 {
							s.Beta, s.BetaSet = 0.3, true
						}
						runs = append(runs, RunSpec{Holdout: hold, Problem: prob, Settings: s})
					}
				}
			}
			for _, workers := range []int{1, 3} {
				got, err := SolveLockstep(ctx, st, Folds{Of: of, K: K}, runs, workers)
				if err != nil {
					t.Fatal(err)
				}
				for i, r := range runs {
					tt := trainingTable(tb, of, int32(r.Holdout))
					sst, err := NewStats(ctx, tt, m, BlocksFor(tb, &m), 0)
					if err != nil {
						t.Fatal(err)
					}
					s := r.Settings
					s.Workers = workers
					want, err := NewSolver(sst, s).Solve(ctx, r.Problem)
					if err != nil {
						t.Fatal(err)
					}
					name := fmt.Sprintf("%v weighted=%v workers=%d run %d (%s, fold %d, lambda %g, c %g)", m.Kind, weighted, workers, i, r.Problem.Method, r.Holdout, s.Lambda, s.C)
					sameLockstepPolicy(t, name, want, got[i])
				}
			}
		}
	}
}

// sameLockstepPolicy fails unless got equals want bit for bit in every
// field a solve sets.
func sameLockstepPolicy(t *testing.T, what string, want, got *Policy) {
	t.Helper()
	if !sameBits(got.ValueEstimate, want.ValueEstimate) || math.Float64bits(got.Beta) != math.Float64bits(want.Beta) ||
		got.Lambda != want.Lambda || got.C != want.C || got.Rows != want.Rows || len(got.Runs) != len(want.Runs) ||
		got.Fallback != want.Fallback || got.BetaGiven != want.BetaGiven {
		t.Fatalf("%s: value %v beta %v rows %d runs %d, alone %v %v %d %d", what, got.ValueEstimate, got.Beta, got.Rows, len(got.Runs),
			want.ValueEstimate, want.Beta, want.Rows, len(want.Runs))
	}
	if fmt.Sprint(got.Groups) != fmt.Sprint(want.Groups) {
		t.Fatalf("%s: groups %v, alone %v", what, got.Groups, want.Groups)
	}
	for r := range want.Runs {
		if got.Runs[r].Group != want.Runs[r].Group || math.Float64bits(got.Runs[r].Beta) != math.Float64bits(want.Runs[r].Beta) {
			t.Fatalf("%s: run %d is %s beta %v, alone %s %v", what, r, got.Runs[r].Group, got.Runs[r].Beta, want.Runs[r].Group, want.Runs[r].Beta)
		}
		for h := range want.Runs[r].Steps {
			g, w := &got.Runs[r].Steps[h], &want.Runs[r].Steps[h]
			same := bitsEqual(g.W, w.W) && bitsEqual(g.M, w.M) && bitsEqual(g.Linv, w.Linv) &&
				bitsEqual(g.NoEvidenceBySite, w.NoEvidenceBySite) && bitsEqual(g.Cond, w.Cond) &&
				bitsEqual([]float64{g.NoEvidence, g.Penalty, g.PenaltyTerms}, []float64{w.NoEvidence, w.Penalty, w.PenaltyTerms}) &&
				len(g.Nu) == len(w.Nu)
			for k := range w.Nu {
				same = same && bitsEqual(g.Nu[k], w.Nu[k])
			}
			if !same {
				t.Fatalf("%s: run %d step %d differs from the solve alone", what, r, h+1)
			}
		}
	}
	for h := range want.BehaviourAction {
		if !slices.Equal(got.BehaviourAction[h], want.BehaviourAction[h]) {
			t.Fatalf("%s: behaviour at step %d %v, alone %v", what, h+1, got.BehaviourAction[h], want.BehaviourAction[h])
		}
	}
	if len(got.EvidenceCounts) != len(want.EvidenceCounts) {
		t.Fatalf("%s: evidence counts of %d steps, alone %d", what, len(got.EvidenceCounts), len(want.EvidenceCounts))
	}
	for h := range want.EvidenceCounts {
		if !bitsEqual(got.EvidenceCounts[h], want.EvidenceCounts[h]) {
			t.Fatalf("%s: evidence counts at step %d differ", what, h+1)
		}
	}
}

// TestSolveLockstepRefuses checks the settings lockstep runs refuse.
func TestSolveLockstepRefuses(t *testing.T) {
	ctx := context.Background()
	m := testMaps()[0]
	tb := randomTable(t, m, 4, 5, []int{40, 25, 60, 10}, 3)
	st, err := NewStats(ctx, tb, m, BlocksFor(tb, &m), 0)
	if err != nil {
		t.Fatal(err)
	}
	of := make([]int32, ntrajOf(tb))
	stationary := DefaultSettings
	stationary.Stationary = true
	for _, c := range []struct {
		name  string
		folds Folds
		run   RunSpec
		want  string
	}{
		{"stationary", Folds{Of: of, K: 2}, RunSpec{Holdout: 0, Problem: Problem{Method: Sitewise}, Settings: stationary}, "stationary"},
		{"fold out of range", Folds{Of: of, K: 2}, RunSpec{Holdout: 2, Problem: Problem{Method: Sitewise}, Settings: DefaultSettings}, "leaves out fold 2"},
		{"short folds", Folds{Of: of[1:], K: 2}, RunSpec{Holdout: 0, Problem: Problem{Method: Sitewise}, Settings: DefaultSettings}, "folds of"},
		{"no lambda", Folds{Of: of, K: 2}, RunSpec{Holdout: 0, Problem: Problem{Method: Sitewise}}, "ridge"},
	} {
		_, err := SolveLockstep(ctx, st, c.folds, []RunSpec{c.run}, 0)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one with %q", c.name, err, c.want)
		}
	}
}

// BenchmarkCrossFitLearning measures learning a cross-fit's 5 fold
// policies and 5 cloning policies (site-wise, the benchmark scenario's
// shape): in one lockstep sweep, and as one solve per fold on the table
// with the fold's rows weighted 0.
func BenchmarkCrossFitLearning(b *testing.B) {
	ctx := context.Background()
	tb, m := simTable(b, 2000)
	const K = 5
	of := make([]int32, ntrajOf(tb))
	for i := range of {
		of[i] = int32(i % K)
	}
	probs := []Problem{{Method: Sitewise}, {Method: Behaviour}}
	b.Run("lockstep", func(b *testing.B) {
		for b.Loop() {
			st, err := NewStats(ctx, tb, m, BlocksFor(tb, &m), 0)
			if err != nil {
				b.Fatal(err)
			}
			var runs []RunSpec
			for f := 0; f < K; f++ {
				for _, prob := range probs {
					runs = append(runs, RunSpec{Holdout: f, Problem: prob, Settings: DefaultSettings})
				}
			}
			if _, err := SolveLockstep(ctx, st, Folds{Of: of, K: K}, runs, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("separate", func(b *testing.B) {
		for b.Loop() {
			for f := 0; f < K; f++ {
				st, err := NewStats(ctx, trainingTable(tb, of, int32(f)), m, BlocksFor(tb, &m), 0)
				if err != nil {
					b.Fatal(err)
				}
				sv := NewSolver(st, DefaultSettings)
				if err := sv.Prepare(ctx, probs); err != nil {
					b.Fatal(err)
				}
				for _, prob := range probs {
					if _, err := sv.Solve(ctx, prob); err != nil {
						b.Fatal(err)
					}
				}
			}
		}
	})
}
