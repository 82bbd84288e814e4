package dataset

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"testing"

	"github.com/grmdp/grmdp/eval"
	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/sim"
	"github.com/grmdp/grmdp/solve"
)

// TestLearnCandidatesSeparate checks that the candidates a cross-fitted
// choice learns (in one lockstep sweep, or fold by fold with step
// pooling) are, to 1e-12, the policies separate solves learn from the
// reweighted folds ([TrainingTable]) under each candidate's settings:
// every coefficient, penalty and value estimate, and the same decisions
// on every row.
func TestLearnCandidatesSeparate(t *testing.T) {
	ctx := context.Background()
	d := smallBenchmark(t)
	s := solve.DefaultSettings
	s.Workers = 2
	o := SelectOptions{Settings: s, Problem: solve.Problem{Method: solve.Sitewise},
		Cs: []float64{5e-4, 5e-6, 0}, Lambdas: []float64{0.1, 1}, Stationary: []bool{false, true}}
	cands := o.Candidates()
	pevi := solve.Problem{Method: solve.PEVIMin}
	cands = append(cands, Candidate{C: s.C, Lambda: s.Lambda, Problem: &pevi})
	const K = 3
	fold := Folds(d.table, K, 7)
	blocks := solve.BlocksFor(d.table, &d.fmap)
	pols, err := d.learnCandidates(ctx, o, cands, blocks, fold, K)
	if err != nil {
		t.Fatal(err)
	}
	for f := 0; f < K; f++ {
		train, err := solve.NewStats(ctx, TrainingTable(d.table, fold, int32(f)), d.fmap, blocks, 2)
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range cands {
			want, err := solve.NewSolver(train, c.settings(o.Settings)).Solve(ctx, c.problem(o.Problem))
			if err != nil {
				t.Fatal(err)
			}
			if msg := policyDiff(want, pols[i][f], 1e-12); msg != "" {
				t.Errorf("fold %d, %s: %s", f+1, c, msg)
			}
			wa, _, err := solve.ActAll(ctx, want, d.table, 2, 1)
			if err != nil {
				t.Fatal(err)
			}
			ga, _, err := solve.ActAll(ctx, pols[i][f], d.table, 2, 1)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(wa, ga) {
				t.Errorf("fold %d, %s: the decisions differ", f+1, c)
			}
		}
	}
}

// policyDiff describes the first difference between p and q beyond tol
// (relative to the larger magnitude, absolute below 1), or returns "".
func policyDiff(p, q *solve.Policy, tol float64) string {
	near := func(a, b float64) bool {
		if math.IsInf(a, 0) || math.IsNaN(a) {
			return math.Float64bits(a) == math.Float64bits(b) || (math.IsNaN(a) && math.IsNaN(b))
		}
		return math.Abs(a-b) <= tol*max(1, math.Abs(a), math.Abs(b))
	}
	vec := func(what string, a, b []float64) string {
		if len(a) != len(b) {
			return fmt.Sprintf("%s: %d entries against %d", what, len(a), len(b))
		}
		for x := range a {
			if !near(a[x], b[x]) {
				return fmt.Sprintf("%s[%d]: %v against %v", what, x, a[x], b[x])
			}
		}
		return ""
	}
	if p.Method != q.Method || p.Lambda != q.Lambda || p.C != q.C || !near(p.Beta, q.Beta) || len(p.Runs) != len(q.Runs) {
		return fmt.Sprintf("method %s, lambda %g, c %g, beta %g, %d runs against %s, %g, %g, %g, %d",
			p.Method, p.Lambda, p.C, p.Beta, len(p.Runs), q.Method, q.Lambda, q.C, q.Beta, len(q.Runs))
	}
	if !near(p.ValueEstimate, q.ValueEstimate) {
		return fmt.Sprintf("value estimate %v against %v", p.ValueEstimate, q.ValueEstimate)
	}
	for r := range p.Runs {
		pr, qr := &p.Runs[r], &q.Runs[r]
		if pr.Group != qr.Group || !near(pr.Beta, qr.Beta) || len(pr.Steps) != len(qr.Steps) {
			return fmt.Sprintf("run %d: group %s, beta %g against %s, %g", r, pr.Group, pr.Beta, qr.Group, qr.Beta)
		}
		for h := range pr.Steps {
			ps, qs := &pr.Steps[h], &qr.Steps[h]
			at := func(what string) string { return fmt.Sprintf("run %d step %d %s", r, h+1, what) }
			for _, c := range []struct {
				what string
				a, b []float64
			}{{"W", ps.W, qs.W}, {"M", ps.M, qs.M}, {"Linv", ps.Linv, qs.Linv}, {"Delta", ps.Delta, qs.Delta}} {
				if msg := vec(at(c.what), c.a, c.b); msg != "" {
					return msg
				}
			}
			if len(ps.Nu) != len(qs.Nu) || len(ps.SiteNu) != len(qs.SiteNu) {
				return at("Nu: different numbers of sites")
			}
			for k := range ps.Nu {
				if msg := vec(at(fmt.Sprintf("Nu[%d]", k)), ps.Nu[k], qs.Nu[k]); msg != "" {
					return msg
				}
			}
			for k := range ps.SiteNu {
				if msg := vec(at(fmt.Sprintf("SiteNu[%d]", k)), ps.SiteNu[k], qs.SiteNu[k]); msg != "" {
					return msg
				}
			}
			if !near(ps.NoEvidence, qs.NoEvidence) || !near(ps.Penalty, qs.Penalty) {
				return fmt.Sprintf("%s: %v, %v against %v, %v", at("no evidence, penalty"), ps.NoEvidence, ps.Penalty, qs.NoEvidence, qs.Penalty)
			}
		}
	}
	if len(p.BehaviourAction) != len(q.BehaviourAction) {
		return "behaviour tables of different lengths"
	}
	for h := range p.BehaviourAction {
		if !slices.Equal(p.BehaviourAction[h], q.BehaviourAction[h]) {
			return fmt.Sprintf("behaviour table at step %d", h+1)
		}
	}
	return ""
}

// TestChooseNeedsGain: a learned candidate with the highest score is not
// chosen unless its worst site beats the fallback's (gain above 0); among
// the eligible the highest score wins, the more pessimistic on ties.
func TestChooseNeedsGain(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	cand := func(score, gain *float64) ScoredSettings {
		return ScoredSettings{C: f(0), Lambda: f(1), Score: score, Gain: gain}
	}
	fb := ScoredSettings{Candidate: Candidate{Fallback: true}, Score: f(0.2), Gain: f(0)}
	for _, tc := range []struct {
		name  string
		cands []ScoredSettings
		want  int
	}{
		{"higher score, no gain", []ScoredSettings{fb, cand(f(0.5), f(-0.1))}, 0},
		{"higher score, gain 0", []ScoredSettings{fb, cand(f(0.5), f(0))}, 0},
		{"gain, score below the fallback's", []ScoredSettings{fb, cand(f(0.1), f(0.05))}, 0},
		{"gain, no gain recorded", []ScoredSettings{fb, cand(f(0.5), nil)}, 0},
		{"gain and score", []ScoredSettings{fb, cand(f(0.3), f(0.05)), cand(f(0.6), f(-1)), cand(f(0.4), f(0.01))}, 3},
		{"tie to the earlier", []ScoredSettings{fb, cand(f(0.4), f(0.05)), cand(f(0.4), f(0.5))}, 1},
	} {
		s := &Selection{Candidates: tc.cands}
		s.choose()
		if s.Index != tc.want {
			t.Errorf("%s: chose %d, want %d", tc.name, s.Index, tc.want)
		}
	}
}

// TestEvaluateFoldSeparate checks that a fold's held-out evaluations,
// with the candidates that decide alike evaluated once
// ([Data.evaluateFold]), give every candidate the estimates and
// replicates of its own evaluation, bit for bit, on a path of c whose
// largest values leave every decision to the fallback.
func TestEvaluateFoldSeparate(t *testing.T) {
	ctx := context.Background()
	d := smallBenchmark(t)
	s := solve.DefaultSettings
	s.Workers = 2
	o := SelectOptions{Settings: s, Problem: solve.Problem{Method: solve.Sitewise}, Bootstrap: 7, Level: DefaultSelectLevel,
		Cs: []float64{50, 5, 5e-4, 0}, Lambdas: []float64{1e-7, 1}, Stationary: []bool{false, true}}
	cands := o.Candidates()
	const K = 3
	fold := Folds(d.table, K, 7)
	blocks := solve.BlocksFor(d.table, &d.fmap)
	pols, err := d.learnCandidates(ctx, o, cands, blocks, fold, K)
	if err != nil {
		t.Fatal(err)
	}
	alike := 0
	for f := 0; f < K; f++ {
		held, err := solve.NewStats(ctx, HeldOutTable(d.table, fold, int32(f)), d.fmap, blocks, 2)
		if err != nil {
			t.Fatal(err)
		}
		held.ShareReplicateFactors()
		got := make([][]*eval.Report, len(cands))
		evs, err := d.evaluateFold(ctx, o, cands, pols, f, held, got)
		if err != nil {
			t.Fatal(err)
		}
		sep, err := solve.NewStats(ctx, held.Table, d.fmap, blocks, 2)
		if err != nil {
			t.Fatal(err)
		}
		opts := eval.Options{Bootstrap: o.Bootstrap, Seed: FoldSeed(o.Seed, f), Level: o.Level, Workers: 2, EstimatesOnly: true}
		var acts [][]int32
		for i, c := range cands {
			p := pols[i][f]
			es := EvalSettings(p, 2)
			want, err := eval.FromData(ctx, solve.NewSolver(sep, es), p, es, opts)
			if err != nil {
				t.Fatal(err)
			}
			if msg := estimatesDiff(want, got[i][0]); msg != "" {
				t.Errorf("fold %d, %s: %s", f+1, c, msg)
			}
			a, ev, err := solve.ActAll(ctx, p, held.Table, 2, 1)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(ev, evs[i]) {
				t.Errorf("fold %d, %s: the evidence differs", f+1, c)
			}
			for j := range i {
				if slices.Equal(acts[j], a) && heldOutLambda(pols[j][f]) == heldOutLambda(p) {
					alike++
					break
				}
			}
			acts = append(acts, a)
		}
	}
	if alike == 0 {
		t.Errorf("no two candidates decide alike: the test does not exercise the shared evaluations")
	}
}

// estimatesDiff describes the first difference between the held-out
// estimates of want and got (every site's value, interval and replicates
// by every estimator, the observed care and the beta), or returns "".
func estimatesDiff(want, got *eval.Report) string {
	same := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }
	if !same(want.Beta, got.Beta) {
		return fmt.Sprintf("beta %v against %v", got.Beta, want.Beta)
	}
	for k := range want.Sites {
		for _, e := range eval.Estimators {
			w, g := want.Sites[k].Estimates[e], got.Sites[k].Estimates[e]
			if !same(w.Value, g.Value) || !same(w.CILow, g.CILow) || !same(w.CIHigh, g.CIHigh) {
				return fmt.Sprintf("site %d, %s: %+v against %+v", k, e, g, w)
			}
		}
		if !same(want.Observed[k].Value, got.Observed[k].Value) {
			return fmt.Sprintf("site %d: observed care %v against %v", k, got.Observed[k].Value, want.Observed[k].Value)
		}
	}
	for _, e := range eval.Estimators {
		w, g := want.Replicates(e), got.Replicates(e)
		if len(w) != len(g) {
			return fmt.Sprintf("%s: %d replicates against %d", e, len(g), len(w))
		}
		for b := range w {
			for k := range w[b] {
				if !same(w[b][k], g[b][k]) {
					return fmt.Sprintf("%s: replicate %d, site %d: %v against %v", e, b, k, g[b][k], w[b][k])
				}
			}
		}
	}
	w, g := want.ObservedReplicates(), got.ObservedReplicates()
	for b := range w {
		for k := range w[b] {
			if !same(w[b][k], g[b][k]) {
				return fmt.Sprintf("observed care: replicate %d, site %d: %v against %v", b, k, g[b][k], w[b][k])
			}
		}
	}
	return ""
}

// TestChooseTies: among the eligible, the choice is the most pessimistic
// candidate the held-out data do not show below the best (the paired
// interval of the difference of their worst sites reaches 0).
func TestChooseTies(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	cand := func(score, worst float64, reps ...float64) ScoredSettings {
		return ScoredSettings{C: f(0), Lambda: f(1), Score: f(score), Gain: f(0.1),
			Worst: WorstHeldOut{HeldOut: HeldOut{Value: worst}}, worstReps: reps}
	}
	fb := ScoredSettings{Candidate: Candidate{Fallback: true}, Score: f(0.2), Gain: f(0),
		Worst: WorstHeldOut{HeldOut: HeldOut{Value: 0.3}}, worstReps: []float64{0.1, 0.3, 0.5}}
	for _, tc := range []struct {
		name  string
		cands []ScoredSettings
		want  int
	}{
		// Paired differences -0.1 held out, {-0.3, -0.1, 0.1} in the
		// replicates: the basic interval's upper limit, -0.2 less the
		// replicates' 5% quantile, is above 0.
		{"within the data's resolution", []ScoredSettings{fb, cand(0.5, 0.9, 0.6, 0.8, 1.0), cand(0.6, 1, 0.9, 0.9, 0.9)}, 1},
		// Paired differences -0.1 on every replicate: below.
		{"below on every replicate", []ScoredSettings{fb, cand(0.5, 0.9, 0.8, 0.8, 0.8), cand(0.6, 1, 0.9, 0.9, 0.9)}, 2},
		{"without replicates", []ScoredSettings{fb, cand(0.5, 0.9), cand(0.6, 1)}, 2},
		{"the fallback never ties", []ScoredSettings{fb, cand(0.3, 0.35, 0.1, 0.3, 0.5)}, 1},
		{"a tie must be eligible", []ScoredSettings{fb, {C: f(0), Lambda: f(1), Score: f(0.5), Gain: f(-0.1),
			Worst: WorstHeldOut{HeldOut: HeldOut{Value: 1}}, worstReps: []float64{0.9, 0.9, 0.9}}, cand(0.6, 1, 0.9, 0.9, 0.9)}, 2},
	} {
		s := &Selection{Level: 0.9, Candidates: tc.cands}
		s.choose()
		if s.Index != tc.want {
			t.Errorf("%s: chose %d, want %d", tc.name, s.Index, tc.want)
		}
	}
}

// smallBenchmark opens the benchmark scenario's three sites of 60, 40 and
// 90 trajectories over 4 steps (seed 2) through the action-block map.
func smallBenchmark(t *testing.T) *Data {
	t.Helper()
	m, err := sim.New(sim.ScenarioBenchmark, sim.Params{Trajectories: []int{60, 40, 90}, Horizon: 4, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	tb, err := m.Sample(1)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "data.parquet")
	if err := parquetio.WriteTrajectories(path, tb, parquetio.WriteOptions{StateColumns: m.Map().StateColumns, IntSites: true}); err != nil {
		t.Fatal(err)
	}
	d, err := Open(context.Background(), []string{path}, Options{Map: features.Spec{Kind: features.ActionBlock}, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	return d
}
