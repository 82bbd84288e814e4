package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// eval --json on the public formulary scenario (seed 1, site-wise tabular
// policy, --model) carries every site's exact value, bias, bounds with
// their bootstrap interval, support and identification, the same for the
// robust value, and the observed care per site; every site's exact value
// lies within its bounds' interval or the site is flagged, the robust
// value likewise; the table and the report say "not identified" in words.
func TestEvalHonestKeysFormulary(t *testing.T) {
	dir := t.TempDir()
	data, model := filepath.Join(dir, "f.parquet"), filepath.Join(dir, "f.json")
	mustRun(t, "simulate", "--scenario", "formulary", "--seed", "1", "-o", data, "--model-out", model)
	pol := filepath.Join(dir, "p.parquet")
	mustRun(t, "solve", "--features", "tabular", "-o", pol, data)
	js := mustRun(t, "eval", "--json", "--bootstrap", "20", "--policy", pol, "--model", model, data)
	var doc map[string]any
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"policy_value", "pessimistic_value", "bias", "lower", "upper", "bounds_ci_low", "bounds_ci_high", "support",
		"identified", "observed", "warnings", "optimal_value", "suboptimality", "value_gap", "robust_value", "delta"} {
		if _, ok := doc[key]; !ok {
			t.Errorf("eval --json lacks top-level %q", key)
		}
	}
	in := func(x, lo, hi any) bool {
		v, a, b := x.(float64), lo.(float64), hi.(float64)
		return a <= v && v <= b
	}
	if !in(doc["robust_value"], doc["bounds_ci_low"], doc["bounds_ci_high"]) && doc["identified"] != false {
		t.Errorf("robust exact value %v outside [%v, %v] and not flagged", doc["robust_value"], doc["bounds_ci_low"], doc["bounds_ci_high"])
	}
	sites := doc["sites"].([]any)
	if len(sites) != 5 {
		t.Fatalf("want 5 sites, got %d", len(sites))
	}
	for _, x := range sites {
		s := x.(map[string]any)
		for _, key := range []string{"site", "value", "ci_low", "ci_high", "bias", "exact_value", "lower", "upper", "bounds_ci_low", "bounds_ci_high", "support", "identified"} {
			if _, ok := s[key]; !ok {
				t.Errorf("site %v lacks %q", s["site"], key)
			}
		}
		if !in(s["exact_value"], s["bounds_ci_low"], s["bounds_ci_high"]) && s["identified"] != false {
			t.Errorf("site %v: exact value %v outside [%v, %v] and not flagged", s["site"], s["exact_value"], s["bounds_ci_low"], s["bounds_ci_high"])
		}
		if sup := s["support"].(float64); sup < 0 || sup > 1 {
			t.Errorf("site %v: support %v outside [0, 1]", s["site"], sup)
		}
	}
	obs := doc["observed"].([]any)
	if len(obs) != 5 {
		t.Fatalf("want 5 observed rows, got %d", len(obs))
	}
	for _, x := range obs {
		o := x.(map[string]any)
		if !in(o["value"], o["ci_low"], o["ci_high"]) {
			t.Errorf("observed %v: %v outside its interval [%v, %v]", o["site"], o["value"], o["ci_low"], o["ci_high"])
		}
	}
	rep := filepath.Join(dir, "report")
	out := mustRun(t, "eval", "--bootstrap", "5", "--policy", pol, "--model", model, "--report", rep, data)
	md, err := os.ReadFile(filepath.Join(rep, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{out, string(md)} {
		for _, want := range []string{"NOT identified", "observed"} {
			if !strings.Contains(strings.ToUpper(text), strings.ToUpper(want)) {
				t.Errorf("output lacks %q:\n%s", want, text)
			}
		}
	}
}

// Without indicator features the bounds are null.
func TestEvalBoundsNullForOtherMaps(t *testing.T) {
	dir := t.TempDir()
	data, _ := simulated(t, dir, "benchmark")
	pol := filepath.Join(dir, "p.parquet")
	mustRun(t, "solve", "-o", pol, data)
	js := mustRun(t, "eval", "--json", "--bootstrap", "0", "--permutations", "0", "--policy", pol, data)
	var doc map[string]any
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"lower", "upper", "identified", "bounds_ci_low"} {
		if v, ok := doc[key]; !ok || v != nil {
			t.Errorf("%q: got %v (present %v), want null", key, v, ok)
		}
	}
}

// With the default settings, eval finds the benchmark's three sites
// different at the 0.05 family-wise level (the pooled policy's one
// cluster), and the p-values can go below 0.05 at all.
func TestEvalDeltaDefaultsFindBenchmarkSitesDifferent(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "b.parquet")
	mustRun(t, "simulate", "--scenario", "benchmark", "-o", data)
	pol := filepath.Join(dir, "p.parquet")
	mustRun(t, "solve", "--method", "pooled", "-o", pol, data)
	js := mustRun(t, "eval", "--json", "--bootstrap", "0", "--policy", pol, data)
	var doc struct {
		Permutations int `json:"permutations"`
		Delta        []struct {
			PValue *float64 `json:"p_value"`
		} `json:"delta"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	if 1/float64(doc.Permutations+1) >= 0.05 {
		t.Fatalf("default permutations %d cannot reach p < 0.05", doc.Permutations)
	}
	lo := 1.0
	for _, c := range doc.Delta {
		if c.PValue != nil {
			lo = min(lo, *c.PValue)
		}
	}
	if len(doc.Delta) == 0 || lo >= 0.05 {
		t.Errorf("smallest adjusted p-value %v over %d cells, want < 0.05", lo, len(doc.Delta))
	}
}

// compare scores every method by eval's estimator on the same data by
// default: methods[].evaluation has eval's keys and equals eval --json
// --bootstrap 0 on that method's policy; the top-level observed list has
// one row per site; compare.json's top-level keys are pinned; out of core,
// an explicit --evaluate is refused and without it the keys are null with
// a note naming the way to get them; --evaluate=false leaves them null.
func TestCompareEvaluate(t *testing.T) {
	dir := t.TempDir()
	data, _ := simulated(t, dir, "benchmark")
	out := filepath.Join(dir, "cmp")
	mustRun(t, "compare", "-o", out, data)
	b, err := os.ReadFile(filepath.Join(out, "compare.json"))
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range top {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if strings.Join(keys, ",") != "evaluation_note,heldout,methods,observed" || string(top["evaluation_note"]) != "null" || string(top["heldout"]) != "null" {
		t.Errorf("compare.json top-level keys %v (evaluation_note %s, heldout %s), want evaluation_note (null), heldout (null), methods, observed", keys, top["evaluation_note"], top["heldout"])
	}
	var doc struct {
		Methods []struct {
			Method     string         `json:"method"`
			Policy     string         `json:"policy"`
			Evaluation map[string]any `json:"evaluation"`
		} `json:"methods"`
		Observed []map[string]any `json:"observed"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Observed) != 3 {
		t.Errorf("observed: %d rows, want 3 sites", len(doc.Observed))
	}
	for _, o := range doc.Observed {
		for _, key := range []string{"site", "value", "ci_low", "ci_high"} {
			if o[key] == nil {
				t.Errorf("observed row %v lacks %q", o, key)
			}
		}
	}
	if len(doc.Methods) < 5 {
		t.Fatalf("%d methods", len(doc.Methods))
	}
	for _, m := range doc.Methods {
		if m.Evaluation == nil {
			t.Fatalf("%s: no evaluation", m.Method)
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(mustRun(t, "eval", "--json", "--bootstrap", "0", "--permutations", "0", "--policy", m.Policy, data)), &ev); err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{"policy_value", "pessimistic_value", "beta", "worst_site", "sites", "bias", "lower", "upper", "support", "identified", "bounds_ci_low", "bounds_ci_high"} {
			want, _ := json.Marshal(ev[key])
			got, ok := m.Evaluation[key]
			gotJS, _ := json.Marshal(got)
			if !ok || string(gotJS) != string(want) {
				t.Errorf("%s: evaluation %q = %s (present %v), eval gives %s", m.Method, key, gotJS, ok, want)
			}
		}
	}
	code, _, stderr := grmdp(t, "compare", "--evaluate", "--out-of-core", "-o", filepath.Join(dir, "cmp2"), data)
	if code == 0 || !strings.Contains(stderr, "--evaluate needs the data in memory") {
		t.Errorf("compare --evaluate --out-of-core: exit %d, stderr %s", code, stderr)
	}
	for _, args := range [][]string{{"--out-of-core"}, {"--evaluate=false"}} {
		cdir := filepath.Join(dir, "cmp3")
		stdout := mustRun(t, append(append([]string{"compare"}, args...), "-o", cdir, data)...)
		b, err := os.ReadFile(filepath.Join(cdir, "compare.json"))
		if err != nil {
			t.Fatal(err)
		}
		var nd struct {
			Methods  []map[string]json.RawMessage `json:"methods"`
			Observed json.RawMessage              `json:"observed"`
			Note     *string                      `json:"evaluation_note"`
		}
		if err := json.Unmarshal(b, &nd); err != nil {
			t.Fatal(err)
		}
		if string(nd.Observed) != "null" || nd.Note == nil || !strings.Contains(stdout, *nd.Note) {
			t.Errorf("compare %v: observed %s, note %v (in the table: %v)", args, nd.Observed, nd.Note, nd.Note != nil && strings.Contains(stdout, *nd.Note))
		}
		for _, m := range nd.Methods {
			if e, ok := m["evaluation"]; !ok || string(e) != "null" {
				t.Errorf("compare %v: method %s evaluation %s (present %v), want null", args, m["method"], e, ok)
			}
		}
	}
}
