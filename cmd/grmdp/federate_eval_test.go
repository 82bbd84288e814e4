package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/grmdp/grmdp/dataset"
	"github.com/grmdp/grmdp/eval"
	"github.com/grmdp/grmdp/federate"
	"github.com/grmdp/grmdp/solve"
)

// checkValueMessage fails unless a value round's message obeys disclosure
// control: every count it holds (coverage, no evidence) is 0 or at least
// minCount, and its value sums come from at least max(minRows, minCount)
// rows.
func checkValueMessage(t *testing.T, file string, m *federate.Message, minCount, minRows int) {
	t.Helper()
	for _, v := range m.Extra {
		switch v.Name {
		case "coverage", "no_evidence":
			for i, c := range v.Values {
				if c != 0 && c < float64(minCount) {
					t.Fatalf("%s: %s %d is %v < %d", file, v.Name, i, c, minCount)
				}
			}
			if r := float64(m.Rows) - v.Values[0]; v.Name == "no_evidence" && r > 0 && r < float64(minCount) {
				t.Fatalf("%s: %v rows with evidence < %d", file, r, minCount)
			}
		case "value":
			if v.Values[1] < float64(max(minRows, minCount)) {
				t.Fatalf("%s: a value sum over %v rows", file, v.Values[1])
			}
		default:
			t.Fatalf("%s: unexpected vector %s in a value message", file, v.Name)
		}
	}
}

// sameSolveJSON compares a central solve --json with a federated job's
// solve.json: the value estimate to 1e-12 relative (the coordinator adds
// the sites' sums of Vhat_1, the central solve every row in one serial
// sum), and exactly the diagnostics made of counts and of the Grams
// (decisions without evidence, uncovered features, condition numbers,
// empty cells). The penalty's share is null in the federated one.
func sameSolveJSON(t *testing.T, what, centralOut, fedFile string) {
	t.Helper()
	var want, got dataset.SolveReport
	if err := json.Unmarshal([]byte(centralOut), &want); err != nil {
		t.Fatalf("%s: central: %v", what, err)
	}
	b, err := os.ReadFile(fedFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("%s: %s: %v", what, fedFile, err)
	}
	switch {
	case (want.ValueEstimate == nil) != (got.ValueEstimate == nil):
		t.Fatalf("%s: value %v, central %v", what, got.ValueEstimate, want.ValueEstimate)
	case want.ValueEstimate != nil && math.Abs(*want.ValueEstimate-*got.ValueEstimate) > 1e-12*math.Abs(*want.ValueEstimate):
		t.Fatalf("%s: value %v, central %v", what, *got.ValueEstimate, *want.ValueEstimate)
	case want.Beta != got.Beta || want.Method != got.Method || want.D != got.D:
		t.Fatalf("%s: beta %v method %s d %d, central %v %s %d", what, got.Beta, got.Method, got.D, want.Beta, want.Method, want.D)
	}
	wd, gd := want.Diagnostics, got.Diagnostics
	if wd.NoEvidenceShare != gd.NoEvidenceShare || fmt.Sprint(wd.NoEvidenceBySite) != fmt.Sprint(gd.NoEvidenceBySite) {
		t.Fatalf("%s: no evidence %v %v, central %v %v", what, gd.NoEvidenceShare, gd.NoEvidenceBySite, wd.NoEvidenceShare, wd.NoEvidenceBySite)
	}
	if fmt.Sprint(wd.Uncovered) != fmt.Sprint(gd.Uncovered) || fmt.Sprint(wd.Condition) != fmt.Sprint(gd.Condition) || fmt.Sprint(wd.EmptyCells) != fmt.Sprint(gd.EmptyCells) {
		t.Fatalf("%s: uncovered %v condition %v empty %v; central %v %v %v", what, gd.Uncovered, gd.Condition, gd.EmptyCells, wd.Uncovered, wd.Condition, wd.EmptyCells)
	}
	if gd.PenaltyShare != nil {
		t.Fatalf("%s: a federated penalty share %v", what, gd.PenaltyShare)
	}
}

// TestFederateEvalEqualsEval: federate run --eval over the hospitals'
// folders gives the result of grmdp eval --bootstrap 0 --permutations 0 on
// all the rows (no disclosure control, --min-count 0): each site's own
// value, support, bounds and observed care and every Delta_{h,m} bit for
// bit, the robust value, lower bound, robust bounds and support to 1e-12
// relative (means over every site's initial states, summed site by site);
// intervals and p-values null, and the robust support of the action-block
// map left out (null) and said so.
func TestFederateEvalEqualsEval(t *testing.T) {
	if testing.Short() {
		t.Skip("builds grmdp and starts a process per part")
	}
	bin := federateBinary(t)
	dir := t.TempDir()
	type setup struct {
		name, method string
		names, dirs  []string
		settings     []string
		// evalClusters: Delta_h over the cluster file (eval --clusters)
		// rather than the policy's groups.
		evalClusters bool
	}
	var cases []setup
	names, dirs := fedSetup(t, filepath.Join(dir, "ab"))
	ab := []string{"--features", "action-block", "--state", strings.Join(benchCols, ","), "--horizon", "7", "--actions", "10"}
	cases = append(cases, setup{"action-block", "cluster", names, dirs, ab, false}, setup{"action-block-clusters", "sitewise", names, dirs, ab, true})
	_, names, dirs = simulateSplit(t, filepath.Join(dir, "form"), "--scenario", "formulary", "--seed", "1", "--trajectories", "60,40,30", "--horizon", "6")
	cases = append(cases, setup{"tabular", "pooled", names, dirs, []string{"--features", "tabular", "--state", "state", "--num-states", "237", "--horizon", "6", "--actions", "8"}, false})
	for _, c := range cases {
		job := filepath.Join(dir, "job-"+c.name)
		args := append([]string{"--method", c.method, "--min-count", "0", "--min-rows", "0"}, c.settings...)
		clusters := filepath.Join(dir, "clusters.csv")
		if err := os.WriteFile(clusters, []byte("site,cluster\n"+c.names[0]+",a\n"+c.names[2]+",a\n"+c.names[1]+",b\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if c.method == "cluster" {
			args = append(args, "--clusters", clusters)
		}
		fedInit(t, bin, job, c.names, args...)
		var run, ceval []string
		if c.evalClusters {
			run, ceval = []string{"--eval-clusters", clusters}, []string{"--clusters", clusters}
		}
		policy, out := fedRunEval(t, bin, job, c.names, c.dirs, run...)
		if !strings.Contains(out, "not computed from sums") || !strings.Contains(out, "robust value (data)") {
			t.Fatalf("%s: federate run --eval printed:\n%s", c.name, out)
		}
		central, got := evalBoth(t, bin, job, policy, c.dirs, ceval...)
		sameEvalJSON(t, c.name, central, got)
		// The finished evaluation prints again as its last round printed it.
		if text := mustBin(t, bin, "federate", "eval", "--job", job); !strings.Contains(out, text) || !strings.Contains(text, "robust value (data)") {
			t.Errorf("%s: federate eval --job printed\n%s\nwant the result federate run printed:\n%s", c.name, text, out)
		}
	}
}

// sameEvalJSON compares grmdp eval --json with federate eval --json.
func sameEvalJSON(t *testing.T, what, centralOut, fedOut string) {
	t.Helper()
	var want, got evalJSON
	if err := json.Unmarshal([]byte(centralOut), &want); err != nil {
		t.Fatalf("%s: central: %v", what, err)
	}
	if err := json.Unmarshal([]byte(fedOut), &got); err != nil {
		t.Fatalf("%s: federated: %v", what, err)
	}
	close := func(name string, w, g *float64, exact bool) {
		t.Helper()
		switch {
		case w == nil || g == nil:
			if w != g {
				t.Fatalf("%s: %s %v, central %v", what, name, g, w)
			}
		case exact && *w != *g, !exact && math.Abs(*w-*g) > 1e-12*math.Abs(*w):
			t.Fatalf("%s: %s %v, central %v", what, name, *g, *w)
		}
	}
	close("robust value", &want.PolicyValue, &got.PolicyValue, false)
	close("pessimistic value", &want.PessimisticValue, &got.PessimisticValue, false)
	close("beta", &want.Beta, &got.Beta, true)
	close("lower", want.Lower, got.Lower, false)
	close("upper", want.Upper, got.Upper, false)
	if want.Identified != nil {
		close("support", want.Support, got.Support, false)
	} else if got.Support != nil {
		t.Fatalf("%s: a robust leverage support %v from sums", what, *got.Support)
	}
	if want.WorstSite != got.WorstSite || want.Method != got.Method || len(want.Sites) != len(got.Sites) || len(want.Observed) != len(got.Observed) {
		t.Fatalf("%s: worst %s method %s, central %s %s", what, got.WorstSite, got.Method, want.WorstSite, want.Method)
	}
	for k, w := range want.Sites {
		g := got.Sites[k]
		if w.Site != g.Site {
			t.Fatalf("%s: site %s, central %s", what, g.Site, w.Site)
		}
		close("site "+w.Site+" value", &w.Value, &g.Value, true)
		close("site "+w.Site+" support", w.Support, g.Support, true)
		close("site "+w.Site+" lower", w.Lower, g.Lower, true)
		close("site "+w.Site+" upper", w.Upper, g.Upper, true)
		close("site "+w.Site+" observed care", &want.Observed[k].Value, &got.Observed[k].Value, true)
		if g.CILow != nil || g.Bias != nil {
			t.Fatalf("%s: site %s has an interval", what, g.Site)
		}
	}
	if len(want.Delta) != len(got.Delta) {
		t.Fatalf("%s: %d Delta cells, central %d", what, len(got.Delta), len(want.Delta))
	}
	for i, w := range want.Delta {
		g := got.Delta[i]
		if w.Step != g.Step || w.Cluster != g.Cluster || w.Delta != g.Delta || g.PValue != nil {
			t.Fatalf("%s: Delta %+v, central %+v", what, g, w)
		}
	}
	close("delta sum", want.DeltaSum, got.DeltaSum, true)
	close("yardstick", want.Yardstick, got.Yardstick, true)
	if want.Agreement == nil || got.Agreement == nil || fmt.Sprint(*want.Agreement.Agreement, *want.Agreement.NoEvidence, want.Agreement.Rows) !=
		fmt.Sprint(*got.Agreement.Agreement, *got.Agreement.NoEvidence, got.Agreement.Rows) || len(want.Agreement.Sites) != len(got.Agreement.Sites) {
		t.Fatalf("%s: agreement %+v, central %+v", what, got.Agreement, want.Agreement)
	}
	for k, w := range want.Agreement.Sites {
		g := got.Agreement.Sites[k]
		if w.Site != g.Site || w.Rows != g.Rows || *w.Agreement != *g.Agreement || *w.NoEvidence != *g.NoEvidence {
			t.Fatalf("%s: site agreement %+v, central %+v", what, g, w)
		}
	}
	if len(want.Delta) == 0 || len(got.Federated.LeftOut) < 2 {
		t.Fatalf("%s: no Delta (the case tests nothing) or nothing said left out: %+v", what, got.Federated)
	}
}

// TestFederateEvalRefusals: a bad message in an evaluation round (a solve
// round's, another round's, a site twice, a site missing, truncated,
// corrupted) is refused with exit code 3 and one line, and the
// evaluation's state is left as it was; a site refuses a policy whose
// bytes changed since the evaluation was opened. The evaluation's messages
// under --min-count 5 hold no count below 5, and federate show prints
// them in words.
func TestFederateEvalRefusals(t *testing.T) {
	if testing.Short() {
		t.Skip("builds grmdp and starts a process per part")
	}
	bin := federateBinary(t)
	dir := t.TempDir()
	names, dirs := fedSetup(t, dir)
	job := filepath.Join(dir, "job")
	fedInit(t, bin, job, names, settingsArgs("pooled", 5, 10)...)
	fedRun(t, bin, job, names, dirs)
	// Before an evaluation is open, a site has nothing to send.
	code, _, errOut := runBin(t, bin, "federate", "site", "--job", job, "--site", names[0], "-o", filepath.Join(dir, "x.parquet"), dirs[0])
	if code == 0 || !strings.Contains(errOut, "no evaluation is open") {
		t.Fatalf("site of a finished job: exit %d: %s", code, errOut)
	}
	mustBin(t, bin, "federate", "eval", "--job", job, "--policy", filepath.Join(job, federate.PolicyFile))
	round0 := make([]string, len(names))
	for k := range names {
		round0[k] = filepath.Join(dir, fmt.Sprintf("e0-%d.parquet", k))
		mustBin(t, bin, "federate", "site", "--job", job, "--site", names[k], "-o", round0[k], dirs[k])
	}
	solveMsg := filepath.Join(job, "messages", "round-000", "site-000.parquet")
	b, err := os.ReadFile(round0[1])
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(dir, "truncated.parquet")
	os.WriteFile(truncated, b[:len(b)/2], 0o644)
	corrupted := filepath.Join(dir, "corrupted.parquet")
	c := append([]byte(nil), b...)
	c[len(c)/3] ^= 0x5a
	os.WriteFile(corrupted, c, 0o644)
	state := filepath.Join(job, federate.EvalDir, federate.EvalStateFile)
	check := func(what, wantIn string, msgs ...string) {
		t.Helper()
		before, err := os.ReadFile(state)
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
		if after, _ := os.ReadFile(state); string(before) != string(after) {
			t.Fatalf("%s: the evaluation's state changed", what)
		}
		if _, err := os.Stat(filepath.Join(job, federate.EvalDir, federate.EvalResultFile)); err == nil {
			t.Fatalf("%s: a result was written", what)
		}
	}
	check("a solve round's message", "of a solve round", solveMsg, round0[1], round0[2])
	check("site twice", "sent twice", round0[0], round0[0], round0[1], round0[2])
	check("missing site", "no message from site", round0[0], round0[1])
	check("truncated", truncated, round0[0], truncated, round0[2])
	check("corrupted", "corrupted", round0[0], corrupted, round0[2])
	mustBin(t, bin, append([]string{"federate", "step", "--job", job}, round0...)...)
	check("old round", "for round 0", round0...)
	for _, f := range round0 {
		inc, err := readMessage(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, x := range inc.Msg.Counts {
			if x != 0 && x < 5 {
				t.Fatalf("%s: count %d is %v < 5", f, i, x)
			}
		}
	}
	out := mustBin(t, bin, "federate", "show", round0[0])
	if !strings.Contains(out, "evaluation round 1 (step 7)") || !strings.Contains(out, "no row of data") {
		t.Fatalf("federate show:\n%s", out)
	}
	// The policy under evaluation may not change between rounds.
	pol := filepath.Join(job, federate.EvalDir, federate.EvalPolicyFile)
	pb, _ := os.ReadFile(pol)
	os.WriteFile(pol, append(pb, 0), 0o644)
	code, _, errOut = runBin(t, bin, "federate", "site", "--job", job, "--site", names[0], "-o", filepath.Join(dir, "x.parquet"), dirs[0])
	if code != exitBadData || !strings.Contains(errOut, "policy changed") {
		t.Fatalf("changed policy: exit %d: %s", code, errOut)
	}
}

// TestVantage6EvalRound: under a node's environment, an evaluation round's
// task (its input carrying the evaluation's state and the policy's bytes)
// writes the very message federate site writes.
func TestVantage6EvalRound(t *testing.T) {
	if testing.Short() {
		t.Skip("builds grmdp and starts a process per part")
	}
	bin := federateBinary(t)
	dir := t.TempDir()
	names, dirs := fedSetup(t, dir)
	job := filepath.Join(dir, "job")
	fedInit(t, bin, job, names, settingsArgs("sitewise", 5, 10)...)
	fedRun(t, bin, job, names, dirs)
	mustBin(t, bin, "federate", "eval", "--job", job, "--policy", filepath.Join(job, federate.PolicyFile))
	want := filepath.Join(dir, "site.parquet")
	mustBin(t, bin, "federate", "site", "--job", job, "--site", names[1], "-o", want, dirs[1])
	jb, _ := os.ReadFile(filepath.Join(job, federate.JobFile))
	sb, _ := os.ReadFile(filepath.Join(job, federate.StateFile))
	eb, _ := os.ReadFile(filepath.Join(job, federate.EvalDir, federate.EvalStateFile))
	pb, _ := os.ReadFile(filepath.Join(job, federate.EvalDir, federate.EvalPolicyFile))
	input, err := json.Marshal(map[string]any{"method": "site", "job": json.RawMessage(jb), "state": json.RawMessage(sb), "site": names[1],
		"eval": json.RawMessage(eb), "policy": pb})
	if err != nil {
		t.Fatal(err)
	}
	in, out := vantage6Node(t, dir, "DATABASE_URI", dirs[1])
	os.WriteFile(in, input, 0o644)
	mustRun(t, "vantage6")
	a, _ := os.ReadFile(want)
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	inc, err := readMessage(out)
	if err != nil || inc.Msg.Kind != federate.KindEval || string(a) != string(b) {
		t.Fatalf("vantage6's evaluation message differs from federate site's (%v)", err)
	}
}

// checkEvalMessages fails unless every evaluation message in dir (H + 1
// rounds of K sites) obeys disclosure control: every count is 0 or at
// least minCount (and so is its complement among the site's rows, for the
// counts of rows), a withheld feature enters no Gram entry or right-hand
// side, and the last round's sums come from at least max(minRows,
// minCount) rows.
func checkEvalMessages(t *testing.T, dir string, H, K, minCount, minRows int) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "eval-round-*", "*.parquet"))
	if len(files) != (H+1)*K {
		t.Fatalf("%d evaluation messages, want %d", len(files), (H+1)*K)
	}
	k := float64(minCount)
	small := func(x float64) bool { return x > 0 && x < k }
	for _, f := range files {
		inc, err := readMessage(f)
		if err != nil {
			t.Fatal(err)
		}
		m := inc.Msg
		if m.Kind != federate.KindEval {
			t.Fatalf("%s: a %q message among the evaluation's", f, m.Kind)
		}
		if m.Step > 0 {
			l := solve.NewLayout(m.Map.Blocks())
			for i, c := range m.Counts {
				if small(c) {
					t.Fatalf("%s: feature %d has count %v < %d", f, i, c, minCount)
				}
				if c != 0 {
					continue
				}
				b, pos := l.Blocks.Of[i], int(l.Blocks.Pos[i])
				for r := 0; r < l.Blocks.Size(int(b)); r++ {
					x, y := max(r, pos), min(r, pos)
					if v := m.Gram[l.Off[b]+x*(x+1)/2+y]; v != 0 {
						t.Fatalf("%s: Gram entry (%d, %d) of withheld feature %d is %v", f, r, pos, i, v)
					}
				}
				for _, rhs := range m.RHS {
					if rhs[i] != 0 {
						t.Fatalf("%s: right-hand side of withheld feature %d is %v", f, i, rhs[i])
					}
				}
			}
			if !m.Silent && m.StepRows < float64(minRows) {
				t.Fatalf("%s: %v rows < %d sent", f, m.StepRows, minRows)
			}
		}
		for _, v := range m.Extra {
			switch v.Name {
			case "bound_n":
				for i, c := range v.Values {
					if small(c) {
						t.Fatalf("%s: cell %d counted %v < %d", f, i, c, minCount)
					}
				}
			case "value":
				if v.Values[1] < float64(max(minRows, minCount)) {
					t.Fatalf("%s: a value sum over %v rows", f, v.Values[1])
				}
			case "agreement":
				rows := v.Values[0]
				for _, c := range v.Values[1:] {
					if small(c) || small(rows-c) {
						t.Fatalf("%s: agreement count %v of %v rows", f, c, rows)
					}
				}
			case "support":
				if small(v.Values[0]) || small(v.Values[1]-v.Values[0]) {
					t.Fatalf("%s: support count %v of %v visits", f, v.Values[0], v.Values[1])
				}
			}
		}
		if m.Step == 0 && !slices.Contains(m.Withheld, "value") && m.StepRows < float64(max(minRows, minCount)) {
			t.Fatalf("%s: the last round's sums over %v initial states", f, m.StepRows)
		}
	}
}

// evalJSON reads the keys of grmdp eval --json and federate eval --json
// these tests compare.
type evalJSON struct {
	Method           string   `json:"method"`
	PolicyValue      float64  `json:"policy_value"`
	PessimisticValue float64  `json:"pessimistic_value"`
	Beta             float64  `json:"beta"`
	WorstSite        string   `json:"worst_site"`
	Lower            *float64 `json:"lower"`
	Upper            *float64 `json:"upper"`
	Support          *float64 `json:"support"`
	Identified       *bool    `json:"identified"`
	Sites            []struct {
		Site    string   `json:"site"`
		Value   float64  `json:"value"`
		CILow   *float64 `json:"ci_low"`
		Bias    *float64 `json:"bias"`
		Lower   *float64 `json:"lower"`
		Upper   *float64 `json:"upper"`
		Support *float64 `json:"support"`
	} `json:"sites"`
	Observed []struct {
		Value float64 `json:"value"`
	} `json:"observed"`
	Delta []struct {
		Step    int      `json:"step"`
		Cluster string   `json:"cluster"`
		Delta   float64  `json:"delta"`
		PValue  *float64 `json:"p_value"`
	} `json:"delta"`
	DeltaSum  *float64       `json:"delta_sum"`
	Yardstick *float64       `json:"yardstick"`
	Agreement *agreementJSON `json:"agreement"`
	Federated eval.Federated `json:"federated"`
}

// agreementJSON reads the agreement of grmdp eval --json.
type agreementJSON struct {
	Rows       float64  `json:"rows"`
	Agreement  *float64 `json:"agreement"`
	NoEvidence *float64 `json:"no_evidence"`
	Sites      []struct {
		Site       string   `json:"site"`
		Rows       float64  `json:"rows"`
		Agreement  *float64 `json:"agreement"`
		NoEvidence *float64 `json:"no_evidence"`
	} `json:"sites"`
}
