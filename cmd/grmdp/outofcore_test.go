package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// showVectors returns show --json of a policy without its recorded
// settings (which name the flags given) and sources (the input files).
func showVectors(t *testing.T, path string) string {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal([]byte(mustRun(t, "show", "--json", path)), &doc); err != nil {
		t.Fatal(err)
	}
	delete(doc, "settings")
	delete(doc, "sources")
	b, _ := json.Marshal(doc)
	return string(b)
}

// Solving out of core gives the policy, the printed result and the JSON
// diagnostics of the in-memory solve, for every method, on rows spread
// over shuffled files and on data prepared by step.
func TestOutOfCoreMatchesInMemory(t *testing.T) {
	dir := t.TempDir()
	data, _ := simulated(t, dir, "benchmark", "--trajectories", "300,200,500", "--horizon", "6")
	prepared := filepath.Join(dir, "prepared.parquet")
	mustRun(t, "prepare", "-o", prepared, data)
	inputs := rowVariants(t, dir, data)
	inputs["prepared"] = []string{prepared}
	for _, method := range []string{"sitewise", "pooled", "pevi-pooled", "pevi-avg", "pevi-min", "behaviour"} {
		mem := filepath.Join(dir, method+"-mem.parquet")
		want := mustRun(t, "solve", "--method", method, "--json", "-o", mem, data)
		for name, in := range inputs {
			ooc := filepath.Join(dir, method+"-ooc.parquet")
			got := mustRun(t, append([]string{"solve", "--method", method, "--json", "--out-of-core", "-o", ooc}, in...)...)
			if name == "original" && strings.ReplaceAll(got, ooc, mem) != want {
				t.Errorf("%s: solve --json out of core differs:\n%s\nin memory:\n%s", method, got, want)
			}
			if showVectors(t, ooc) != showVectors(t, mem) {
				t.Errorf("%s on the %s rows: the out-of-core policy differs from the in-memory one", method, name)
			}
		}
	}
	// compare: the same compare.json in every key both produce; the
	// shared evaluation (methods[].evaluation, observed) needs the data in
	// memory and is null out of core, with a note saying so.
	memDir, oocDir := filepath.Join(dir, "cmp-mem"), filepath.Join(dir, "cmp-ooc")
	want := mustRun(t, "compare", "--json", "-o", memDir, data)
	got := mustRun(t, "compare", "--json", "--out-of-core", "-o", oocDir, data)
	memDoc, oocDoc := compareShared(t, want), compareShared(t, strings.ReplaceAll(got, oocDir, memDir))
	if oocDoc != memDoc {
		t.Errorf("compare --json out of core differs:\n%s\nin memory:\n%s", oocDoc, memDoc)
	}
	if !strings.Contains(want, `"evaluation": {`) || strings.Contains(got, `"evaluation": {`) || !strings.Contains(got, `"evaluation_note": "out of core`) {
		t.Errorf("compare --json: in memory every method has its evaluation, out of core none and a note; got\n%s", got)
	}
}

// compareShared returns compare.json without the keys only an in-memory
// run fills (methods[].evaluation, observed, evaluation_note), re-encoded.
func compareShared(t *testing.T, js string) string {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	delete(doc, "observed")
	delete(doc, "evaluation_note")
	for _, m := range doc["methods"].([]any) {
		delete(m.(map[string]any), "evaluation")
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// When the rows would not fit in --max-memory but a pair of steps does,
// solve switches to out of core by itself and says so; jobs that cannot
// run out of core are refused as before.
func TestOutOfCoreAutomatic(t *testing.T) {
	dir := t.TempDir()
	data, _ := simulated(t, dir, "benchmark", "--trajectories", "10000,10000,10000", "--horizon", "20")
	mem := filepath.Join(dir, "mem.parquet")
	mustRun(t, "solve", "-o", mem, data)
	auto := filepath.Join(dir, "auto.parquet")
	code, _, stderr := grmdp(t, "solve", "--max-memory", "160MB", "-o", auto, data)
	if code != 0 || !strings.Contains(stderr, "solving out of core") {
		t.Fatalf("solve --max-memory 160MB: exit %d, stderr:\n%s", code, stderr)
	}
	if showVectors(t, auto) != showVectors(t, mem) {
		t.Error("the automatically out-of-core policy differs from the in-memory one")
	}
	code, _, stderr = grmdp(t, "solve", "--max-memory", "160MB", "--stationary", "-o", filepath.Join(dir, "st.parquet"), data)
	checkFailure(t, code, stderr, exitBadData, "", "--max-memory 160MB", "grmdp prepare")
	code, _, stderr = grmdp(t, "solve", "--out-of-core", "--stationary", "-o", filepath.Join(dir, "st.parquet"), data)
	checkFailure(t, code, stderr, exitUsage, "", "--out-of-core", "--stationary")
	code, _, stderr = grmdp(t, "solve", "--out-of-core", "--c-path", "1e-4:1e-3:3", "-o", filepath.Join(dir, "cp.parquet"), data)
	checkFailure(t, code, stderr, exitUsage, "", "--out-of-core", "--c-path")
}
