package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/urfave/cli/v3"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/grmdp/grmdp/federate"
	"github.com/grmdp/grmdp/internal/textfmt"
)

// writeIntActions writes one site's 50 episodes of 5 steps with integer
// actions 0..2 and one state column s1 (17 distinct values); the action of
// row strayRow is stray instead (strayRow < 0: none).
func writeIntActions(t *testing.T, path string, strayRow int, stray int64) {
	t.Helper()
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "site", Type: arrow.PrimitiveTypes.Int64},
		{Name: "traj", Type: arrow.PrimitiveTypes.Int64},
		{Name: "step", Type: arrow.PrimitiveTypes.Int64},
		{Name: "action", Type: arrow.PrimitiveTypes.Int64},
		{Name: "reward", Type: arrow.PrimitiveTypes.Float64},
		{Name: "s1", Type: arrow.PrimitiveTypes.Float64},
	}, nil)
	rb := array.NewRecordBuilder(memory.NewGoAllocator(), sc)
	defer rb.Release()
	n := 0
	for tr := 0; tr < 50; tr++ {
		for h := 1; h <= 5; h++ {
			a := int64((tr + h) % 3)
			r := float64(a) * 0.1
			if n == strayRow {
				a = stray
			}
			rb.Field(0).(*array.Int64Builder).Append(1)
			rb.Field(1).(*array.Int64Builder).Append(int64(tr))
			rb.Field(2).(*array.Int64Builder).Append(int64(h))
			rb.Field(3).(*array.Int64Builder).Append(a)
			rb.Field(4).(*array.Float64Builder).Append(r)
			rb.Field(5).(*array.Float64Builder).Append(float64(tr%7) + 0.5*float64(h))
			n++
		}
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fw, err := pqarrow.NewFileWriter(sc, f, parquet.NewWriterProperties(), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestStrayAction pins that one stray action code among 0..2 is refused at
// once, naming file, column and row, instead of sizing every per-action
// table by it; and that --actions above the limit is a usage error.
func TestStrayAction(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "stray.parquet")
	writeIntActions(t, data, 37, 8_388_614)
	for _, cmd := range [][]string{{"inspect"}, {"solve", "-o", filepath.Join(dir, "p.parquet")}, {"solve", "--out-of-core", "-o", filepath.Join(dir, "p.parquet")}} {
		start := time.Now()
		code, _, errOut := grmdp(t, append(cmd, "--state", "s1", data)...)
		if code != exitBadData {
			t.Fatalf("%v: exit %d, want %d\n%s", cmd, code, exitBadData, errOut)
		}
		for _, want := range []string{"stray.parquet", "row 37", `column "action"`, "8388614", "recode the column"} {
			if !strings.Contains(errOut, want) {
				t.Errorf("%v: the message lacks %q:\n%s", cmd, want, errOut)
			}
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Errorf("%v took %v", cmd, d)
		}
	}
	ok := filepath.Join(dir, "ok.parquet")
	writeIntActions(t, ok, -1, 0)
	if code, _, errOut := grmdp(t, "inspect", "--actions", "100000", ok); code != exitUsage || !strings.Contains(errOut, "--actions 100000") {
		t.Errorf("--actions 100000: exit %d, want %d:\n%s", code, exitUsage, errOut)
	}
}

// TestQuantileLimit pins that more quantile bins than a column has
// distinct values are refused with the most it can have, at once.
func TestQuantileLimit(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "d.parquet")
	writeIntActions(t, data, -1, 0)
	start := time.Now()
	code, _, errOut := grmdp(t, "inspect", "--features", "binned", "--bins", "s1:q1000000000", data)
	if code != exitBadData {
		t.Fatalf("exit %d, want %d\n%s", code, exitBadData, errOut)
	}
	for _, want := range []string{"d.parquet", "s1 has 17 distinct values", "s1:q17"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("the message lacks %q:\n%s", want, errOut)
		}
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %v", d)
	}
	mustRun(t, "inspect", "--features", "binned", "--bins", "s1:q17", data)
}

// special makes a fresh file of kind ("fifo", "device" or "dir") in dir
// and returns its path and mode type; ok is false when the system refuses
// (mknod needs root).
func special(t *testing.T, dir, kind string) (path string, mode os.FileMode, ok bool) {
	t.Helper()
	f, err := os.CreateTemp(dir, kind+"-*")
	if err != nil {
		t.Fatal(err)
	}
	path = f.Name()
	f.Close()
	os.Remove(path)
	switch kind {
	case "fifo":
		err = syscall.Mkfifo(path, 0o644)
	case "device":
		err = syscall.Mknod(path, syscall.S_IFCHR|0o644, 1<<8|3) // as /dev/null
	case "dir":
		err = os.Mkdir(path, 0o755)
	}
	if err != nil {
		return "", 0, false
	}
	fi, err := os.Lstat(path)
	if err != nil {
		t.Fatal(err)
	}
	return path, fi.Mode().Type(), true
}

// TestOutputsNeverDestroy walks every command of the app and every output
// flag it has: an output that is a FIFO or a device (or, for a file, a
// directory; for a directory, a regular file) is refused with exit 2 before
// any work, naming the path, and is left as it was. vantage6's OUTPUT_FILE
// too.
func TestOutputsNeverDestroy(t *testing.T) {
	dir := t.TempDir()
	var tested []string
	var walk func(prefix []string, cmds []*cli.Command)
	walk = func(prefix []string, cmds []*cli.Command) {
		for _, cmd := range cmds {
			path := append(slices.Clone(prefix), cmd.Name)
			if len(cmd.Commands) > 0 {
				walk(path, cmd.Commands)
				continue
			}
			for _, f := range cmd.Flags {
				flag := f.Names()[0]
				if !slices.Contains(outputFlags, flag) {
					continue
				}
				tested = append(tested, strings.Join(path, " ")+" --"+flag)
				wrong := "dir"
				if placeholderDir(f) {
					wrong = "file"
				}
				for _, kind := range []string{"fifo", "device", wrong} {
					var out string
					var mode os.FileMode
					if kind == "file" {
						out = filepath.Join(dir, "regular")
						os.WriteFile(out, []byte("kept"), 0o644)
					} else {
						var ok bool
						if out, mode, ok = special(t, dir, kind); !ok {
							t.Logf("skipping %s outputs: cannot make one", kind)
							continue
						}
					}
					args := append(slices.Clone(path), "--"+flag, out)
					// The command's other required flags, so that the output
					// is what it refuses.
					for _, o := range []struct{ flag, v string }{{"output", filepath.Join(dir, "new-out")}, {"policy", filepath.Join(dir, "p.parquet")},
						{"job", filepath.Join(dir, "job")}, {"site", "1"}, {"sites", "1,2,3"}, {"similarity", filepath.Join(dir, "s.csv")}, {"scenario", "benchmark"}} {
						if o.flag != flag && hasFlag(cmd, o.flag) {
							v := o.v
							switch {
							case strings.Join(path, " ") == "federate run" && o.flag == "site":
								v = "1=" + dir
							case strings.Join(path, " ") == "simulate" && o.flag == "sites":
								v = "3"
							}
							args = append(args, "--"+o.flag, v)
						}
					}
					code, _, errOut := grmdp(t, args...)
					if code != exitUsage || !strings.Contains(errOut, out) {
						t.Errorf("%s: exit %d, want %d naming %s:\n%s", strings.Join(args, " "), code, exitUsage, out, errOut)
					}
					fi, err := os.Lstat(out)
					switch {
					case err != nil:
						t.Errorf("%s: %v", strings.Join(args, " "), err)
					case kind == "file":
						if b, _ := os.ReadFile(out); string(b) != "kept" {
							t.Errorf("%s: the file was changed", strings.Join(args, " "))
						}
					case fi.Mode().Type() != mode:
						t.Errorf("%s: %s is now %v", strings.Join(args, " "), out, fi.Mode())
					}
				}
			}
		}
	}
	walk(nil, newApp(io.Discard, io.Discard).Commands)
	for _, want := range []string{"simulate --output", "simulate --model-out", "solve --output", "apply --output", "cluster --output",
		"compare --output", "eval --report", "experiment --output", "prepare --output", "federate init --output", "federate site --output", "federate run --messages"} {
		found := false
		for _, got := range tested {
			found = found || strings.HasPrefix(got, strings.SplitN(want, " --", 2)[0]) && strings.HasSuffix(got, strings.SplitN(want, " --", 2)[1])
		}
		if !found {
			t.Errorf("the walk did not test %s (tested %v)", want, tested)
		}
	}

	// The app's own output flags, the profiles.
	for _, flag := range []string{"--cpuprofile", "--memprofile"} {
		out, mode, ok := special(t, dir, "fifo")
		if !ok {
			t.Fatal("cannot make a FIFO")
		}
		code, _, errOut := grmdp(t, flag, out, "version")
		if code != exitUsage || !strings.Contains(errOut, out) {
			t.Errorf("%s FIFO: exit %d:\n%s", flag, code, errOut)
		}
		if fi, err := os.Lstat(out); err != nil || fi.Mode().Type() != mode {
			t.Errorf("%s FIFO: now %v, %v", flag, fi, err)
		}
	}

	// vantage6's OUTPUT_FILE.
	in := filepath.Join(dir, "input.json")
	os.WriteFile(in, []byte(`{}`), 0o644)
	t.Setenv("INPUT_FILE", in)
	for _, kind := range []string{"fifo", "device", "dir"} {
		out, mode, ok := special(t, dir, kind)
		if !ok {
			continue
		}
		t.Setenv("OUTPUT_FILE", out)
		code, _, errOut := grmdp(t, "vantage6")
		if code != exitUsage || !strings.Contains(errOut, out) || !strings.Contains(errOut, "OUTPUT_FILE") {
			t.Errorf("vantage6, OUTPUT_FILE a %s: exit %d:\n%s", kind, code, errOut)
		}
		if fi, err := os.Lstat(out); err != nil || fi.Mode().Type() != mode {
			t.Errorf("vantage6, OUTPUT_FILE a %s: now %v, %v", kind, fi, err)
		}
	}
	t.Setenv("OUTPUT_FILE", in)
	if code, _, errOut := grmdp(t, "vantage6"); code != exitUsage || !strings.Contains(errOut, "also an input (INPUT_FILE") {
		t.Errorf("vantage6, OUTPUT_FILE = INPUT_FILE: exit %d:\n%s", code, errOut)
	}
}

// TestJobFilesAreInputs: a site's message written over one of the job's
// own files is refused (exit 2), and the job is unchanged.
func TestJobFilesAreInputs(t *testing.T) {
	dir := t.TempDir()
	names, dirs := fedSetup(t, dir)
	job := filepath.Join(dir, "job")
	mustRun(t, append([]string{"federate", "init", "--sites", strings.Join(names, ","), "-o", job}, settingsArgs("pooled", 5, 10)...)...)
	before := map[string][]byte{}
	for _, f := range []string{federate.JobFile, federate.StateFile} {
		before[f], _ = os.ReadFile(filepath.Join(job, f))
	}
	for _, f := range []string{federate.JobFile, federate.StateFile} {
		out := filepath.Join(job, f)
		code, _, errOut := grmdp(t, "federate", "site", "--job", job, "--site", names[0], "-o", out, dirs[0])
		if code != exitUsage || !strings.Contains(errOut, "is also an input (--job "+out) {
			t.Errorf("-o %s: exit %d:\n%s", out, code, errOut)
		}
	}
	for f, b := range before {
		if now, _ := os.ReadFile(filepath.Join(job, f)); !bytes.Equal(now, b) {
			t.Errorf("%s changed", f)
		}
	}
	mustRun(t, "federate", "site", "--job", job, "--site", names[0], "-o", filepath.Join(job, "site-1.parquet"), dirs[0])
}

// fullWriter fails every write, as /dev/full does.
type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) { return 0, syscall.ENOSPC }

// TestStdoutErrorFails: a command whose standard output cannot be written
// (solve > /dev/full) fails, exit 1, naming standard output.
func TestStdoutErrorFails(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "d.parquet")
	writeIntActions(t, data, -1, 0)
	for _, args := range [][]string{{"solve", "--state", "s1", "-o", filepath.Join(dir, "p.parquet"), data}, {"version"}, {"inspect", "--state", "s1", data}} {
		var stderr bytes.Buffer
		code := run(context.Background(), append([]string{"grmdp"}, args...), fullWriter{}, &stderr)
		if code != exitInternal || !strings.Contains(stderr.String(), "standard output") || !strings.Contains(stderr.String(), "no space left") {
			t.Errorf("%v > /dev/full: exit %d:\n%s", args, code, stderr.String())
		}
	}
}

// TestConfigListItemsWhole: a YAML list item holding a comma stays one
// item (sites: ["Boston, MA", Paris, Rome] is three sites), and the
// command line can say the same with CSV quoting.
func TestConfigListItemsWhole(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "c.yaml")
	writeFile(t, cfg, "sites: [\"Boston, MA\", Paris, Rome]\nfeatures: tabular\nhorizon: 4\nactions: 2\nnum-states: 3\n")
	want := []string{"Boston, MA", "Paris", "Rome"}
	for i, args := range [][]string{{"--config", cfg}, {"--sites", `"Boston, MA",Paris,Rome`, "--features", "tabular", "--horizon", "4", "--actions", "2", "--num-states", "3"}} {
		job := filepath.Join(dir, fmt.Sprintf("job%d", i))
		mustRun(t, append([]string{"federate", "init", "-o", job}, args...)...)
		j, _, err := federate.Load(job)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(j.Sites, want) {
			t.Errorf("%v: sites %q, want %q", args, j.Sites, want)
		}
	}
}

// TestControlCharactersEscaped: a site name or action label holding
// control characters (an escape sequence, a carriage return) is printed
// quoted by inspect, solve and show, never raw.
func TestControlCharactersEscaped(t *testing.T) {
	dir := t.TempDir()
	f := func(v float64) *float64 { return &v }
	evil := "evil\x1b[2J\rsite"
	labels := []string{"fluids", "press\x07ors"}
	var rows []prepRow
	for k, site := range []string{evil, "mercy", "st-luke"} {
		for p := range 12 {
			for s := range 3 {
				a := labels[(p+s+k)%2]
				rows = append(rows, prepRow{site: site, traj: fmt.Sprintf("p%02d", p), step: s + 1, action: &a,
					reward: f(float64((p+s)%10) / 10), s1: f(1 + float64((p*13+s*5+k*3)%20)/4)})
			}
		}
	}
	data := filepath.Join(dir, "d.parquet")
	writePrepRows(t, data, rows)
	pol := filepath.Join(dir, "p.parquet")
	for _, args := range [][]string{{"inspect", "--state", "s1", data}, {"solve", "--state", "s1", "-o", pol, data}, {"show", pol}} {
		out := mustRun(t, args...)
		if strings.ContainsAny(out, "\x1b\r\x07") {
			t.Errorf("%s printed a control character raw:\n%q", args[0], out)
		}
		if args[0] == "inspect" && !strings.Contains(out, `"evil\x1b[2J\rsite"`) {
			t.Errorf("%s does not print the site quoted:\n%s", args[0], out)
		}
	}
	for in, want := range map[string]string{"Boston, MA": "Boston, MA", "Zürich": "Zürich", "a\nb": `"a\nb"`, "\xff": `"\xff"`} {
		if got := textfmt.Quote(in); got != want {
			t.Errorf("textfmt.Quote(%q) = %s, want %s", in, got, want)
		}
	}
}

// TestOneExitCodePerCause: a job's sites listed twice and --min-sites 0
// are usage errors (exit 2), and no job is made.
func TestOneExitCodePerCause(t *testing.T) {
	dir := t.TempDir()
	shape := []string{"--features", "tabular", "--horizon", "4", "--actions", "2", "--num-states", "3"}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--sites", "a,b,a,c"}, "--sites lists site a twice"},
		{[]string{"--sites", "a,b,c", "--min-sites", "0"}, "--min-sites must be at least 1"},
	} {
		job := filepath.Join(dir, "job")
		code, _, errOut := grmdp(t, append(append([]string{"federate", "init", "-o", job}, c.args...), shape...)...)
		if code != exitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, want %d with %q:\n%s", c.args, code, exitUsage, c.want, errOut)
		}
		if _, err := os.Stat(job); err == nil {
			t.Errorf("%v: a job was made", c.args)
		}
	}
}

// TestStepAfterKill: the files a killed step leaves are handled by the
// next step. Its stale temporary files are removed; a job whose final
// state was saved but whose policy was not written (the last step stopped
// between the two; the state is saved first) gets the very policy from
// `federate step --job JOB`, without messages.
func TestStepAfterKill(t *testing.T) {
	dir := t.TempDir()
	names, dirs := fedSetup(t, dir)
	job := filepath.Join(dir, "job")
	mustRun(t, append([]string{"federate", "init", "--sites", strings.Join(names, ","), "-o", job}, settingsArgs("sitewise", 5, 10)...)...)
	for round := 0; ; round++ {
		j, s, err := federate.Load(job)
		if err != nil {
			t.Fatal(err)
		}
		if s.Done(j) {
			break
		}
		stale := filepath.Join(job, ".state.json.tmp-123456")
		writeFile(t, stale, "{")
		var msgs []string
		for i, name := range names {
			m := filepath.Join(dir, fmt.Sprintf("m-%d-%d.parquet", round, i))
			mustRun(t, "federate", "site", "--job", job, "--site", name, "-o", m, dirs[i])
			msgs = append(msgs, m)
		}
		mustRun(t, append([]string{"federate", "step", "--job", job}, msgs...)...)
		if _, err := os.Stat(stale); err == nil {
			t.Fatalf("round %d: the stale temporary file survived the step", round)
		}
	}
	pol := filepath.Join(job, federate.PolicyFile)
	want, err := os.ReadFile(pol)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(pol)
	os.Remove(filepath.Join(job, federate.SolveFile))
	out := mustRun(t, "federate", "step", "--job", job)
	if !strings.Contains(out, "writing it from the job's state") {
		t.Errorf("the step does not say what it did:\n%s", out)
	}
	got, err := os.ReadFile(pol)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("the policy written from the state differs (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(job, federate.SolveFile)); err != nil {
		t.Fatal(err)
	}
}

// TestSpecificMessages: --first-step 0 on data numbered from 1 says what
// to set, and vantage6 names TEMPORARY_FOLDER when it cannot use it.
func TestSpecificMessages(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "d.parquet")
	writeIntActions(t, data, -1, 0)
	code, _, errOut := grmdp(t, "inspect", "--state", "s1", "--first-step", "0", data)
	if code != exitBadData || !strings.Contains(errOut, "starts at step 1") || !strings.Contains(errOut, "set --first-step 1") {
		t.Errorf("--first-step 0 on steps from 1: exit %d:\n%s", code, errOut)
	}
	in := filepath.Join(dir, "input.json")
	writeFile(t, in, `{"method": "site", "job": {}, "state": {}, "site": "a"}`)
	t.Setenv("INPUT_FILE", in)
	t.Setenv("OUTPUT_FILE", filepath.Join(dir, "out.parquet"))
	t.Setenv("DATABASE_URI", data)
	t.Setenv("TEMPORARY_FOLDER", filepath.Join(dir, "missing"))
	code, _, errOut = grmdp(t, "vantage6")
	if code != exitUsage || !strings.Contains(errOut, "TEMPORARY_FOLDER "+filepath.Join(dir, "missing")) {
		t.Errorf("a missing TEMPORARY_FOLDER: exit %d:\n%s", code, errOut)
	}
}
