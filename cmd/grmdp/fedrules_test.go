//go:build unix

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grmdp/grmdp/federate"
)

// exportInit are the settings of a job over writeExport's export, but
// its data rules and sizes.
var exportInit = []string{"federate", "init", "--site-col", "hospital", "--traj-col", "patient_id", "--step-col", "t",
	"--action-col", "treatment", "--reward-col", "outcome", "--features", "binned", "--bins", "lactate:2,3,4",
	"--sites", "boston,cork,lyon,oslo,porto"}

// A site reads its rows under the job's rules, and its errors name the
// rule and the init setting that changes it, never a flag of its own
// command: a NULL under the job's null policy, a step 0 under steps from
// 1, text actions in a job without labels, a label the job does not list.
func TestSiteAppliesJobRules(t *testing.T) {
	dir := t.TempDir()
	writeExport(t, filepath.Join(dir, "export"))
	labels := []string{"--action-labels", "fluids,none,vasopressors"}
	for _, tc := range []struct {
		name  string
		rules []string
		want  []string
	}{
		{"nulls", append([]string{"--first-step", "0"}, labels...), []string{"null value", "the job's null policy is error", "federate init --nulls truncate"}},
		{"steps", append([]string{"--first-step", "1", "--nulls", "truncate"}, labels...), []string{"step 0", "the job reads steps as numbered from 1", "federate init --first-step 0"}},
		{"no labels", []string{"--first-step", "0", "--nulls", "truncate"}, []string{"text labels", "federate init --action-labels"}},
		{"unknown label", []string{"--first-step", "0", "--nulls", "truncate", "--action-labels", "fluids,none"}, []string{`"vasopressors"`, "the job's action labels are [fluids none]", "federate init --action-labels"}},
	} {
		job := filepath.Join(dir, strings.ReplaceAll(tc.name, " ", "-"))
		mustRun(t, append(append(append([]string{}, exportInit...), "--horizon", "6", "-o", job), tc.rules...)...)
		before, _ := os.ReadFile(filepath.Join(job, federate.JobFile))
		code, _, stderr := grmdp(t, "federate", "site", "--job", job, "--site", "boston", "-o", filepath.Join(dir, "m.parquet"), filepath.Join(dir, "export", "boston"))
		checkFailure(t, code, lastLine(stderr), exitBadData, "", tc.want...)
		for _, flag := range []string{"set --nulls", "set --first-step", "--actions", "the policy's actions"} {
			if strings.Contains(stderr, flag) {
				t.Errorf("%s: the site's error names %q: %s", tc.name, flag, stderr)
			}
		}
		if after, _ := os.ReadFile(filepath.Join(job, federate.JobFile)); !bytes.Equal(before, after) {
			t.Errorf("%s: the site changed the job", tc.name)
		}
	}
}

// init into a directory that holds a job exits 2, naming it, and leaves
// the job's files as they were.
func TestFederateInitExistingJob(t *testing.T) {
	job := filepath.Join(t.TempDir(), "job")
	args := append(append([]string{}, exportInit...), "--action-labels", "fluids,none,vasopressors", "-o", job)
	mustRun(t, args...)
	var before [][]byte
	for _, f := range []string{federate.JobFile, federate.StateFile} {
		b, _ := os.ReadFile(filepath.Join(job, f))
		before = append(before, b)
	}
	code, _, stderr := grmdp(t, args...)
	checkFailure(t, code, stderr, exitUsage, "", job, "already holds a job")
	for i, f := range []string{federate.JobFile, federate.StateFile} {
		if b, _ := os.ReadFile(filepath.Join(job, f)); !bytes.Equal(b, before[i]) {
			t.Errorf("%s changed", f)
		}
	}
	// Labels and --actions must agree; sizes given must be positive.
	code, _, stderr = grmdp(t, append(append([]string{}, exportInit...), "--action-labels", "a,b", "--actions", "3", "-o", job+"2")...)
	checkFailure(t, code, stderr, exitUsage, "", "--actions 3 with 2 action labels")
	code, _, stderr = grmdp(t, append(append([]string{}, exportInit...), "--horizon", "0", "-o", job+"3")...)
	checkFailure(t, code, stderr, exitUsage, "", "--horizon")
}

// A tabular job over integer actions made without H, A or S takes all
// three from its shape round, and federate run gives the central solve's
// policy bit for bit.
func TestShapeRoundTabular(t *testing.T) {
	if testing.Short() {
		t.Skip("builds grmdp and starts a process per part")
	}
	bin := federateBinary(t)
	dir := t.TempDir()
	_, names, dirs := simulateSplit(t, dir, "--scenario", "formulary", "--seed", "3")
	job := filepath.Join(dir, "job")
	settings := []string{"--features", "tabular", "--method", "sitewise", "--min-count", "5", "--min-rows", "10"}
	out := mustRun(t, append([]string{"federate", "init", "--sites", strings.Join(names, ","), "-o", job}, settings...)...)
	if !strings.Contains(out, "largest step (H), action + 1 (A), state + 1 (S)") {
		t.Fatalf("init does not announce the shape round:\n%s", out)
	}
	run := []string{"federate", "run", "--job", job}
	for i, n := range names {
		run = append(run, "--site", n+"="+dirs[i])
	}
	out = mustBin(t, bin, run...)
	if !strings.Contains(out, "shape round folded") {
		t.Fatalf("federate run played no shape round:\n%s", out)
	}
	j, _, err := federate.Load(job)
	if err != nil {
		t.Fatal(err)
	}
	central := filepath.Join(dir, "central.parquet")
	mustRun(t, append(append(append([]string{"solve"}, settings...), "-o", central), dirs...)...)
	want := readPolicyT(t, central)
	if j.ShapeOpen() || j.H != want.H || j.Map.A != want.A || j.Map.S != want.Map.S {
		t.Fatalf("the shape round set H = %d, A = %d, S = %d (ask %v); the central solve finds %d, %d, %d", j.H, j.Map.A, j.Map.S, j.Ask, want.H, want.A, want.Map.S)
	}
	samePolicies(t, "job/policy.parquet", want, readPolicyT(t, filepath.Join(job, "policy.parquet")))
}

// lastLine returns the last line of s (with its newline): a command's
// error, after its notes.
func lastLine(s string) string {
	lines := strings.SplitAfter(strings.TrimSuffix(s, "\n"), "\n")
	return lines[len(lines)-1] + "\n"
}

// vantage6 applies the job's rules as federate site does: the shape
// message of a job over the export (text labels, steps from 0, NULLs) is
// the same bytes from both, and a NULL under the job's "error" policy is
// refused naming the job's rule, not a flag.
func TestVantage6AppliesJobRules(t *testing.T) {
	dir := t.TempDir()
	writeExport(t, filepath.Join(dir, "export"))
	data := filepath.Join(dir, "export", "cork")
	node := filepath.Join(dir, "node")
	os.MkdirAll(filepath.Join(node, "tmp"), 0o755)
	out := filepath.Join(node, "output")
	t.Setenv("INPUT_FILE", filepath.Join(node, "input"))
	t.Setenv("OUTPUT_FILE", out)
	t.Setenv("TEMPORARY_FOLDER", filepath.Join(node, "tmp"))
	t.Setenv("DATABASE_URI", data)
	for _, nulls := range []string{"truncate", "error"} {
		job := filepath.Join(dir, "job-"+nulls)
		mustRun(t, append(append([]string{}, exportInit...), "--first-step", "0", "--nulls", nulls, "--action-labels", "fluids,none,vasopressors", "-o", job)...)
		jb, _ := os.ReadFile(filepath.Join(job, federate.JobFile))
		sb, _ := os.ReadFile(filepath.Join(job, federate.StateFile))
		os.WriteFile(filepath.Join(node, "input"), []byte(`{"method": "site", "job": `+string(jb)+`, "state": `+string(sb)+`, "site": "cork"}`), 0o644)
		code, _, stderr := grmdp(t, "vantage6")
		if nulls == "error" {
			checkFailure(t, code, lastLine(stderr), exitBadData, "", "null value", "the job's null policy is error", "federate init --nulls truncate")
			continue
		}
		if code != 0 {
			t.Fatalf("vantage6: exit %d: %s", code, stderr)
		}
		want := filepath.Join(dir, "site.parquet")
		mustRun(t, "federate", "site", "--job", job, "--site", "cork", "-o", want, data)
		a, _ := os.ReadFile(want)
		b, _ := os.ReadFile(out)
		if !bytes.Equal(a, b) {
			t.Fatalf("vantage6's shape message differs from federate site's")
		}
		inc, err := readMessage(out)
		if err != nil {
			t.Fatal(err)
		}
		if inc.Msg.Kind != federate.KindShape || inc.Msg.Shape.H != 6 || inc.Msg.Shape.A != 0 {
			t.Fatalf("shape message %+v, sizes %+v", inc.Msg, inc.Msg.Shape)
		}
	}
}
