package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grmdp/grmdp/eval"
	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/sim"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// sofaBand is the integer state of the clinical rows' tabular column:
// the SOFA score in bands of 3, the last from 12 on (0..4).
func sofaBand(sofa float64) float64 { return min(float64(int(sofa)/3), 4) }

// clinicalWithBands writes the clinical scenario (n patients per
// hospital, no NULLs) with the columns lactate, sofa and state (sofaBand)
// and returns the path and the scenario.
func clinicalWithBands(t *testing.T, dir string, n int) (string, *sim.Clinical) {
	t.Helper()
	spec := sim.DefaultClinicalSpec()
	spec.NullRate = 0
	spec.Trajectories = []int{n, n, n, n, n}
	m, err := sim.NewClinical(sim.Params{Seed: 3, Clinical: &spec})
	if err != nil {
		t.Fatal(err)
	}
	tb, err := m.Sample(11)
	if err != nil {
		t.Fatal(err)
	}
	wide := *tb
	wide.W = 3
	wide.Steps = append([]traj.Step(nil), tb.Steps...)
	for h := range wide.Steps {
		s := &wide.Steps[h]
		st := make([]float64, 0, 3*s.Len())
		for j := 0; j < s.Len(); j++ {
			lac, sofa := tb.Steps[h].State[2*j], tb.Steps[h].State[2*j+1]
			st = append(st, lac, sofa, sofaBand(sofa))
		}
		s.State = st
	}
	path := filepath.Join(dir, "clinical.parquet")
	if err := parquetio.WriteTrajectories(path, &wide, parquetio.WriteOptions{StateColumns: []string{"lactate", "sofa", "state"}}); err != nil {
		t.Fatal(err)
	}
	return path, m
}

// throughJSON is what the test reads of eval --json.
type throughJSON struct {
	EvaluationFeatures string `json:"evaluation_features"`
	Sites              []struct {
		Site      string                   `json:"site"`
		Value     float64                  `json:"value"`
		Estimates map[string]eval.Estimate `json:"estimates"`
	} `json:"sites"`
}

// withoutSettings is eval --json's document without the settings it
// records (the flags given).
func withoutSettings(t *testing.T, js string) string {
	t.Helper()
	var doc map[string]json.RawMessage
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	delete(doc, "settings")
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestEvalThroughOneMap evaluates a tabular policy (on the SOFA band)
// and a soft-binned one (on lactate and SOFA) through one soft-binned
// map: the tabular policy decides on its own column, which the
// evaluation's map does not read; the JSON names the evaluation's map;
// WDR's interval holds each policy's true per-hospital value (Monte
// Carlo) at most hospitals. --features naming a policy's own map gives
// the plain evaluation byte for byte (but for the flags it records).
func TestEvalThroughOneMap(t *testing.T) {
	if testing.Short() {
		t.Skip("clinical scenario")
	}
	dir := t.TempDir()
	data, m := clinicalWithBands(t, dir, 800)
	tab, soft := filepath.Join(dir, "tab.parquet"), filepath.Join(dir, "soft.parquet")
	softMap := []string{"--features", "soft-binned", "--bins", "lactate:1,2,4,8", "--bins", "sofa:2,6,10,14"}
	mustRun(t, "solve", "--features", "tabular", "--state", "state", "-c", "1e-3", "-o", tab, data)
	mustRun(t, append(append([]string{"solve"}, softMap...), "-c", "1e-3", "-o", soft, data)...)
	for _, c := range []struct {
		name, policy string
		act          func(p *solve.Policy, q []float64, h int, v []float64) int
		own          []string
	}{
		{"tabular", tab, func(p *solve.Policy, q []float64, h int, v []float64) int {
			a, _, _ := p.Act(h, []float64{sofaBand(v[1])}, q)
			return a
		}, []string{"--features", "tabular", "--state", "state"}},
		{"soft-binned", soft, func(p *solve.Policy, q []float64, h int, v []float64) int {
			a, _, _ := p.Act(h, v, q)
			return a
		}, softMap},
	} {
		out := mustRun(t, append(append([]string{"eval", "--json", "--bootstrap", "100", "--permutations", "0", "--policy", c.policy}, softMap...), data)...)
		var doc throughJSON
		if err := json.Unmarshal([]byte(out), &doc); err != nil {
			t.Fatal(err)
		}
		if c.name == "soft-binned" {
			if doc.EvaluationFeatures != "" {
				t.Errorf("%s: evaluated through its own map, evaluation_features %q", c.name, doc.EvaluationFeatures)
			}
		} else if !strings.HasPrefix(doc.EvaluationFeatures, "soft-binned") {
			t.Errorf("%s: evaluation_features %q, want the soft-binned map", c.name, doc.EvaluationFeatures)
		}
		p, err := readPolicy(c.policy)
		if err != nil {
			t.Fatal(err)
		}
		q := make([]float64, p.A)
		truth := m.Value(func(_, h int, v []float64) int { return c.act(p, q, h, v) }, 20000, 9)
		covered := 0
		for k, s := range doc.Sites {
			w := s.Estimates[eval.WDR]
			t.Logf("%s policy, site %s: truth %.3f  fqe %.3f  wdr %.3f [%.3f, %.3f]", c.name, s.Site, truth[k].Value, s.Value, w.Value, w.CILow, w.CIHigh)
			if w.CILow <= truth[k].Value && truth[k].Value <= w.CIHigh {
				covered++
			}
		}
		if covered < len(doc.Sites)-1 {
			t.Errorf("%s policy through the soft-binned map: WDR's interval holds the true value at %d of %d sites", c.name, covered, len(doc.Sites))
		}
		plain := mustRun(t, "eval", "--json", "--bootstrap", "20", "--permutations", "0", "--policy", c.policy, data)
		own := mustRun(t, append(append([]string{"eval", "--json", "--bootstrap", "20", "--permutations", "0", "--policy", c.policy}, c.own...), data)...)
		if a, b := withoutSettings(t, own), withoutSettings(t, plain); a != b {
			t.Errorf("%s: eval --features naming the policy's own map differs from eval without it:\n%s\n%s", c.name, a, b)
		}
	}
}
