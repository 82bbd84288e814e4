package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// TestValidateJSON pins validate --json's keys (documented in the
// command's description) and checks that its output does not depend on
// the workers.
func TestValidateJSON(t *testing.T) {
	data, _ := simulated(t, t.TempDir(), "benchmark", "--trajectories", "60,40,80", "--horizon", "4")
	args := []string{"validate", "--json", "--folds", "3", "--seed", "5", "--bootstrap", "20", data}
	out := mustRun(t, append(args, "--workers", "1")...)
	if out3 := mustRun(t, append(args, "--workers", "3")...); out3 != out {
		t.Errorf("--workers 1 and 3 differ:\n%s\n%s", out, out3)
	}
	keys := func(js json.RawMessage) string {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(js, &m); err != nil {
			t.Fatalf("%v: %s", err, js)
		}
		var k []string
		for name := range m {
			k = append(k, name)
		}
		slices.Sort(k)
		return strings.Join(k, ",")
	}
	var doc struct {
		Folds    int               `json:"folds"`
		InSample *bool             `json:"in_sample"`
		Sites    []json.RawMessage `json:"sites"`
		Worst    json.RawMessage   `json:"worst_site"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ what, got, want string }{
		{"top level", keys(json.RawMessage(out)), "bootstrap,estimator,folds,in_sample,level,method,seed,sites,warnings,worst_cloning,worst_observed,worst_site"},
		{"sites[]", keys(doc.Sites[0]), "cloning,diff_cloning,diff_observed,ess,fold_sizes,observed,policy,site,trajectories"},
		{"worst_site", keys(doc.Worst), "ci_high,ci_low,estimator,site,value"},
	} {
		if c.got != c.want {
			t.Errorf("%s: keys %s, want %s", c.what, c.got, c.want)
		}
	}
	var site map[string]json.RawMessage
	if err := json.Unmarshal(doc.Sites[0], &site); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"policy": "ci_high,ci_low,estimates,estimator,value", "cloning": "ci_high,ci_low,estimates,estimator,value",
		"observed": "ci_high,ci_low,estimator,value", "diff_observed": "ci_high,ci_low,estimator,value", "diff_cloning": "ci_high,ci_low,estimator,value"} {
		if got := keys(site[name]); got != want {
			t.Errorf("sites[].%s: keys %s, want %s", name, got, want)
		}
	}
	var pol struct {
		Estimates map[string]json.RawMessage `json:"estimates"`
	}
	if err := json.Unmarshal(site["policy"], &pol); err != nil {
		t.Fatal(err)
	}
	if got := keys(mustMarshal(t, pol.Estimates)); got != "fqe,pdwis,wdr" {
		t.Errorf("sites[].policy.estimates: keys %s", got)
	}
	if doc.Folds != 3 || doc.InSample == nil || *doc.InSample || len(doc.Sites) != 3 {
		t.Errorf("folds %d, in_sample %v, %d sites; want 3, false, 3", doc.Folds, doc.InSample, len(doc.Sites))
	}
	text := mustRun(t, "validate", "--folds", "3", "--bootstrap", "20", data)
	for _, want := range []string{"every value is held out", "policy - observed", "worst site (policy)"} {
		if !strings.Contains(text, want) {
			t.Errorf("the table lacks %q:\n%s", want, text)
		}
	}
}

func mustMarshal(t *testing.T, v any) json.RawMessage {
	t.Helper()
	js, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return js
}
