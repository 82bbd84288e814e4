package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// A policy that learned nothing says so: at the default c on the formulary
// scenario every decision takes the fallback, so solve and apply print the
// fallback line, apply --json carries the share, and --min-evidence 0.9
// makes apply exit 4 after writing its output.
func TestApplyMostlyFallback(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "f.parquet")
	mustRun(t, "simulate", "--scenario", "formulary", "--seed", "1", "-o", data)
	pol := filepath.Join(dir, "p.parquet")
	_, errOut := mustRunErr(t, "solve", "--features", "tabular", "-o", pol, data)
	const line = "the recommendations are mostly the fallback"
	if strings.Count(errOut, line) != 1 || !strings.Contains(errOut, "--c-path") || !strings.Contains(errOut, "grmdp validate") {
		t.Errorf("solve's stderr lacks one fallback line:\n%s", errOut)
	}
	out, errOut := mustRunErr(t, "apply", "--json", "--policy", pol, "-o", filepath.Join(dir, "r.parquet"), data)
	if strings.Count(errOut, line) != 1 {
		t.Errorf("apply's stderr lacks one fallback line:\n%s", errOut)
	}
	var sum struct {
		Share *float64 `json:"no_evidence_share"`
	}
	if err := json.Unmarshal([]byte(out), &sum); err != nil || sum.Share == nil || *sum.Share < 0.5 {
		t.Errorf("apply --json: no_evidence_share %v (err %v):\n%s", sum.Share, err, out)
	}
	code, _, errOut := grmdp(t, "apply", "--min-evidence", "0.9", "--policy", pol, "-o", filepath.Join(dir, "r2.parquet"), data)
	if code != exitLowEvidence || !strings.Contains(errOut, "--min-evidence") {
		t.Errorf("apply --min-evidence 0.9: exit %d, want %d:\n%s", code, exitLowEvidence, errOut)
	}
	if code, _, _ := grmdp(t, "apply", "--min-evidence", "1.5", "--policy", pol, "-o", filepath.Join(dir, "r3.parquet"), data); code != exitUsage {
		t.Errorf("apply --min-evidence 1.5: exit %d, want %d", code, exitUsage)
	}
}
