package main

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// badDir is the bad-input corpus written by scripts/mkcorpus.go (see its
// README.md).
const badDir = "../../testdata/bad"

// parquetTestingDir is apache/parquet-testing beside the repository (see
// shared/testdata/parquet-testing/INDEX.md).
const parquetTestingDir = "../../../shared/testdata/parquet-testing"

// bad returns the path of a corpus file.
func bad(name string) string { return filepath.Join(badDir, name) }

// checkFailure checks the contract of a failed run: the exit code, exactly
// one line on stderr that starts with "grmdp: " and mentions every
// fragment, and nothing left in outDir (neither the output nor a temporary
// file).
func checkFailure(t *testing.T, code int, stderr string, wantCode int, outDir string, fragments ...string) {
	t.Helper()
	if code != wantCode {
		t.Errorf("exit %d, want %d; stderr: %s", code, wantCode, stderr)
	}
	if !strings.HasPrefix(stderr, "grmdp: ") || strings.Count(stderr, "\n") != 1 || !strings.HasSuffix(stderr, "\n") {
		t.Errorf("stderr is not one line starting with \"grmdp: \": %q", stderr)
	}
	if strings.Contains(stderr, "internal error") || strings.Contains(stderr, "goroutine ") {
		t.Errorf("stderr reports a panic: %q", stderr)
	}
	for _, f := range fragments {
		if !strings.Contains(stderr, f) {
			t.Errorf("stderr %q does not mention %q", stderr, f)
		}
	}
	if outDir != "" {
		if left, _ := os.ReadDir(outDir); len(left) > 0 {
			var names []string
			for _, e := range left {
				names = append(names, e.Name())
			}
			t.Errorf("a failed run left %v in the output directory", names)
		}
	}
}

// runTimeout runs the command line in-process and fails the test if it
// does not return within d (a hang).
func runTimeout(t *testing.T, d time.Duration, args ...string) (int, string, string) {
	t.Helper()
	type result struct {
		code           int
		stdout, stderr string
	}
	done := make(chan result, 1)
	go func() {
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), append([]string{"grmdp"}, args...), &stdout, &stderr)
		done <- result{code, stdout.String(), stderr.String()}
	}()
	select {
	case r := <-done:
		return r.code, r.stdout, r.stderr
	case <-time.After(d):
		t.Fatalf("grmdp %s did not return within %v", strings.Join(args, " "), d)
		return 0, "", ""
	}
}

// TestBadInputCorpus runs grmdp on every case of testdata/bad: each must
// exit with its code and one line naming the file and, where they apply,
// the column and the row, and must leave no output behind.
func TestBadInputCorpus(t *testing.T) {
	if _, err := os.Stat(bad("README.md")); err != nil {
		t.Fatalf("no corpus at %s (go run scripts/mkcorpus.go): %v", badDir, err)
	}
	// Policies to apply, learned on the good files.
	pdir := t.TempDir()
	pol := func(name, data string, flags ...string) string {
		p := filepath.Join(pdir, name)
		mustRun(t, append(append([]string{"solve"}, flags...), "-o", p, bad(data))...)
		return p
	}
	polAB := pol("ab.parquet", "good.parquet")
	polLabels := pol("labels.parquet", "good-labels.parquet")
	polTab := pol("tabular.parquet", "good-tabular.parquet", "--features", "tabular")

	const row = "row 5" // the row mkcorpus breaks in single-value cases
	col := func(c string) string { return `column "` + c + `"` }
	type tc struct {
		name string
		// args; "OUT" is replaced by the case's output path, "DIR" by its
		// (existing, empty) output directory and "OUTDIR/x" by a path in a
		// missing directory.
		args []string
		code int
		want []string
	}
	solve := func(data string, flags ...string) []string {
		return append(append([]string{"solve"}, flags...), "-o", "OUT", bad(data))
	}
	cases := []tc{
		// Files that are not (whole) Parquet, and inputs with no rows.
		{"empty file", solve("empty.parquet"), exitBadData, []string{"empty.parquet", "empty"}},
		{"zero rows", solve("zero-rows.parquet"), exitBadData, []string{"zero-rows.parquet", "no rows"}},
		{"truncated", solve("truncated.parquet"), exitBadData, []string{"truncated.parquet", "truncated"}},
		{"text named .parquet", solve("text.parquet"), exitBadData, []string{"text.parquet", "not a parquet file"}},
		{"directory without parquet", solve("no-parquet"), exitBadData, []string{"no-parquet", "no .parquet files"}},
		{"missing file", solve("absent.parquet"), exitBadData, []string{"absent.parquet", "no such file"}},
		{"schemas disagree", solve("schemas-disagree"), exitBadData, []string{"part-1.parquet", "part-0.parquet", col("site")}},
		// Missing and mistyped contract columns.
		{"missing reward", solve("missing-reward.parquet"), exitBadData, []string{"missing-reward.parquet", col("reward"), "missing"}},
		{"missing state column", solve("missing-s2.parquet", "--state", "s1,s2"), exitBadData, []string{"missing-s2.parquet", col("s2"), "missing"}},
		{"step double", solve("step-double.parquet"), exitBadData, []string{"step-double.parquet", col("step"), "double"}},
		{"reward string", solve("reward-string.parquet"), exitBadData, []string{"reward-string.parquet", col("reward"), "string"}},
		{"site double", solve("site-double.parquet"), exitBadData, []string{"site-double.parquet", col("site"), "double"}},
		{"action double", solve("action-double.parquet"), exitBadData, []string{"action-double.parquet", col("action"), "double"}},
		// Values that break the contract.
		{"nan reward", solve("nan-reward.parquet"), exitBadData, []string{"nan-reward.parquet", col("reward"), row, "NaN"}},
		{"inf reward", solve("inf-reward.parquet"), exitBadData, []string{"inf-reward.parquet", col("reward"), row, "Inf"}},
		{"nan state", solve("nan-s1.parquet"), exitBadData, []string{"nan-s1.parquet", col("s1"), row, "NaN"}},
		{"inf state", solve("inf-s2.parquet"), exitBadData, []string{"inf-s2.parquet", col("s2"), row, "Inf"}},
		{"reward above 1", solve("reward-above-1.parquet"), exitBadData, []string{"reward-above-1.parquet", col("reward"), row, "[0,1]"}},
		{"reward negative", solve("reward-negative.parquet"), exitBadData, []string{"reward-negative.parquet", col("reward"), row, "[0,1]"}},
		{"step 0", solve("step-zero.parquet", "--first-step", "1"), exitBadData, []string{"step-zero.parquet", col("step"), row, "step 0 is below 1", "--first-step 0"}},
		{"step beyond horizon", solve("step-beyond-horizon.parquet", "--horizon", "3"), exitBadData, []string{"step-beyond-horizon.parquet", col("step"), "row 27", "horizon"}},
		{"gap", solve("gap.parquet"), exitBadData, []string{"gap.parquet", col("step"), "row 26", "gap"}},
		{"duplicate", solve("duplicate.parquet"), exitBadData, []string{"duplicate.parquet", col("step"), "row 26", "row 25", "duplicate"}},
		{"negative action", solve("negative-action.parquet"), exitBadData, []string{"negative-action.parquet", col("action"), row}},
		{"negative state", solve("negative-state.parquet"), exitBadData, []string{"negative-state.parquet", col("s2"), row, "negative"}},
		{"all-zero state", solve("zero-state.parquet"), exitBadData, []string{"zero-state.parquet", col("s1"), row, "zero"}},
		{"tabular state out of range", solve("tabular-out-of-range.parquet", "--features", "tabular", "--num-states", "5"), exitBadData,
			[]string{"tabular-out-of-range.parquet", col("state"), row, "0..4"}},
		{"phi wrong length", solve("phi-wrong-length.parquet", "--features", "precomputed"), exitBadData, []string{"phi-wrong-length.parquet", col("phi"), "length 4"}},
		{"phi negative", solve("phi-negative.parquet", "--features", "precomputed"), exitBadData, []string{"phi-negative.parquet", col("phi"), row, "nonnegative"}},
		{"phi off the simplex", solve("phi-not-simplex.parquet", "--features", "precomputed"), exitBadData, []string{"phi-not-simplex.parquet", col("phi"), row, "sums to 1.25"}},
		// The same checks in the other data-reading commands.
		{"inspect null step", []string{"inspect", bad("null-step.parquet")}, exitBadData, []string{"null-step.parquet", col("step"), row, "null"}},
		{"compare reward above 1", []string{"compare", "-o", "DIR", bad("reward-above-1.parquet")}, exitBadData, []string{"reward-above-1.parquet", col("reward"), row}},
		{"eval nan reward", []string{"eval", "--policy", polAB, bad("nan-reward.parquet")}, exitBadData, []string{"nan-reward.parquet", col("reward"), row}},
		{"apply null state", []string{"apply", "--policy", polAB, "-o", "OUT", bad("null-s1.parquet")}, exitBadData, []string{"null-s1.parquet", col("s1"), row, "null"}},
		// Similarity files, to grmdp cluster and solve --method cluster.
		{"similarity not square", []string{"cluster", "--similarity", bad("similarity-not-square.csv"), "--threshold", "0.5", "-o", "OUT", bad("good.parquet")}, exitBadData,
			[]string{"similarity-not-square.csv", "not square"}},
		{"similarity not symmetric", []string{"cluster", "--similarity", bad("similarity-not-symmetric.csv"), "--threshold", "0.5", "-o", "OUT"}, exitBadData,
			[]string{"similarity-not-symmetric.csv", "line 3", "not symmetric"}},
		{"similarity not numeric", []string{"cluster", "--similarity", bad("similarity-not-numeric.csv"), "--num-clusters", "2", "-o", "OUT"}, exitBadData,
			[]string{"similarity-not-numeric.csv", "line 2, column 4", "not a number"}},
		{"similarity unknown sites", []string{"cluster", "--similarity", bad("similarity-unknown-sites.csv"), "--threshold", "0.5", "-o", "OUT", bad("good.parquet")}, exitBadData,
			[]string{"similarity-unknown-sites.csv", `site "3"`}},
		{"solve cluster not square", solve("good.parquet", "--method", "cluster", "--clusters", bad("similarity-not-square.csv"), "--threshold", "0.5"), exitBadData,
			[]string{"similarity-not-square.csv", "not square"}},
		{"solve cluster not symmetric", solve("good.parquet", "--method", "cluster", "--clusters", bad("similarity-not-symmetric.csv"), "--threshold", "0.5"), exitBadData,
			[]string{"similarity-not-symmetric.csv", "not symmetric"}},
		{"solve cluster not numeric", solve("good.parquet", "--method", "cluster", "--clusters", bad("similarity-not-numeric.csv"), "--threshold", "0.5"), exitBadData,
			[]string{"similarity-not-numeric.csv", "not a number"}},
		{"solve cluster unknown sites", solve("good.parquet", "--method", "cluster", "--clusters", bad("similarity-unknown-sites.csv"), "--threshold", "0.5"), exitBadData,
			[]string{"similarity-unknown-sites.csv", `site "3"`, "--allow-singletons"}},
		{"similarity without a method", []string{"cluster", "--similarity", bad("similarity-good.csv"), "-o", "OUT"}, exitUsage, []string{"similarity-good.csv"}},
		// Policies that do not fit the data.
		{"apply unknown action label", []string{"apply", "--policy", polLabels, "-o", "OUT", bad("other-labels.parquet")}, exitBadData,
			[]string{"other-labels.parquet", col("action"), "row 0", `"placebo"`}},
		{"apply integer action outside the policy's", []string{"apply", "--policy", polAB, "-o", "OUT", bad("four-actions.parquet")}, exitBadData,
			[]string{"four-actions.parquet", col("action"), row, "0..2"}},
		{"apply labelled policy to integer actions", []string{"apply", "--policy", polLabels, "-o", "OUT", bad("good.parquet")}, exitBadData,
			[]string{"good.parquet", col("action"), "labels"}},
		{"apply integer policy to labelled actions", []string{"apply", "--policy", polAB, "-o", "OUT", bad("good-labels.parquet")}, exitBadData,
			[]string{"good-labels.parquet", col("action"), "labels"}},
		{"apply policy of another feature map", []string{"apply", "--policy", polTab, "-o", "OUT", bad("good.parquet")}, exitBadData,
			[]string{"good.parquet", col("state"), "missing"}},
		{"eval unknown action label", []string{"eval", "--policy", polLabels, bad("other-labels.parquet")}, exitBadData,
			[]string{"other-labels.parquet", col("action"), "row 0", `"placebo"`}},
		{"eval policy of another feature map", []string{"eval", "--policy", polTab, bad("good.parquet")}, exitBadData,
			[]string{"good.parquet", col("state")}},
		{"data file as policy", []string{"apply", "--policy", bad("good.parquet"), "-o", "OUT", bad("good.parquet")}, exitBadData,
			[]string{"good.parquet", "grmdp solve"}},
		{"text file as policy", []string{"show", bad("text.parquet")}, exitBadData, []string{"text.parquet", "not a parquet file"}},
		{"missing policy", []string{"show", bad("absent.parquet")}, exitBadData, []string{"absent.parquet", "no such file"}},
		// Outputs and resources.
		// Missing output directories are created (TestOutputDirectories);
		// an output below a file is refused.
		{"solve output below a file", []string{"solve", "-o", bad("good.parquet") + "/p.parquet", bad("good.parquet")}, exitUsage, []string{"is not a directory"}},
		{"apply output below a file", []string{"apply", "--policy", polAB, "-o", bad("good.parquet") + "/a.parquet", bad("good.parquet")}, exitUsage, []string{"is not a directory"}},
		{"simulate output below a file", []string{"simulate", "-o", bad("good.parquet") + "/d.parquet"}, exitUsage, []string{"is not a directory"}},
		{"cluster output below a file", []string{"cluster", "--similarity", bad("similarity-good.csv"), "--threshold", "0.5", "-o", bad("good.parquet") + "/c.json"}, exitUsage, []string{"is not a directory"}},
		{"max memory too small", solve("good.parquet", "--max-memory", "1MiB"), exitBadData, []string{"good.parquet", "--max-memory", "grmdp prepare"}},
		{"statistics too large", solve("good-tabular.parquet", "--features", "tabular", "--num-states", "100000000"), exitBadData,
			[]string{"good-tabular.parquet", "d = 300000000", "--max-memory", "--num-states"}},
		{"max memory unparsable", solve("good.parquet", "--max-memory", "lots"), exitUsage, []string{"--max-memory"}},
		{"simulation too large", []string{"simulate", "--scenario", "trap", "--sites", "100000", "-o", "OUT"}, exitUsage,
			[]string{"100000 sites", "--max-memory"}},
		// Command lines that cannot mean what they say.
		{"flag value does not parse", solve("good.parquet", "--workers", "many"), exitUsage, []string{"-workers", "grmdp solve --help"}},
		{"unknown flag", solve("good.parquet", "--lamda", "2"), exitUsage, []string{"-lamda", "grmdp solve --help"}},
		{"state column twice", solve("good.parquet", "--state", "s1,s1"), exitUsage, []string{"--state", `"s1"`}},
		{"one column in two roles", solve("good.parquet", "--site-col", "step"), exitUsage, []string{"--site-col", "--step-col", `"step"`}},
		{"horizon above the largest step", solve("good.parquet", "--horizon", "100000"), exitUsage, []string{"--horizon"}},
		{"tiny xi makes beta infinite", solve("good.parquet", "--xi", "1e-320"), exitUsage, []string{"beta", "--xi"}},
		{"tiny lambda makes Lambda singular", solve("good.parquet", "--lambda", "1e-300"), exitUsage, []string{"not positive definite", "--lambda"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			args := make([]string, len(c.args))
			for i, a := range c.args {
				a = strings.ReplaceAll(a, "OUTDIR", filepath.Join(dir, "missing"))
				switch a {
				case "OUT":
					a = filepath.Join(dir, "out")
				case "DIR":
					a = dir
				}
				args[i] = a
			}
			code, stdout, stderr := runTimeout(t, time.Minute, args...)
			checkFailure(t, code, stderr, c.code, dir, c.want...)
			if c.code == exitUsage && stdout != "" {
				t.Errorf("a usage error printed to stdout:\n%s", stdout)
			}
		})
	}
}

// An output that names an input is refused before anything is read or
// written, whether the input is DATA (a file, a directory holding it, a
// glob matching it) or a flag's file; the input stays as it was.
func TestOutputIsInput(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data.parquet")
	b, err := os.ReadFile(bad("good.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(data, b, 0o644); err != nil {
		t.Fatal(err)
	}
	policy := filepath.Join(dir, "policy.parquet")
	mustRun(t, "solve", "-o", policy, data)
	before := stateOf(t, data)
	policyBefore := stateOf(t, policy)
	for _, args := range [][]string{
		{"solve", "-o", data, data},
		{"solve", "-o", data, dir},
		{"solve", "-o", data, filepath.Join(dir, "*.parquet")},
		{"inspect", "--config", data, data},
		{"apply", "--policy", policy, "-o", data, data},
		{"apply", "--policy", policy, "-o", policy, data},
		{"eval", "--policy", policy, "--model", policy, data},
	} {
		code, _, stderr := grmdp(t, args...)
		want := []string{"is also an input"}
		if args[0] == "inspect" || args[0] == "eval" {
			want = nil // not an output: refused as a bad config or model file
		}
		if code == exitOK {
			t.Errorf("%v succeeded", args)
			continue
		}
		checkFailure(t, code, stderr, code, "", want...)
	}
	checkUnchanged(t, data, before)
	checkUnchanged(t, policy, policyBefore)
}

// An unreadable input is bad input data that names the file. Root reads
// any file whatever its mode, so the case cannot be built then.
func TestUnreadableInput(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("running as root, which reads files whatever their mode: chmod 000 cannot make a file unreadable")
	}
	dir := t.TempDir()
	data, err := os.ReadFile(bad("good.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	locked := filepath.Join(dir, "locked.parquet")
	if err := os.WriteFile(locked, data, 0o000); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	code, _, stderr := grmdp(t, "solve", "-o", filepath.Join(out, "p.parquet"), locked)
	checkFailure(t, code, stderr, exitBadData, out, "locked.parquet", "permission denied")
}

// Every file of apache/parquet-testing given to grmdp solve ends in a clean
// error (none of them is a trajectory table): exit 3, one line naming the
// file, no output, no panic and no hang. Files whose columns can play the
// contract's roles are also read with those columns, so that the decoder
// meets their pages and encodings.
func TestParquetTestingCorpus(t *testing.T) {
	var files []string
	for _, sub := range []string{"data", "bad_data"} {
		m, _ := filepath.Glob(filepath.Join(parquetTestingDir, sub, "*.parquet"))
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Skipf("no parquet-testing corpus at %s", parquetTestingDir)
	}
	// Columns of the alltypes files that fit the contract's roles.
	alltypes := []string{"--site-col", "smallint_col", "--traj-col", "bigint_col", "--step-col", "id",
		"--action-col", "tinyint_col", "--reward-col", "float_col", "--features", "tabular", "--state", "int_col"}
	for _, path := range files {
		name := filepath.Base(filepath.Dir(path)) + "/" + filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			variants := [][]string{nil, {"--features", "precomputed"}}
			if strings.Contains(path, "alltypes") {
				variants = append(variants, alltypes)
			}
			for _, flags := range variants {
				dir := t.TempDir()
				args := append(append([]string{"solve"}, flags...), "-o", filepath.Join(dir, "p.parquet"), path)
				code, _, stderr := runTimeout(t, time.Minute, args...)
				checkFailure(t, code, stderr, exitBadData, dir, path)
			}
		})
	}
}

// The committed corpus is what scripts/mkcorpus.go writes: regenerate it
// with `go run scripts/mkcorpus.go` after changing the program.
func TestCorpusUpToDate(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles and runs scripts/mkcorpus.go")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go command: %v", err)
	}
	dir := t.TempDir()
	cmd := exec.Command(goBin, "run", "scripts/mkcorpus.go", "-o", dir)
	cmd.Dir = "../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go run scripts/mkcorpus.go: %v\n%s", err, out)
	}
	var stale []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		want, _ := os.ReadFile(p)
		got, err := os.ReadFile(filepath.Join(badDir, rel))
		if err != nil || !bytes.Equal(got, want) {
			stale = append(stale, rel)
		}
		return nil
	})
	if len(stale) > 0 {
		t.Errorf("testdata/bad is stale or incomplete (%v): run go run scripts/mkcorpus.go", stale)
	}
}
