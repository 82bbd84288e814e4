package main

import (
	"encoding/json"
	"path/filepath"
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

// TestValidateIntervalWarnings: validate warns, in eval's words, where a
// held-out interval does not contain its own estimate: per site for the
// policy, cloning and the observed care, and for a worst site whose
// interval of the minimum over sites inherits such an interval. On these
// data site 1's held-out policy value, 3.96, lies below its interval
// [4.132, 6.506], and so below the minimum's [4.132, 5.892].
func TestValidateIntervalWarnings(t *testing.T) {
	data := filepath.Join(t.TempDir(), "x.parquet")
	mustRun(t, "simulate", "--scenario", "benchmark", "--trajectories", "200,300", "--seed", "8", "-o", data)
	args := []string{"validate", "--features", "action-block", "--state", "s1,s2,s3", data}
	type value struct {
		Value  *float64 `json:"value"`
		CILow  *float64 `json:"ci_low"`
		CIHigh *float64 `json:"ci_high"`
	}
	type worst struct {
		Site string `json:"site"`
		value
	}
	outside := func(v value) bool {
		return v.Value != nil && v.CILow != nil && v.CIHigh != nil && (*v.Value < *v.CILow || *v.Value > *v.CIHigh)
	}
	var doc struct {
		Sites []struct {
			Site     string `json:"site"`
			Policy   value  `json:"policy"`
			Cloning  value  `json:"cloning"`
			Observed value  `json:"observed"`
		} `json:"sites"`
		WorstSite     worst    `json:"worst_site"`
		WorstCloning  worst    `json:"worst_cloning"`
		WorstObserved worst    `json:"worst_observed"`
		Warnings      []string `json:"warnings"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, append(args, "--json")...)), &doc); err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, s := range doc.Sites {
		for _, x := range []struct {
			what string
			v    value
		}{{"held-out value of the policy", s.Policy}, {"held-out value of cloning", s.Cloning}, {"held-out observed care", s.Observed}} {
			if outside(x.v) {
				want = append(want, "of site "+s.Site+"'s "+x.what+" does not contain its estimate")
			}
		}
	}
	for _, x := range []struct {
		what string
		w    worst
	}{{"the policy's held-out values", doc.WorstSite}, {"cloning's held-out values", doc.WorstCloning}, {"the held-out observed care", doc.WorstObserved}} {
		if outside(x.w.value) {
			want = append(want, "of the minimum over sites of "+x.what+" (worst site "+x.w.Site+") does not contain its estimate")
		}
	}
	if !slices.Contains(want, "of site 1's held-out value of the policy does not contain its estimate") ||
		!slices.Contains(want, "of the minimum over sites of the policy's held-out values (worst site 1) does not contain its estimate") {
		t.Fatalf("the data no longer give site 1 a held-out interval that misses its estimate: %+v", doc)
	}
	_, stderr := mustRunErr(t, args...)
	for _, w := range want {
		if !slices.ContainsFunc(doc.Warnings, func(s string) bool { return strings.Contains(s, w) }) {
			t.Errorf("warnings lack %q: %q", w, doc.Warnings)
		}
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr)
		}
	}
}
