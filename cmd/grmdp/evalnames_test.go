package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// eval on the clinical scenario (NULL lactate read with --nulls truncate)
// names the paper's pessimistic value so, never "lower bound" (text, JSON,
// report); the headline, printed first, is the worst site's value with its
// interval and name, and the robust value follows with its meaning; every
// site counts its censored episodes (text and JSON sites[].censored).
func TestEvalNamesAndCensoring(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "c.parquet")
	mustRun(t, "simulate", "--scenario", "clinical", "-o", data)
	flags := []string{"--features", "soft-binned", "--state", "lactate,sofa", "--bins", "lactate:1,2,4,8", "--bins", "sofa:2,6,10,14", "--nulls", "truncate"}
	pol := filepath.Join(dir, "p.json")
	mustRun(t, append(append([]string{"solve"}, flags...), "-o", pol, data)...)
	rep := filepath.Join(dir, "rep")
	args := append(append([]string{"eval"}, flags...), "--bootstrap", "20", "--policy", pol, "--report", rep, data)
	text := mustRun(t, args...)
	js := mustRun(t, append(args[:len(args)-3:len(args)-3], "--json", data)...)
	md, err := os.ReadFile(filepath.Join(rep, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for what, s := range map[string]string{"text": text, "JSON": js, "report": string(md)} {
		for _, bad := range []string{"lower bound", "lower_bound"} {
			if strings.Contains(s, bad) {
				t.Errorf("eval's %s says %q", what, bad)
			}
		}
	}
	if !strings.Contains(text, "pessimistic value") || !strings.Contains(string(md), "pessimistic value") {
		t.Errorf("eval's text or report does not name the pessimistic value:\n%s", text)
	}
	lines := strings.Split(text, "\n")
	if len(lines) < 4 || !strings.HasPrefix(lines[1], "worst site ") || !strings.Contains(lines[1], "[") ||
		!strings.HasPrefix(lines[2], "robust value (data)") || !strings.Contains(lines[3], "worst mixture of the sites' models") {
		t.Errorf("eval's first lines are not the policy, the worst site with its interval, the robust value and its meaning:\n%s", strings.Join(lines[:min(4, len(lines))], "\n"))
	}
	if !strings.Contains(text, "censored") {
		t.Errorf("eval's text does not count censored episodes:\n%s", text)
	}
	var doc struct {
		Pessimistic *float64 `json:"pessimistic_value"`
		Sites       []struct {
			Site     string `json:"site"`
			Censored *int   `json:"censored"`
		} `json:"sites"`
		Observed []struct {
			Censored *int `json:"censored"`
		} `json:"observed"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Pessimistic == nil {
		t.Error("eval --json lacks pessimistic_value")
	}
	for i, s := range doc.Sites {
		if s.Censored == nil || *s.Censored == 0 || doc.Observed[i].Censored == nil || *doc.Observed[i].Censored != *s.Censored {
			t.Errorf("site %s: censored %v, observed's %v; want the same positive count", s.Site, s.Censored, doc.Observed[i].Censored)
		}
	}
}
