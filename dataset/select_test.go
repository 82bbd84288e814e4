package dataset_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"reflect"
	"sort"
	"testing"

	"github.com/grmdp/grmdp/dataset"
	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// trapData writes a tabular data set (two states, A = 8, H = 2, three
// sites) where care is good and a learned policy without penalty is bad:
// action 0, taken 85% of the time, earns 0.45 on average; each other
// action is taken a few times and earns 1 with probability 0.15 and 0
// otherwise, so that some of them look better than 0.45 on the rows
// a pooled policy without penalty is learned from.
func trapData(t *testing.T) *dataset.Data {
	t.Helper()
	const A, H = 8, 2
	rng := rand.New(rand.NewPCG(3, 4))
	b := traj.NewBuilder(traj.Options{State: traj.StateSpec{Columns: []string{"state"}, Integer: true, Max: 2}, Actions: A})
	c := &traj.Chunk{Src: traj.Origin{File: "trap"}, W: 1}
	for k, n := range []int{150, 120, 180} {
		for tr := 0; tr < n; tr++ {
			for h := 1; h <= H; h++ {
				a, r := 0, 0.35+0.2*rng.Float64()
				if rng.Float64() < 0.15 {
					a = 1 + rng.IntN(A-1)
					r = 0
					if rng.Float64() < 0.15 {
						r = 1
					}
				}
				c.SiteStr = append(c.SiteStr, fmt.Sprint(k+1))
				c.TrajInt = append(c.TrajInt, int64(tr))
				c.Step = append(c.Step, int64(h))
				c.ActionInt = append(c.ActionInt, int64(a))
				c.Reward = append(c.Reward, r)
				c.State = append(c.State, float64(rng.IntN(2)))
			}
		}
	}
	if err := b.Add(c); err != nil {
		t.Fatal(err)
	}
	tb, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "trap.parquet")
	if err := parquetio.WriteTrajectories(path, tb, parquetio.WriteOptions{StateColumns: []string{"state"}, IntSites: true}); err != nil {
		t.Fatal(err)
	}
	d, err := dataset.Open(context.Background(), []string{path}, dataset.Options{Map: features.Spec{Kind: features.Tabular, S: 2, StateColumns: []string{"state"}}, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// checkChoice checks the rule of the choice: the chosen candidate is
// eligible (the fallback, or a gain above 0 and a score at least the
// fallback's); the best is the eligible candidate with the highest score
// (the earliest of equal scores); the chosen candidate ties with the best
// and no eligible candidate before it (more pessimistic) does; and its
// score is at least the fallback's.
func checkChoice(t *testing.T, sel *dataset.Selection) {
	t.Helper()
	score := func(i int) float64 {
		if s := sel.Candidates[i].Score; s != nil {
			return *s
		}
		return -1e308
	}
	if !sel.Candidates[0].Candidate.Fallback {
		t.Fatal("the first candidate is not the behaviour fallback")
	}
	if !sel.Eligible(sel.Index) {
		t.Errorf("the chosen candidate %d is not eligible", sel.Index)
	}
	for i, c := range sel.Candidates {
		eligible := c.Candidate.Fallback || c.Gain != nil && *c.Gain > 0 && score(i) >= score(0)
		if eligible != sel.Eligible(i) {
			t.Errorf("candidate %d: eligible %v, want %v", i, sel.Eligible(i), eligible)
		}
	}
	best := 0
	for i := range sel.Candidates {
		if sel.Eligible(i) && score(i) > score(best) {
			best = i
		}
	}
	if !sel.Ties(sel.Index, best) {
		t.Errorf("the chosen candidate %d does not tie with the best %d", sel.Index, best)
	}
	for i := range sel.Index {
		if sel.Eligible(i) && sel.Ties(i, best) {
			t.Errorf("candidate %d ties with the best %d and is more pessimistic than the chosen %d", i, best, sel.Index)
		}
	}
	if score(sel.Index) < score(0) {
		t.Errorf("the chosen candidate's held-out lower limit %v is below the fallback's %v", score(sel.Index), score(0))
	}
}

// TestSelectFallsBack: where every learned policy is worse than cloning
// out of sample, the choice is the behaviour fallback and the refit is
// behaviour cloning.
func TestSelectFallsBack(t *testing.T) {
	d := trapData(t)
	ctx := context.Background()
	s := solve.DefaultSettings
	s.Workers = 2
	o := dataset.SelectOptions{Settings: s, Problem: solve.Problem{Method: solve.Pooled}, Cs: []float64{0}, Lambdas: []float64{1e-3},
		Seed: 1, Bootstrap: 50}
	res, sel, err := d.SolveSelected(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	checkChoice(t, sel)
	fb, learned := sel.Candidates[0], sel.Candidates[1]
	t.Logf("fallback %v (worst %v), c = 0: %v (worst %v)", *fb.Score, fb.Worst.Value, *learned.Score, learned.Worst.Value)
	if !(learned.Worst.Value < fb.Worst.Value-0.1) {
		t.Fatalf("the learned policy's held-out worst site %v is not much below cloning's %v: the scenario does not test the fallback", learned.Worst.Value, fb.Worst.Value)
	}
	if !sel.IsFallback() || res.Policy.Method != solve.Behaviour {
		t.Fatalf("chose candidate %d (%v), refit %s; want the behaviour fallback", sel.Index, sel.Candidates[sel.Index].Candidate, res.Policy.Method)
	}
	if sel.Chosen.C != nil || sel.Chosen.Lambda != nil {
		t.Errorf("chosen %+v, want c and lambda null for the fallback", sel.Chosen)
	}
	if res.Policy.Selection == nil {
		t.Error("the policy does not record the selection")
	}
}

// TestSelectRule checks the choice's rule over a path on the benchmark
// scenario, and that the refit is the problem under the chosen settings.
func TestSelectRule(t *testing.T) {
	d, _ := benchmarkData(t, 2)
	s := solve.DefaultSettings
	s.Workers = 2
	o := dataset.SelectOptions{Settings: s, Problem: solve.Problem{Method: solve.Sitewise}, Cs: []float64{5e-4, 5e-6, 0},
		Lambdas: []float64{1, 0.1}, Seed: 2, Bootstrap: 30}
	res, sel, err := d.SolveSelected(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(sel.Candidates) != 7 {
		t.Fatalf("%d candidates, want 1 + 3 x 2", len(sel.Candidates))
	}
	checkChoice(t, sel)
	c := sel.Candidates[sel.Index].Candidate
	if !c.Fallback && (res.Policy.C != c.C || res.Policy.Lambda != c.Lambda || res.Policy.Method != solve.Sitewise) {
		t.Errorf("refit with c %g, lambda %g, %s; chosen %v", res.Policy.C, res.Policy.Lambda, res.Policy.Method, c)
	}
	// Candidates from the most pessimistic: c down, then lambda down.
	var order []string
	for _, sc := range sel.Candidates[1:] {
		order = append(order, sc.Candidate.String())
	}
	want := []string{"c 0.0005, lambda 1", "c 0.0005, lambda 0.1", "c 5e-06, lambda 1", "c 5e-06, lambda 0.1", "c 0, lambda 1", "c 0, lambda 0.1"}
	if !reflect.DeepEqual(order, want) {
		t.Errorf("candidates %v, want %v", order, want)
	}
}

// TestSelectionKeys pins the keys of the selection's JSON (solve --json's
// selection, and the policy's record).
func TestSelectionKeys(t *testing.T) {
	d, _ := benchmarkData(t, 2)
	s := solve.DefaultSettings
	s.Workers = 2
	sel, err := d.Select(context.Background(), dataset.SelectOptions{Settings: s, Problem: solve.Problem{Method: solve.Sitewise},
		Cs: []float64{5e-4, 0}, Folds: 3, Seed: 1, Bootstrap: 10})
	if err != nil {
		t.Fatal(err)
	}
	js, err := sel.JSON()
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(js, &doc); err != nil {
		t.Fatal(err)
	}
	keys := func(m any) []string {
		var out []string
		for k := range m.(map[string]any) {
			out = append(out, k)
		}
		sort.Strings(out)
		return out
	}
	check := func(what string, got, want []string) {
		t.Helper()
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s keys %v, want %v", what, got, want)
		}
	}
	check("selection", keys(doc), []string{"candidates", "chosen", "folds", "level", "seed"})
	check("chosen", keys(doc["chosen"]), []string{"c", "lambda"})
	cands := doc["candidates"].([]any)
	if len(cands) != 3 {
		t.Fatalf("%d candidates, want 3", len(cands))
	}
	for _, c := range cands {
		check("candidate", keys(c), []string{"c", "gain", "lambda", "no_evidence_share", "score", "sites", "worst_site"})
		for _, site := range c.(map[string]any)["sites"].([]any) {
			check("site", keys(site), []string{"ci_high", "ci_low", "site", "value"})
		}
	}
	if c := cands[0].(map[string]any); c["c"] != nil || c["lambda"] != nil {
		t.Errorf("the fallback's c and lambda are %v and %v, want null", c["c"], c["lambda"])
	}
	if doc["folds"] != 3.0 || doc["seed"] != 1.0 || doc["level"] != dataset.DefaultSelectLevel {
		t.Errorf("folds, seed, level: %v %v %v", doc["folds"], doc["seed"], doc["level"])
	}
}

// TestHeldOutMatchesSelect: a method's held-out record (compare's) is the
// record Select gives the same setting, on the same folds and replicates.
func TestHeldOutMatchesSelect(t *testing.T) {
	d, _ := benchmarkData(t, 2)
	ctx := context.Background()
	s := solve.DefaultSettings
	s.Workers, s.C = 2, 5e-6
	o := dataset.SelectOptions{Settings: s, Problem: solve.Problem{Method: solve.Sitewise}, Cs: []float64{5e-6}, Folds: 3, Seed: 4, Bootstrap: 10}
	sel, err := d.Select(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	held, err := d.HeldOut(ctx, o, []solve.Problem{{Method: solve.Behaviour}, {Method: solve.Sitewise}, {Method: solve.Pooled}})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2; i++ {
		a, _ := json.Marshal(sel.Candidates[i])
		b, _ := json.Marshal(held[i])
		if string(a) != string(b) {
			t.Errorf("candidate %d: Select's record %s, HeldOut's %s", i, a, b)
		}
	}
	if held[2].Score == nil || held[2].Candidate.String() != "pooled" {
		t.Errorf("pooled's record %+v", held[2])
	}
}
