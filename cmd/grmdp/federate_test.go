//go:build unix

package main

// Tests of the federated commands: federate run over the sites' own
// folders equals solve --min-count K on all the rows, bit for bit; every
// message of a run with --min-count 5 holds no count below 5 and no sum
// from fewer than 5 rows of a feature; bad messages are refused with exit
// code 3 and leave the job unchanged.

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/grmdp/grmdp/traj"

	"github.com/grmdp/grmdp/federate"
	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/solve"
)

var (
	fedBinOnce sync.Once
	fedBin     string
	fedBinDir  string
)

// federateBinary builds grmdp once for the tests that run it as separate
// processes (federate run starts its parts with os.Executable).
func federateBinary(t *testing.T) string {
	t.Helper()
	fedBinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "grmdp-federate-bin")
		if err != nil {
			t.Fatal(err)
		}
		fedBinDir = dir
		fedBin = buildGrmdp(t, dir)
	})
	if fedBin == "" {
		t.Fatal("no grmdp binary")
	}
	return fedBin
}

// runBin runs the binary and returns its exit code, stdout and stderr.
func runBin(t *testing.T, bin string, args ...string) (int, string, string) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), out.String(), errOut.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, out.String(), errOut.String()
}

func mustBin(t *testing.T, bin string, args ...string) string {
	t.Helper()
	code, out, errOut := runBin(t, bin, args...)
	if code != 0 {
		t.Fatalf("grmdp %s: exit %d\n%s%s", strings.Join(args, " "), code, out, errOut)
	}
	return out
}

var benchCols = []string{"s1", "s2", "s3"}

// fedSetup simulates a small benchmark data set into DIR/all.parquet and
// one folder per site, DIR/sites/hospital-<site>.
func fedSetup(t *testing.T, dir string) (names, dirs []string) {
	t.Helper()
	_, names, dirs = simulateSplit(t, dir, "--scenario", "benchmark", "--seed", "5", "--trajectories", "150,90,40")
	return names, dirs
}

func settingsArgs(method string, k, rows int) []string {
	return []string{"--features", "action-block", "--state", strings.Join(benchCols, ","), "--horizon", "7", "--actions", "10",
		"--method", method, "--min-count", strconv.Itoa(k), "--min-rows", strconv.Itoa(rows)}
}

func readPolicyT(t *testing.T, path string) *solve.Policy {
	t.Helper()
	p, err := readPolicy(path)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestFederateRunEqualsSolve: federate run over the three hospitals'
// folders, each part a separate process, gives the policy of solve
// --min-count K on all rows: the same runs, beta, w, m, Lambda^{-1},
// behaviour table and decisions at every row, bit for bit, for K = 0 and
// K = 5 (with --min-rows 10) and every method.
func TestFederateRunEqualsSolve(t *testing.T) {
	if testing.Short() {
		t.Skip("builds grmdp and starts a process per part")
	}
	bin := federateBinary(t)
	dir := t.TempDir()
	names, dirs := fedSetup(t, dir)
	clusters := filepath.Join(dir, "clusters.csv")
	if err := os.WriteFile(clusters, []byte("site,cluster\n"+names[0]+",a\n"+names[2]+",a\n"+names[1]+",b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tb, err := parquetio.Read(context.Background(), dirs, traj.Options{State: traj.StateSpec{Columns: benchCols, NonzeroSum: true}, Horizon: 7, Actions: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, dc := range [][2]int{{0, 0}, {5, 10}} {
		for _, method := range solve.Methods {
			name := fmt.Sprintf("%s-K%d", method, dc[0])
			job := filepath.Join(dir, "job-"+name)
			args := settingsArgs(string(method), dc[0], dc[1])
			central := filepath.Join(dir, "central-"+name+".parquet")
			sargs := append([]string{"solve", "-o", central}, settingsArgs(string(method), dc[0], dc[1])...)
			if method == solve.Cluster {
				args = append(args, "--clusters", clusters)
				sargs = append(sargs, "--clusters", clusters)
			}
			fedInit(t, bin, job, names, args...)
			fedRun(t, bin, job, names, dirs, "--workers", "1")
			centralJSON := mustRun(t, append(append(sargs, "--json"), dirs...)...)
			want, got := readPolicyT(t, central), readPolicyT(t, filepath.Join(job, federate.PolicyFile))
			sameSolveJSON(t, name, centralJSON, filepath.Join(job, federate.SolveFile))
			if method != solve.Behaviour && !slices.ContainsFunc(want.Runs[0].Steps[6].W, func(x float64) bool { return x != 0 }) {
				t.Fatalf("%s: w_H is zero: the case tests nothing", name)
			}
			samePolicies(t, name, want, got)
			sameDecisions(t, name, tb, want, got)
		}
	}
}

// samePolicies fails unless the policies agree bit for bit on all that
// decides.
func samePolicies(t *testing.T, what string, want, got *solve.Policy) {
	t.Helper()
	bits := func(x []float64) []uint64 {
		out := make([]uint64, len(x))
		for i, v := range x {
			out[i] = math.Float64bits(v)
		}
		return out
	}
	if want.Method != got.Method || want.Fallback != got.Fallback || len(want.Runs) != len(got.Runs) || math.Float64bits(want.Beta) != math.Float64bits(got.Beta) {
		t.Fatalf("%s: method %s fallback %s, %d runs, beta %v; want %s %s %d %v", what, got.Method, got.Fallback, len(got.Runs), got.Beta,
			want.Method, want.Fallback, len(want.Runs), want.Beta)
	}
	for r := range want.Runs {
		if math.Float64bits(want.Runs[r].Beta) != math.Float64bits(got.Runs[r].Beta) {
			t.Fatalf("%s: run %d beta %v, want %v", what, r, got.Runs[r].Beta, want.Runs[r].Beta)
		}
		for h := range want.Runs[r].Steps {
			a, b := &want.Runs[r].Steps[h], &got.Runs[r].Steps[h]
			if !slices.Equal(bits(a.W), bits(b.W)) || !slices.Equal(bits(a.M), bits(b.M)) || !slices.Equal(bits(a.Linv), bits(b.Linv)) {
				t.Fatalf("%s: run %d step %d: w, m or Lambda^-1 differ:\nw   %v\nwant %v", what, r, h+1, b.W, a.W)
			}
		}
	}
	for h := range want.BehaviourAction {
		if !slices.Equal(want.BehaviourAction[h], got.BehaviourAction[h]) {
			t.Fatalf("%s: behaviour table at step %d: %v, want %v", what, h+1, got.BehaviourAction[h], want.BehaviourAction[h])
		}
	}
}

// sameDecisions compares the policies' decisions and Qhat at every row.
func sameDecisions(t *testing.T, what string, tb *traj.Table, want, got *solve.Policy) {
	t.Helper()
	q1, q2 := make([]float64, tb.A), make([]float64, tb.A)
	for h := 1; h <= tb.H; h++ {
		s := &tb.Steps[h-1]
		for j := 0; j < s.Len(); j++ {
			st := s.State[j*tb.W : (j+1)*tb.W]
			a1, v1, e1 := want.Act(h, st, q1)
			a2, v2, e2 := got.Act(h, st, q2)
			if a1 != a2 || math.Float64bits(v1) != math.Float64bits(v2) || e1 != e2 {
				t.Fatalf("%s: step %d row %d: decision %d (%v, %v), want %d (%v, %v)", what, h, j, a2, v2, e2, a1, v1, e1)
			}
		}
	}
}

// TestFederateMessagesDisclose: with --min-count 5 (--min-rows 10), no
// message of a run holds a count below 5, and every sum a message holds
// (Gram entry, right-hand side, behaviour count) involves only features
// counted at 5 or more rows; a message of a step with fewer than 10 rows
// holds nothing.
func TestFederateMessagesDisclose(t *testing.T) {
	if testing.Short() {
		t.Skip("builds grmdp and starts a process per part")
	}
	bin := federateBinary(t)
	dir := t.TempDir()
	names, dirs := fedSetup(t, dir)
	job := filepath.Join(dir, "job")
	fedInit(t, bin, job, names, settingsArgs("sitewise", 5, 10)...)
	fedRun(t, bin, job, names, dirs, "--eval", filepath.Join(job, federate.PolicyFile))
	checkEvalMessages(t, filepath.Join(job, "messages"), 7, len(names), 5, 10)
	files, _ := filepath.Glob(filepath.Join(job, "messages", "round-*", "*.parquet"))
	if len(files) != (7+1)*len(names) {
		t.Fatalf("%d messages, want %d (7 steps and the value round)", len(files), (7+1)*len(names))
	}
	suppressed := 0
	for _, f := range files {
		inc, err := readMessage(f)
		if err != nil {
			t.Fatal(err)
		}
		m := inc.Msg
		if m.Kind == federate.KindValue {
			checkValueMessage(t, f, m, 5, 10)
			continue
		}
		suppressed += m.Suppressed
		l := solve.NewLayout(m.Map.Blocks())
		for i, c := range m.Counts {
			if c != 0 && c < 5 {
				t.Fatalf("%s: feature %d has count %v < 5", f, i, c)
			}
			if c != 0 {
				continue
			}
			// Feature i is withheld (or unseen): no sum may involve it.
			b, pos := l.Blocks.Of[i], int(l.Blocks.Pos[i])
			off := l.Off[b]
			for r := 0; r < l.Blocks.Size(int(b)); r++ {
				x, y := max(r, pos), min(r, pos)
				if v := m.Gram[off+x*(x+1)/2+y]; v != 0 {
					t.Fatalf("%s: Gram entry (%d, %d) of withheld feature %d is %v", f, r, pos, i, v)
				}
			}
			for _, rhs := range m.RHS {
				if rhs[i] != 0 {
					t.Fatalf("%s: right-hand side of withheld feature %d is %v", f, i, rhs[i])
				}
			}
		}
		for i, c := range m.Behaviour {
			if c != 0 && c < 5 {
				t.Fatalf("%s: behaviour count %d is %v < 5", f, i, c)
			}
		}
		if m.Silent && (m.StepRows != 0 || slices.ContainsFunc(m.Gram, func(x float64) bool { return x != 0 })) {
			t.Fatalf("%s: a silent message holds sums", f)
		}
		if !m.Silent && m.StepRows < 10 {
			t.Fatalf("%s: %v rows < 10 sent", f, m.StepRows)
		}
	}
	if suppressed == 0 {
		t.Fatal("no feature was withheld: the data do not test disclosure control")
	}
	// The steward's view says "none sent", never a number below 5.
	out := mustBin(t, bin, "federate", "show", files[len(files)-1-len(names)])
	if !strings.Contains(out, "none sent") || !strings.Contains(out, "no row of data") {
		t.Fatalf("federate show:\n%s", out)
	}
}

// TestFederateRefusals: a message for another job, for another round, from
// a site twice, a missing site, a truncated or corrupted file: each
// refused with exit code 3 and a one-line message, the job unchanged (its
// state bytes, and no policy).
func TestFederateRefusals(t *testing.T) {
	if testing.Short() {
		t.Skip("builds grmdp and starts a process per part")
	}
	bin := federateBinary(t)
	dir := t.TempDir()
	names, dirs := fedSetup(t, dir)
	job, other := filepath.Join(dir, "job"), filepath.Join(dir, "other")
	for _, j := range []string{job, other} {
		fedInit(t, bin, j, names, settingsArgs("pooled", 5, 10)...)
	}
	site := func(j string, k int, out string) string {
		mustBin(t, bin, "federate", "site", "--job", j, "--site", names[k], "-o", out, dirs[k])
		return out
	}
	round0 := make([]string, len(names))
	for k := range names {
		round0[k] = site(job, k, filepath.Join(dir, fmt.Sprintf("r0-%d.parquet", k)))
	}
	foreign := site(other, 0, filepath.Join(dir, "other-0.parquet"))
	b, err := os.ReadFile(round0[1])
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated.parquet")
	os.WriteFile(truncated, b[:len(b)/2], 0o644)
	corrupted := filepath.Join(dir, "corrupted.parquet")
	c := slices.Clone(b)
	// A byte inside the values' data page: the file still parses as
	// Parquet or not, but never with the same sums.
	c[len(c)/3] ^= 0x5a
	os.WriteFile(corrupted, c, 0o644)

	check := func(what string, wantIn string, msgs ...string) {
		t.Helper()
		before, err := os.ReadFile(filepath.Join(job, federate.StateFile))
		if err != nil {
			t.Fatal(err)
		}
		code, _, errOut := runBin(t, bin, append([]string{"federate", "step", "--job", job}, msgs...)...)
		if code != exitBadData {
			t.Fatalf("%s: exit %d, want 3\n%s", what, code, errOut)
		}
		if strings.Count(strings.TrimSpace(errOut), "\n") != 0 || !strings.Contains(errOut, wantIn) {
			t.Fatalf("%s: want one line containing %q, got %q", what, wantIn, errOut)
		}
		after, _ := os.ReadFile(filepath.Join(job, federate.StateFile))
		if !bytes.Equal(before, after) {
			t.Fatalf("%s: the job's state changed", what)
		}
		if _, err := os.Stat(filepath.Join(job, federate.PolicyFile)); err == nil {
			t.Fatalf("%s: a policy was written", what)
		}
	}
	check("another job", "for job", foreign, round0[1], round0[2])
	check("site twice", "sent twice", round0[0], round0[0], round0[1], round0[2])
	check("missing site", "no message from site", round0[0], round0[1])
	check("truncated", truncated, round0[0], truncated, round0[2])
	check("corrupted", "corrupted", round0[0], corrupted, round0[2])
	// The good round folds; sending it again is a message for a past round.
	mustBin(t, bin, append([]string{"federate", "step", "--job", job}, round0...)...)
	check("old round", "for round 0", round0...)
	// A site message for a site the job does not list is refused at the
	// site, before anything is written.
	code, _, errOut := runBin(t, bin, "federate", "site", "--job", job, "--site", "99", "-o", filepath.Join(dir, "x.parquet"), dirs[0])
	if code != exitBadData || !strings.Contains(errOut, "not one of job") {
		t.Fatalf("unknown site: exit %d: %s", code, errOut)
	}
	// A site may not lower the job's thresholds.
	code, _, errOut = runBin(t, bin, "federate", "site", "--job", job, "--site", names[0], "--min-count", "2", "-o", filepath.Join(dir, "x.parquet"), dirs[0])
	if code != exitUsage || !strings.Contains(errOut, "below the job's") {
		t.Fatalf("lower threshold: exit %d: %s", code, errOut)
	}
}

// TestVantage6EqualsFederateSite: under a node's environment (INPUT_FILE,
// OUTPUT_FILE, TOKEN_FILE, TEMPORARY_FOLDER, a per-label database URI),
// grmdp vantage6 writes the very message federate site writes, byte for
// byte; the node's thresholds win over a looser input, and a missing
// database variable is refused.
func TestVantage6EqualsFederateSite(t *testing.T) {
	dir := t.TempDir()
	names, dirs := fedSetup(t, dir)
	job := filepath.Join(dir, "job")
	mustRun(t, append([]string{"federate", "init", "--sites", strings.Join(names, ","), "-o", job}, settingsArgs("pooled", 5, 10)...)...)
	want := filepath.Join(dir, "site.parquet")
	mustRun(t, "federate", "site", "--job", job, "--site", names[1], "-o", want, dirs[1])

	jb, _ := os.ReadFile(filepath.Join(job, federate.JobFile))
	sb, _ := os.ReadFile(filepath.Join(job, federate.StateFile))
	input := fmt.Sprintf(`{"method": "site", "job": %s, "state": %s, "site": %q, "database": "trajectories", "min_count": 2}`, jb, sb, names[1])
	in, out := vantage6Node(t, dir, "TRAJECTORIES_DATABASE_URI", dirs[1])
	os.WriteFile(in, []byte(input), 0o644)
	os.WriteFile(filepath.Join(dir, "node", "token"), []byte("a.jwt.token"), 0o644)
	mustRun(t, "vantage6")
	a, _ := os.ReadFile(want)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		ia, _ := readMessage(want)
		ib, _ := readMessage(out)
		t.Fatalf("vantage6's message differs from federate site's:\n%+v\n%+v", ia.Msg, ib.Msg)
	}
	// The node's own thresholds: stricter than the job's, they apply.
	t.Setenv("GRMDP_MIN_COUNT", "40")
	mustRun(t, "vantage6")
	inc, err := readMessage(out)
	if err != nil {
		t.Fatal(err)
	}
	if inc.Msg.Disclosure.MinCount != 40 {
		t.Fatalf("node threshold 40 not applied: %+v", inc.Msg.Disclosure)
	}
	for _, c := range inc.Msg.Counts {
		if c != 0 && c < 40 {
			t.Fatalf("count %v below the node's 40", c)
		}
	}
	t.Setenv("TRAJECTORIES_DATABASE_URI", "")
	if code, _, errOut := grmdp(t, "vantage6"); code != exitUsage || !strings.Contains(errOut, "TRAJECTORIES_DATABASE_URI") {
		t.Fatalf("without a database: exit %d: %s", code, errOut)
	}
}

// TestSolveMinCountNeedsMemory: disclosure control is applied to
// statistics held in memory; out of core it is refused (exit 2), not
// silently ignored.
func TestSolveMinCountNeedsMemory(t *testing.T) {
	dir := t.TempDir()
	data, _ := simulated(t, dir, "benchmark", "--trajectories", "30,20,40")
	code, _, errOut := grmdp(t, "solve", "--min-count", "5", "--out-of-core", "-o", filepath.Join(dir, "p.parquet"), data)
	if code != exitUsage || !strings.Contains(errOut, "--min-count") {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	code, _, errOut = grmdp(t, "solve", "--min-count", "-1", "-o", filepath.Join(dir, "p.parquet"), data)
	if code != exitUsage || !strings.Contains(errOut, "--min-count must not be negative") {
		t.Fatalf("negative: exit %d: %s", code, errOut)
	}
}
