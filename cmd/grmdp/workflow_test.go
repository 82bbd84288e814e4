package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/traj"
)

// writeRenamed writes the benchmark's rows under a hospital export's
// column names: hospital, patient_id, t, treatment, outcome and the
// state columns lactate, sofa, age.
func writeRenamed(t *testing.T, dir string) string {
	t.Helper()
	data, _ := simulated(t, t.TempDir(), "benchmark", "--trajectories", "40,30,50")
	c := readChunk(t, data)
	path := filepath.Join(dir, "export.parquet")
	cols := traj.Columns{Site: "hospital", Traj: "patient_id", Step: "t", Action: "treatment", Reward: "outcome"}
	if err := parquetio.WriteChunks(path, []*traj.Chunk{c}, parquetio.WriteOptions{Columns: cols, StateColumns: []string{"lactate", "sofa", "age"}}); err != nil {
		t.Fatal(err)
	}
	return path
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// One --config file serves inspect, solve, eval, apply and show: the
// column mapping, the feature map (a YAML map of bins) and the data path
// are in it once; each command ignores, with one note, the settings only
// other commands have; the per-command sections name each command's
// files.
func TestOneConfigServesEveryCommand(t *testing.T) {
	dir := t.TempDir()
	writeRenamed(t, dir)
	for _, kind := range []string{"binned", "soft-binned"} {
		out := filepath.Join(dir, kind)
		cfg := filepath.Join(dir, kind+".yaml")
		writeFile(t, cfg, `data: [`+dir+`/export.parquet]
site-col: hospital
traj-col: patient_id
step-col: t
action-col: treatment
reward-col: outcome
features: `+kind+`
bins:
  lactate: [0.3, 0.6]
  sofa: q3
method: sitewise
bootstrap: 0
permutations: 0
solve:
  output: `+out+`/policy.parquet
eval:
  policy: `+out+`/policy.parquet
apply:
  policy: `+out+`/policy.parquet
  output: `+out+`/recs/recommendations.parquet
`)
		_, errOut := mustRunErr(t, "inspect", "--config", cfg)
		if want := "grmdp: note: --config " + cfg + ": bootstrap, method, permutations do not apply to inspect, ignored\n"; !strings.Contains(errOut, want) {
			t.Errorf("inspect's stderr lacks %q:\n%s", want, errOut)
		}
		mustRun(t, "solve", "--config", cfg)
		_, errOut = mustRunErr(t, "eval", "--config", cfg)
		if !strings.Contains(errOut, "method does not apply to eval, ignored") {
			t.Errorf("eval's stderr lacks the note on method:\n%s", errOut)
		}
		mustRun(t, "apply", "--config", cfg)
		if _, err := os.Stat(filepath.Join(out, "recs", "recommendations.parquet")); err != nil {
			t.Errorf("apply did not write into the directory it was to create: %v", err)
		}
		show := mustRun(t, "show", filepath.Join(out, "policy.parquet"))
		if !strings.Contains(show, kind) {
			t.Errorf("show does not name the %s map:\n%s", kind, show)
		}
	}
}

// mustRunErr is mustRun returning stderr too.
func mustRunErr(t *testing.T, args ...string) (string, string) {
	t.Helper()
	code, out, errOut := grmdp(t, args...)
	if code != 0 {
		t.Fatalf("grmdp %s: exit %d\nstdout:\n%s\nstderr:\n%s", strings.Join(args, " "), code, out, errOut)
	}
	return out, errOut
}

// apply and eval read the data with the column names the policy was
// learned with (no column flags), where they used to look for "step";
// an explicit flag still wins (a wrong one fails naming its column).
func TestPolicyRemembersColumns(t *testing.T) {
	dir := t.TempDir()
	data := writeRenamed(t, dir)
	pol := filepath.Join(dir, "p.parquet")
	mustRun(t, "solve", "--site-col", "hospital", "--traj-col", "patient_id", "--step-col", "t", "--action-col", "treatment",
		"--reward-col", "outcome", "--state", "lactate,sofa,age", "-o", pol, data)
	mustRun(t, "apply", "--policy", pol, "-o", filepath.Join(dir, "a.parquet"), data)
	js := mustRun(t, "eval", "--policy", pol, "--bootstrap", "0", "--permutations", "0", "--json", data)
	var doc struct{ Settings map[string]string }
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Settings["step-col"] != "t" || doc.Settings["site-col"] != "hospital" {
		t.Errorf("eval's JSON records columns %v, not the ones it read", doc.Settings)
	}
	code, _, errOut := grmdp(t, "apply", "--policy", pol, "--step-col", "step", "-o", filepath.Join(dir, "b.parquet"), data)
	if code != exitBadData || !strings.Contains(errOut, `column "step"`) {
		t.Errorf("an explicit --step-col step: exit %d, stderr %s", code, errOut)
	}
	// A flag that would change the problem is still refused.
	code, _, errOut = grmdp(t, "eval", "--policy", pol, "--state", "lactate,sofa", data)
	if code != exitUsage || !strings.Contains(errOut, "--state") {
		t.Errorf("a conflicting --state: exit %d, stderr %s", code, errOut)
	}
}

// A YAML list sets a comma-separated flag (state), a section overrides
// the top level, a misspelt setting and a misspelt section setting are
// refused, and data given on the command line win over the file's.
func TestConfigListsSectionsAndErrors(t *testing.T) {
	dir := t.TempDir()
	data, _ := simulated(t, dir, "benchmark", "--trajectories", "20,20,20")
	cfg := filepath.Join(dir, "c.yaml")
	writeFile(t, cfg, "state: [s1, s2]\ndata: "+filepath.Join(dir, "absent.parquet")+"\ninspect:\n  state: [s1, s2, s3]\n")
	out := mustRun(t, "inspect", "--config", cfg, data)
	if !strings.Contains(out, "d = 30") {
		t.Errorf("the inspect section's three state columns were not used:\n%s", out)
	}
	writeFile(t, cfg, "state: [s1, s2]\n")
	if out := mustRun(t, "inspect", "--config", cfg, data); !strings.Contains(out, "d = 20") {
		t.Errorf("state: [s1, s2] did not give two state columns:\n%s", out)
	}
	for text, want := range map[string]string{
		"lamda: 2\n":            `unknown setting "lamda"`,
		"solve:\n  lamda: 2\n":  `section solve: unknown setting "lamda"`,
		"solve: 3\n":            "section solve: not a mapping",
		"state: {a: 1}\n":       "state: want a value or a list of values",
		"data: [" + dir + "]\n": "", // data in the file, none on the command line: works
	} {
		writeFile(t, cfg, text)
		code, _, errOut := grmdp(t, "inspect", "--config", cfg)
		if want == "" {
			if code != 0 {
				t.Errorf("%q: exit %d: %s", text, code, errOut)
			}
			continue
		}
		if code != exitUsage || !strings.Contains(errOut, want) {
			t.Errorf("%q: exit %d, stderr %q, want %q", text, code, errOut, want)
		}
	}
}

// A subcommand's section, named as on the command line, applies to it.
func TestConfigSubcommandSection(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.yaml")
	writeFile(t, cfg, "federate init:\n  min-sites: 7\n")
	code, _, errOut := grmdp(t, "federate", "init", "--config", cfg, "--sites", "a,b,c", "--horizon", "3", "--actions", "2", "--state", "s1", "-o", filepath.Join(dir, "job"))
	if code != exitUsage || !strings.Contains(errOut, "--min-sites 7 is more than") {
		t.Errorf("the federate init section's min-sites: exit %d, stderr %q", code, errOut)
	}
}

// A cluster count is --num-clusters in cluster as in solve and eval;
// --clusters, a file elsewhere, is refused naming --num-clusters.
func TestClusterNumClusters(t *testing.T) {
	dir := t.TempDir()
	sim := filepath.Join(dir, "sim.csv")
	writeFile(t, sim, ",a,b,c\na,1,0.9,0.1\nb,0.9,1,0.2\nc,0.1,0.2,1\n")
	code, _, errOut := grmdp(t, "cluster", "--similarity", sim, "--clusters", "2", "-o", filepath.Join(dir, "c.json"))
	if code != exitUsage || !strings.Contains(errOut, "--num-clusters 2") {
		t.Errorf("cluster --clusters 2: exit %d, stderr %s", code, errOut)
	}
	out := mustRun(t, "cluster", "--similarity", sim, "--num-clusters", "2", "-o", filepath.Join(dir, "c.json"))
	if !strings.Contains(out, "[a b]") || !strings.Contains(out, "[c]") {
		t.Errorf("cluster --num-clusters 2 did not cut {a, b}, {c}:\n%s", out)
	}
}

// Every command creates the missing directories of its outputs; a path
// through a file is refused; a failed or interrupted run removes the
// directories it created.
func TestOutputDirectories(t *testing.T) {
	dir := t.TempDir()
	data, _ := simulated(t, dir, "benchmark", "--trajectories", "20,20,20")
	pol := filepath.Join(dir, "new", "deeper", "p.parquet")
	mustRun(t, "solve", "-o", pol, data)
	mustRun(t, "apply", "--policy", pol, "-o", filepath.Join(dir, "a", "b", "out.parquet"), data)
	mustRun(t, "simulate", "--scenario", "benchmark", "--trajectories", "5,5,5", "-o", filepath.Join(dir, "s", "d.parquet"),
		"--model-out", filepath.Join(dir, "m", "model.json"))
	sim := filepath.Join(dir, "sim.csv")
	writeFile(t, sim, ",a,b\na,1,0.5\nb,0.5,1\n")
	mustRun(t, "cluster", "--similarity", sim, "--threshold", "0.4", "-o", filepath.Join(dir, "c", "clusters.json"))
	mustRun(t, "compare", "-o", filepath.Join(dir, "cmp", "x"), data)
	mustRun(t, "eval", "--policy", pol, "--bootstrap", "0", "--permutations", "0", "--report", filepath.Join(dir, "r", "rep"), data)
	for _, f := range []string{"a/b/out.parquet", "s/d.parquet", "m/model.json", "c/clusters.json", "cmp/x/compare.json", "r/rep/report.md"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("%s not written: %v", f, err)
		}
	}
	code, _, errOut := grmdp(t, "solve", "-o", filepath.Join(sim, "p.parquet"), data)
	if code != exitUsage || !strings.Contains(errOut, "is not a directory") {
		t.Errorf("output below a file: exit %d, stderr %s", code, errOut)
	}
	// A failed solve (bad data) removes the directories it made.
	writeFile(t, filepath.Join(dir, "bad.parquet"), "not parquet")
	code, _, _ = grmdp(t, "solve", "-o", filepath.Join(dir, "gone", "x", "p.parquet"), filepath.Join(dir, "bad.parquet"))
	if _, err := os.Stat(filepath.Join(dir, "gone")); code == 0 || !os.IsNotExist(err) {
		t.Errorf("a failed solve (exit %d) left its output directory: %v", code, err)
	}
	// An interrupted eval (cancelled context) leaves no --report directory.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var sink bytes.Buffer
	code = run(ctx, []string{"grmdp", "eval", "--policy", pol, "--report", filepath.Join(dir, "int", "rep"), data}, &sink, &sink)
	if _, err := os.Stat(filepath.Join(dir, "int")); code != exitInterrupted || !os.IsNotExist(err) {
		t.Errorf("an interrupted eval (exit %d) left its report directory: %v\n%s", code, err, sink.String())
	}
}

// The smaller points: grmdp version prints what --version prints; the
// report records the program as grmdp, not the path it ran from; eval
// formats the model's value gap like the other values; inspect's episode
// lengths have a header; files other than Parquet in a DATA directory
// are noted, once.
func TestSmallerPoints(t *testing.T) {
	v := mustRun(t, "version")
	if v != mustRun(t, "--version") || v != "grmdp version "+version+"\n" {
		t.Errorf("grmdp version printed %q", v)
	}
	dir := t.TempDir()
	data, model := simulated(t, dir, "benchmark", "--trajectories", "20,20,20")
	pol := filepath.Join(dir, "p.parquet")
	mustRun(t, "solve", "-o", pol, data)
	var stdout, stderr bytes.Buffer
	rep := filepath.Join(dir, "rep")
	args := []string{"/tmp/go-build123/b001/exe/grmdp", "eval", "--policy", pol, "--model", model, "--bootstrap", "0", "--permutations", "0", "--report", rep, data}
	if code := run(context.Background(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("eval: exit %d: %s", code, stderr.String())
	}
	md, err := os.ReadFile(filepath.Join(rep, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(md), "grmdp eval --policy "+pol) || strings.Contains(string(md), "go-build") {
		t.Errorf("the report's command line is not grmdp's:\n%s", md)
	}
	gap := regexp.MustCompile(`(?m)^value gap \(model\)\s+(\S+)$`).FindStringSubmatch(stdout.String())
	if gap == nil || len(strings.TrimLeft(strings.NewReplacer(".", "", "-", "").Replace(strings.Split(gap[1], "e")[0]), "0")) > 4 {
		t.Errorf("value gap not printed with 4 significant digits: %v\n%s", gap, stdout.String())
	}
	out := mustRun(t, "inspect", data)
	if !regexp.MustCompile(`episode lengths.*\n\s+site\s+length 1\s+length 2`).MatchString(out) {
		t.Errorf("the episode-length table has no header:\n%s", out)
	}
	ddir := filepath.Join(dir, "d")
	os.MkdirAll(filepath.Join(ddir, "_delta_log"), 0o755)
	b, _ := os.ReadFile(data)
	writeFile(t, filepath.Join(ddir, "part.parquet"), string(b))
	writeFile(t, filepath.Join(ddir, "part.csv"), "site\n")
	writeFile(t, filepath.Join(ddir, "notes.txt"), "x")
	writeFile(t, filepath.Join(ddir, "_delta_log", "0.json"), "{}")
	_, errOut := mustRunErr(t, "inspect", ddir)
	if want := "grmdp: note: skipped 2 files that are not .parquet in the DATA directories, such as " + filepath.Join(ddir, "notes.txt") + "\n"; strings.Count(errOut, "skipped") != 1 || !strings.Contains(errOut, want) {
		t.Errorf("stderr lacks %q once:\n%s", want, errOut)
	}
}

// compare prints a coverage warning that every method shares once,
// naming the methods, instead of once per method.
func TestCompareWarnsOnce(t *testing.T) {
	dir := t.TempDir()
	data := writeClinical(t, dir, true) // action 5 in one row: actions 3 and 4 are never taken
	_, errOut := mustRunErr(t, "compare", "--state", "lactate,sofa,age", "-o", filepath.Join(dir, "cmp"), data)
	seen := map[string]int{}
	for _, l := range strings.Split(strings.TrimSpace(errOut), "\n") {
		if strings.Contains(l, "never observes") {
			_, w, _ := strings.Cut(l, ": site ")
			seen[w]++
			if !strings.Contains(l, "sitewise, pooled") {
				t.Errorf("the warning does not list the methods: %s", l)
			}
		}
	}
	if len(seen) == 0 {
		t.Fatalf("no coverage warning:\n%s", errOut)
	}
	for w, n := range seen {
		if n != 1 {
			t.Errorf("warning %q printed %d times", w, n)
		}
	}
}
