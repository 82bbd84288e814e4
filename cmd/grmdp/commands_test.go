package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/grmdp/grmdp/traj"

	"github.com/grmdp/grmdp/dataset"
	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/solve"
)

// The run functions are called here with Options structs, without
// urfave/cli: each must do what its command line does (the same policy,
// the same printed result, the same JSON) and report its own errors.

var testColumns = traj.Columns{Site: "site", Traj: "traj", Step: "step", Action: "action", Reward: "reward"}

// call runs f and returns its stdout and stderr.
func call(t *testing.T, f func(stdout, stderr *bytes.Buffer) error) (string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if err := f(&stdout, &stderr); err != nil {
		t.Fatalf("%v\nstderr:\n%s", err, stderr.String())
	}
	return stdout.String(), stderr.String()
}

func TestRunFunctionsMatchCommandLine(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	data, model := simulated(t, dir, "benchmark", "--trajectories", "300,200,500", "--horizon", "6")
	do := dataGroup{Map: mapGroup{Spec: features.Spec{Kind: features.ActionBlock}}, Columns: columnsGroup{Columns: testColumns}}
	workers := workersGroup{Workers: 2}

	// solve: the policy and the summary of `grmdp solve`.
	cliPolicy := filepath.Join(dir, "cli.parquet")
	cliOut := mustRun(t, "solve", "-o", cliPolicy, data)
	policy := filepath.Join(dir, "run.parquet")
	out, _ := call(t, func(stdout, stderr *bytes.Buffer) error {
		return runSolve(ctx, SolveOptions{Data: do, Workers: workers, Solver: solverGroup{Settings: solve.DefaultSettings}, Method: solve.Sitewise,
			Output: outputGroup{Path: policy}, Paths: []string{data}, Recorded: map[string]string{"command": "solve"}}, stdout, stderr)
	})
	if got, want := showVectors(t, policy), showVectors(t, cliPolicy); got != want {
		t.Errorf("runSolve's policy differs from grmdp solve's:\n%s\n%s", got, want)
	}
	if want := strings.ReplaceAll(cliOut, cliPolicy, policy); out != want {
		t.Errorf("runSolve printed\n%s\ngrmdp solve printed\n%s", out, want)
	}

	// compare: compare.json and the table of `grmdp compare`, the sitewise
	// policy equal to solve's.
	cliDir, runDir := filepath.Join(dir, "cli-compare"), filepath.Join(dir, "run-compare")
	cliOut = mustRun(t, "compare", "--model", model, "-o", cliDir, data)
	out, _ = call(t, func(stdout, stderr *bytes.Buffer) error {
		return runCompare(ctx, CompareOptions{Data: do, Workers: workers, Solver: solverGroup{Settings: solve.DefaultSettings}, Dir: runDir, Model: model,
			Paths: []string{data}, Recorded: map[string]string{"command": "compare"}}, stdout, stderr)
	})
	if want := strings.ReplaceAll(cliOut, cliDir, runDir); out != want {
		t.Errorf("runCompare printed\n%s\ngrmdp compare printed\n%s", out, want)
	}
	cliJSON, _ := os.ReadFile(filepath.Join(cliDir, "compare.json"))
	runJSON, _ := os.ReadFile(filepath.Join(runDir, "compare.json"))
	if want := strings.ReplaceAll(string(cliJSON), cliDir, runDir); string(runJSON) != want || len(runJSON) == 0 {
		t.Errorf("runCompare's compare.json\n%s\ndiffers from grmdp compare's\n%s", runJSON, want)
	}
	var doc struct{ Methods []dataset.MethodRow }
	if err := json.Unmarshal(runJSON, &doc); err != nil || len(doc.Methods) != len(solve.Methods)-1 {
		t.Fatalf("compare.json: %v, %d methods, want every method but cluster", err, len(doc.Methods))
	}
	if got, want := showVectors(t, filepath.Join(runDir, "sitewise.parquet")), showVectors(t, policy); got != want {
		t.Errorf("runCompare's sitewise policy differs from runSolve's")
	}
	// Each policy records its own method on top of the shared settings.
	for _, m := range []string{"sitewise", "pooled"} {
		var show struct{ Settings map[string]string }
		json.Unmarshal([]byte(mustRun(t, "show", "--json", filepath.Join(runDir, m+".parquet"))), &show)
		if show.Settings["method"] != m || show.Settings["command"] != "compare" {
			t.Errorf("%s policy records %v, want method %s and command compare", m, show.Settings, m)
		}
	}

	// apply: the recommendations of `grmdp apply`, byte for byte.
	cliApplied, applied := filepath.Join(dir, "cli-applied.parquet"), filepath.Join(dir, "applied.parquet")
	mustRun(t, "apply", "--policy", policy, "-o", cliApplied, data)
	out, _ = call(t, func(stdout, stderr *bytes.Buffer) error {
		return runApply(ctx, ApplyOptions{Policy: policy, Output: outputGroup{Path: applied}, Columns: columnsGroup{Columns: traj.Columns{Step: "step", Action: "action"}}, Paths: []string{data}}, stdout, stderr)
	})
	if out != "wrote "+applied+"\n" {
		t.Errorf("runApply printed %q", out)
	}
	if appliedTable(t, applied) != appliedTable(t, cliApplied) {
		t.Errorf("runApply's recommendations differ from grmdp apply's")
	}

	// eval: the JSON of `grmdp eval --json` (but the recorded settings),
	// and the report records the command line it is given.
	cliEval := mustRun(t, "eval", "--policy", policy, "--model", model, "--bootstrap", "3", "--permutations", "0", "--json", data)
	report := filepath.Join(dir, "report")
	out, _ = call(t, func(stdout, stderr *bytes.Buffer) error {
		return runEval(ctx, EvalOptions{Policy: policy, Model: model, Bootstrap: 3, Seed: 1, JSON: jsonGroup{JSON: true}, Report: report,
			Columns: columnsGroup{Columns: testColumns}, Paths: []string{data}, CommandLine: "grmdp eval (a test's command line)"}, stdout, stderr)
	})
	var got, want map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	json.Unmarshal([]byte(cliEval), &want)
	delete(got, "settings")
	delete(want, "settings")
	if g, w := mustJSON(got), mustJSON(want); g != w || got["policy_value"] == nil {
		t.Errorf("runEval's JSON\n%s\ndiffers from grmdp eval's\n%s", g, w)
	}
	md, err := os.ReadFile(filepath.Join(report, "report.md"))
	if err != nil || !strings.Contains(string(md), "grmdp eval (a test's command line)") {
		t.Errorf("the report does not record the command line of EvalOptions (%v)", err)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// The run functions check their options and fail with the command line's
// messages and exit codes.
func TestRunFunctionErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	data, _ := simulated(t, dir, "benchmark", "--trajectories", "30,20,50", "--horizon", "3")
	policy := filepath.Join(dir, "p.parquet")
	mustRun(t, "solve", "-o", policy, data)
	do := dataGroup{Map: mapGroup{Spec: features.Spec{Kind: features.ActionBlock}}, Columns: columnsGroup{Columns: testColumns}}
	settings := solverGroup{Settings: solve.DefaultSettings}
	var sink bytes.Buffer
	for _, c := range []struct {
		name string
		run  func() error
		want string
		code int
	}{
		{"solve without output", func() error {
			return runSolve(ctx, SolveOptions{Data: do, Solver: settings, Method: solve.Sitewise, Paths: []string{data}}, &sink, &sink)
		}, "no output path given", exitUsage},
		{"solve cluster without a file", func() error {
			return runSolve(ctx, SolveOptions{Data: do, Solver: settings, Method: solve.Cluster, Output: outputGroup{Path: filepath.Join(dir, "x.parquet")}, Paths: []string{data}}, &sink, &sink)
		}, "--method cluster needs --clusters FILE", exitUsage},
		{"solve bad memory", func() error {
			return runSolve(ctx, SolveOptions{Data: do, Memory: memoryGroup{Value: "lots"}, Solver: settings, Method: solve.Sitewise, Output: outputGroup{Path: filepath.Join(dir, "x.parquet")}, Paths: []string{data}}, &sink, &sink)
		}, `--max-memory "lots"`, exitUsage},
		{"compare into a file", func() error {
			return runCompare(ctx, CompareOptions{Data: do, Solver: settings, Dir: data, Paths: []string{data}}, &sink, &sink)
		}, data + " is not a directory", exitUsage},
		{"apply bad fallback", func() error {
			return runApply(ctx, ApplyOptions{Policy: policy, Output: outputGroup{Path: filepath.Join(dir, "a.parquet")}, Fallback: "best", Paths: []string{data}}, &sink, &sink)
		}, `--fallback must be behaviour or lowest, got "best"`, exitUsage},
		{"apply without data", func() error {
			return runApply(ctx, ApplyOptions{Policy: policy, Output: outputGroup{Path: filepath.Join(dir, "a.parquet")}}, &sink, &sink)
		}, "no DATA given", exitUsage},
		{"apply contradicting the policy", func() error {
			return runApply(ctx, ApplyOptions{Policy: policy, Output: outputGroup{Path: filepath.Join(dir, "a.parquet")}, Declared: policyDataGroup{Declared: dataset.Declared{Horizon: 9}}, Paths: []string{data}}, &sink, &sink)
		}, "--horizon 9: the policy has 3", exitUsage},
		{"eval negative bootstrap", func() error {
			return runEval(ctx, EvalOptions{Policy: policy, Bootstrap: -1, Columns: columnsGroup{Columns: testColumns}, Paths: []string{data}}, &sink, &sink)
		}, "--bootstrap must not be negative", exitUsage},
		{"eval through a binned map without bins", func() error {
			return runEval(ctx, EvalOptions{Policy: policy, Columns: columnsGroup{Columns: testColumns}, Declared: policyDataGroup{Declared: dataset.Declared{Features: "binned"}}, Paths: []string{data}}, &sink, &sink)
		}, "--features binned needs --bins COL:c1", exitUsage},
	} {
		err := c.run()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
			continue
		}
		if code := exitCode(ctx, err); code != c.code {
			t.Errorf("%s: exit code %d, want %d", c.name, code, c.code)
		}
	}
}

// A command's --max-memory becomes the soft memory limit; 0 leaves the
// limit alone.
func TestMaxMemoryIsTheSoftLimit(t *testing.T) {
	old := debug.SetMemoryLimit(-1)
	defer debug.SetMemoryLimit(old)
	t.Setenv("GOMEMLIMIT", "")
	os.Unsetenv("GOMEMLIMIT")
	dir := t.TempDir()
	data, _ := simulated(t, dir, "benchmark", "--trajectories", "30,20,50", "--horizon", "3")
	mustRun(t, "inspect", "--max-memory", "3GiB", data)
	if got := debug.SetMemoryLimit(-1); got != 3<<30 {
		t.Errorf("after --max-memory 3GiB the soft limit is %d, want %d", got, int64(3<<30))
	}
	debug.SetMemoryLimit(5 << 30)
	mustRun(t, "inspect", "--max-memory", "0", data)
	if got := debug.SetMemoryLimit(-1); got != 5<<30 {
		t.Errorf("--max-memory 0 changed the soft limit to %d", got)
	}
}
