package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

// grmdp runs the command line in-process and returns its exit code,
// stdout and stderr.
func grmdp(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), append([]string{"grmdp"}, args...), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func mustRun(t *testing.T, args ...string) string {
	t.Helper()
	code, out, errOut := grmdp(t, args...)
	if code != 0 {
		t.Fatalf("grmdp %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

// simulated writes a small data set of a scenario into dir.
func simulated(t *testing.T, dir, scenario string, extra ...string) (data, model string) {
	t.Helper()
	data = filepath.Join(dir, scenario+".parquet")
	model = filepath.Join(dir, scenario+".json")
	mustRun(t, append([]string{"simulate", "--scenario", scenario, "--seed", "7", "-o", data, "--model-out", model}, extra...)...)
	return data, model
}

func TestQuickstart(t *testing.T) {
	dir := t.TempDir()
	out := mustRun(t, "quickstart", "--dir", dir)
	for _, f := range []string{"data.parquet", "model.json", "policy.parquet", "compare/compare.json", "report/report.md", "recommendations.parquet"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("quickstart did not write %s: %v", f, err)
		}
	}
	if !strings.Contains(out, "sitewise") || !strings.Contains(out, "suboptimality") {
		t.Errorf("quickstart output lacks the comparison:\n%s", out)
	}
}

// The policy file is byte for byte the same for any number of workers,
// under any output name and across reruns: it records the settings that can
// change the policy and leaves out --output, --workers and the others that
// cannot (notPolicySettings). compare's policies likewise.
func TestSolveDeterministic(t *testing.T) {
	dir := t.TempDir()
	data, _ := simulated(t, dir, "benchmark", "--trajectories", "300,200,500")
	read := func(path string) []byte {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	var first []byte
	for i, w := range []string{"1", "4", "2", "8", "1"} {
		out := filepath.Join(dir, fmt.Sprintf("p%d-workers%s.parquet", i, w))
		mustRun(t, "solve", "--features", "action-block", "--workers", w, "--max-memory", "4GiB", "-o", out, data)
		b := read(out)
		if i == 0 {
			first = b
			continue
		}
		if !bytes.Equal(b, first) {
			t.Fatalf("--workers %s to %s gives different bytes from --workers 1 to another name", w, out)
		}
	}
	// What the policy records: the settings that can change it, not those
	// that cannot.
	var doc struct {
		Settings map[string]string `json:"settings"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "show", "--json", filepath.Join(dir, "p0-workers1.parquet"))), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"command", "args", "method", "features", "lambda", "c", "xi", "beta", "fallback", "stationary", "clusters", "state", "horizon"} {
		if _, ok := doc.Settings[k]; !ok {
			t.Errorf("the policy does not record %q: %v", k, doc.Settings)
		}
	}
	for _, k := range notPolicySettings {
		if v, ok := doc.Settings[k]; ok {
			t.Errorf("the policy records %s = %q, which cannot change it", k, v)
		}
	}
	// compare's policies, with --workers 1 and 4 into two directories.
	c1, c4 := filepath.Join(dir, "cmp1"), filepath.Join(dir, "cmp4")
	mustRun(t, "compare", "--workers", "1", "-o", c1, data)
	mustRun(t, "compare", "--workers", "4", "--json", "-o", c4, data)
	for _, m := range []string{"sitewise", "pooled", "pevi-pooled", "behaviour"} {
		if !bytes.Equal(read(filepath.Join(c1, m+".parquet")), read(filepath.Join(c4, m+".parquet"))) {
			t.Errorf("compare's %s policy differs between --workers 1 and 4", m)
		}
	}
}

// simulate and apply write the same bytes when run again, also when a
// column holds more distinct values than a dictionary page takes (300,000
// rows of distinct rewards, states and Q-values), where a dictionary would
// fall back to plain encoding and arrow-go would record the two encodings'
// page counts in random order.
func TestWritesSameBytes(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 300,000 rows four times")
	}
	dir := t.TempDir()
	same := func(what string, run func(out string)) string {
		a, b := filepath.Join(dir, what+"1.parquet"), filepath.Join(dir, what+"2.parquet")
		run(a)
		run(b)
		ba, err := os.ReadFile(a)
		if err != nil {
			t.Fatal(err)
		}
		bb, err := os.ReadFile(b)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(ba, bb) {
			t.Errorf("%s twice gave files that differ", what)
		}
		return a
	}
	data := same("simulate", func(out string) {
		mustRun(t, "simulate", "--scenario", "benchmark", "--sites", "3", "--horizon", "5",
			"--trajectories", "20000,20000,20000", "-o", out)
	})
	pol := filepath.Join(dir, "policy.parquet")
	mustRun(t, "solve", "--features", "action-block", "-o", pol, data)
	same("apply", func(out string) {
		mustRun(t, "apply", "--policy", pol, "-o", out, data)
	})
}

// show --json on a small fixed data set, against a golden file.
func TestShowJSONGolden(t *testing.T) {
	dir := t.TempDir()
	data, _ := simulated(t, dir, "convergence", "--trajectories", "20,30,40,50", "--horizon", "4")
	pol := filepath.Join(dir, "policy.parquet")
	mustRun(t, "solve", "--features", "indicator", "-o", pol, data)
	got := mustRun(t, "show", "--json", pol)
	// Paths differ per run: drop the provenance that names them.
	var doc map[string]any
	if err := json.Unmarshal([]byte(got), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"settings", "sources", "version"} {
		delete(doc, k)
	}
	norm, _ := json.MarshalIndent(doc, "", "  ")
	golden := filepath.Join("testdata", "show-convergence.json")
	if *update {
		if err := os.WriteFile(golden, append(norm, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if string(append(norm, '\n')) != string(want) {
		os.WriteFile(golden+".got", append(norm, '\n'), 0o644)
		t.Fatalf("show --json differs from %s; see %s.got", golden, golden)
	}
	for _, key := range []string{"method", "features", "H", "d", "actions", "lambda", "beta", "groups", "steps"} {
		if _, ok := doc[key]; !ok {
			t.Errorf("show --json lacks key %q", key)
		}
	}
}

func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	data, _ := simulated(t, dir, "benchmark", "--trajectories", "30,20,50")
	pol := filepath.Join(dir, "p.parquet")
	mustRun(t, "solve", "-o", pol, data)
	text := filepath.Join(dir, "notparquet.parquet")
	os.WriteFile(text, []byte("site,traj,step\n1,1,1\n"), 0o644)
	out := filepath.Join(dir, "out.parquet")
	for _, tc := range []struct {
		name string
		args []string
		code int
		msg  string
	}{
		{"bad xi", []string{"solve", "--xi", "2", "-o", out, data}, exitUsage, "--xi"},
		{"bad lambda", []string{"solve", "--lambda", "0", "-o", out, data}, exitUsage, "--lambda"},
		{"unknown method", []string{"solve", "--method", "magic", "-o", out, data}, exitUsage, "method"},
		{"unknown features", []string{"solve", "--features", "fancy", "-o", out, data}, exitUsage, "features"},
		{"no output", []string{"solve", data}, exitUsage, "output"},
		{"output below a file", []string{"solve", "-o", filepath.Join(data, "p.parquet"), data}, exitUsage, "is not a directory"},
		{"no data", []string{"solve", "-o", out}, exitUsage, "DATA"},
		{"unknown command", []string{"frobnicate"}, exitUsage, ""},
		{"text file", []string{"solve", "-o", out, text}, exitBadData, "notparquet.parquet"},
		{"missing file", []string{"solve", "-o", out, filepath.Join(dir, "absent.parquet")}, exitBadData, "absent.parquet"},
		{"wrong state columns", []string{"solve", "--state", "s1,zz", "-o", out, data}, exitBadData, "zz"},
		{"policy on other features", []string{"apply", "--policy", pol, "-o", out, filepath.Join(dir, "conv.parquet")}, exitBadData, ""},
		{"cluster without file", []string{"solve", "--method", "cluster", "-o", out, data}, exitUsage, "--clusters"},
		// Refused before any data are read: DATA is absent.
		{"solve behaviour --c auto", []string{"solve", "--method", "behaviour", "--c", "auto", "-o", out, filepath.Join(dir, "absent.parquet")},
			exitUsage, "--c auto needs a method with a penalty, not behaviour"},
		{"validate behaviour --c auto", []string{"validate", "--method", "behaviour", "--c", "auto", filepath.Join(dir, "absent.parquet")},
			exitUsage, "--c auto needs a method with a penalty, not behaviour"},
		{"solve behaviour --c-path", []string{"solve", "--method", "behaviour", "--c-path", "1e-4:1e-2:3", "-o", out, filepath.Join(dir, "absent.parquet")},
			exitUsage, "--c-path needs a method with a penalty, not behaviour"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "policy on other features" {
				simulated(t, dir, "convergence", "--trajectories", "10,10,10,10", "--horizon", "3")
				tc.args[len(tc.args)-1] = filepath.Join(dir, "convergence.parquet")
			}
			code, _, errOut := grmdp(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tc.code, errOut)
			}
			if !strings.Contains(errOut, tc.msg) {
				t.Errorf("stderr %q does not mention %q", errOut, tc.msg)
			}
			if strings.Count(strings.TrimSpace(errOut), "\n") > 0 && tc.code != exitUsage {
				t.Errorf("want one line of error, got %q", errOut)
			}
			if _, err := os.Stat(out); err == nil {
				t.Errorf("a failed run left %s", out)
			}
		})
	}
}

// Every method solves, writes a policy that show and apply read, and the
// methods agree with themselves when applied.
func TestMethodsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	data, _ := simulated(t, dir, "benchmark", "--trajectories", "60,40,80")
	clusters := filepath.Join(dir, "clusters.csv")
	os.WriteFile(clusters, []byte("site,cluster\n1,a\n2,a\n3,b\n"), 0o644)
	for _, m := range []string{"sitewise", "cluster", "pooled", "pevi-pooled", "pevi-avg", "pevi-min", "behaviour"} {
		t.Run(m, func(t *testing.T) {
			pol := filepath.Join(dir, m+".parquet")
			args := []string{"solve", "--method", m, "-o", pol}
			if m == "cluster" {
				args = append(args, "--clusters", clusters)
			}
			mustRun(t, append(args, data)...)
			mustRun(t, "show", pol)
			out := filepath.Join(dir, m+"-applied.parquet")
			mustRun(t, "apply", "--policy", pol, "-o", out, data)
			if fi, err := os.Stat(out); err != nil || fi.Size() == 0 {
				t.Fatalf("apply wrote nothing: %v", err)
			}
		})
	}
}

func TestConfigFile(t *testing.T) {
	dir := t.TempDir()
	data, _ := simulated(t, dir, "benchmark", "--trajectories", "30,20,50")
	cfg := filepath.Join(dir, "job.yaml")
	pol := filepath.Join(dir, "p.parquet")
	os.WriteFile(cfg, []byte("method: pooled\nc: 0.001\noutput: "+pol+"\n"), 0o644)
	mustRun(t, "solve", "--config", cfg, data)
	js := mustRun(t, "show", "--json", pol)
	var doc struct {
		Method string  `json:"method"`
		C      float64 `json:"c"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Method != "pooled" || doc.C != 0.001 {
		t.Fatalf("config not applied: method %q c %v", doc.Method, doc.C)
	}
}

// prepare rewrites the data sorted by step; solving it gives the same
// policy.
func TestPrepare(t *testing.T) {
	dir := t.TempDir()
	data, _ := simulated(t, dir, "benchmark", "--trajectories", "40,30,50")
	prep := filepath.Join(dir, "prepared.parquet")
	mustRun(t, "prepare", "--row-group-rows", "100", "-o", prep, data)
	show := func(path string) string {
		pol := path + ".policy.parquet"
		mustRun(t, "solve", "-o", pol, path)
		var doc map[string]any
		if err := json.Unmarshal([]byte(mustRun(t, "show", "--json", pol)), &doc); err != nil {
			t.Fatal(err)
		}
		delete(doc, "settings")
		delete(doc, "sources")
		b, _ := json.Marshal(doc)
		return string(b)
	}
	if show(data) != show(prep) {
		t.Fatal("the prepared data solve to a different policy")
	}
}

// Flags may follow the positional arguments, as DESIGN.md writes
// `grmdp show POLICY [--json]`.
func TestFlagsAfterArguments(t *testing.T) {
	dir := t.TempDir()
	data, _ := simulated(t, dir, "benchmark", "--trajectories", "20,20,20")
	pol := filepath.Join(dir, "p.parquet")
	mustRun(t, "solve", data, "--method", "pooled", "-o", pol)
	out := mustRun(t, "show", pol, "--json")
	if !strings.Contains(out, `"method": "pooled"`) {
		t.Fatalf("show POLICY --json:\n%s", out)
	}
	// After "--" every word is DATA, even one that looks like a flag.
	if code, _, errOut := grmdp(t, "solve", data, "-o", filepath.Join(dir, "q.parquet"), "--", "--json"); code != exitBadData || !strings.Contains(errOut, "--json: cannot read") {
		t.Fatalf("solve DATA -o Q -- --json: exit %d, %q; want --json read as DATA", code, errOut)
	}
}

// --timings prints every phase of a solve, a compare and an out-of-core
// solve on stderr, and changes neither stdout nor the policy's bytes.
func TestTimings(t *testing.T) {
	dir := t.TempDir()
	data, _ := simulated(t, dir, "benchmark", "--trajectories", "300,200,500")
	plain := filepath.Join(dir, "plain.parquet")
	timed := filepath.Join(dir, "timed.parquet")
	want := mustRun(t, "solve", "--features", "action-block", "-o", plain, data)
	code, got, stderr := grmdp(t, "--timings", "solve", "--features", "action-block", "-o", timed, data)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.ReplaceAll(got, timed, plain) != want {
		t.Errorf("--timings changed stdout:\n%s\nwithout it:\n%s", got, want)
	}
	// The policies differ only in the output path their settings record.
	if a, b := mustRun(t, "show", "--json", plain), mustRun(t, "show", "--json", timed); strings.ReplaceAll(b, timed, plain) != a {
		t.Errorf("--timings changed the policy:\n%s\nwithout it:\n%s", b, a)
	}
	phases := func(stderr string, names ...string) {
		t.Helper()
		for _, n := range append(names, "whole run") {
			found := false
			for _, l := range strings.Split(stderr, "\n") {
				if strings.HasPrefix(l, "grmdp: timing: "+n+" ") && strings.Contains(l, " s") {
					found = true
				}
			}
			if !found {
				t.Errorf("no timing line for %q in:\n%s", n, stderr)
			}
		}
	}
	phases(stderr, "read: first pass", "read: build", "read: second pass", "statistics",
		"solve: right-hand sides", "solve: values", "diagnostics", "write")
	for _, l := range strings.Split(stderr, "\n") {
		if strings.Contains(l, "solve: values") && !strings.HasSuffix(l, " times)") {
			t.Errorf("the backward pass's values do not count their rounds: %q", l)
		}
	}

	code, _, stderr = grmdp(t, "--timings", "compare", "--features", "action-block", "-o", filepath.Join(dir, "cmp"), data)
	if code != 0 {
		t.Fatalf("compare: exit %d: %s", code, stderr)
	}
	phases(stderr, "read: first pass", "statistics", "solve: values", "sampled actions", "write")

	code, _, stderr = grmdp(t, "--timings", "solve", "--features", "action-block", "--out-of-core", "-o", filepath.Join(dir, "ooc.parquet"), data)
	if code != 0 {
		t.Fatalf("out of core: exit %d: %s", code, stderr)
	}
	phases(stderr, "out of core: survey", "out of core: rounds", "write")

	// Without the flag, nothing of it.
	code, _, stderr = grmdp(t, "solve", "--features", "action-block", "-o", plain, data)
	if code != 0 || strings.Contains(stderr, "timing") {
		t.Errorf("without --timings: exit %d, stderr %q", code, stderr)
	}
}
