package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/grmdp/grmdp/traj"

	"github.com/grmdp/grmdp/dataset"
	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/io/parquetio"
)

// TestBinnedMapsEndToEnd solves the simulated benchmark (columns s1..s3)
// with the binned and soft-binned maps, quantile and given cut points,
// then applies, shows and evaluates the policies: the cut points computed
// from the data are recorded in the policy and reused as they are.
func TestBinnedMapsEndToEnd(t *testing.T) {
	dir := t.TempDir()
	data, _ := simulated(t, dir, "benchmark", "--trajectories", "60,40,90")
	for _, c := range []struct {
		kind string
		d    int
	}{{"binned", 3 * 3 * 2 * 10}, {"soft-binned", (3 + 2 + 2) * 10}} {
		pol := filepath.Join(dir, c.kind+".parquet")
		args := []string{"solve", "--features", c.kind, "--bins", "s1:q4", "--bins", "s2:0.3,0.6", "--bins", "s3:0.25,0.75", "--json", "-o", pol, data}
		if c.kind == "binned" {
			args[4], args[8] = "s1:q3", "s3:0.5"
		}
		code, out, errOut := grmdp(t, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", c.kind, code, errOut)
		}
		if !strings.Contains(errOut, "grmdp: note: the "+c.kind+" map") {
			t.Errorf("%s: no note on what the map does:\n%s", c.kind, errOut)
		}
		var doc struct {
			D           int    `json:"d"`
			FeatureNote string `json:"feature_note"`
		}
		if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.D != c.d {
			t.Fatalf("%s: d = %d, want %d (%v)", c.kind, doc.D, c.d, err)
		}
		if !strings.HasPrefix(doc.FeatureNote, "the "+c.kind+" map") {
			t.Errorf("%s: solve --json's feature_note %q", c.kind, doc.FeatureNote)
		}
		var show struct {
			Map features.Map `json:"feature_map"`
		}
		if err := json.Unmarshal([]byte(mustRun(t, "show", "--json", pol)), &show); err != nil {
			t.Fatal(err)
		}
		m := show.Map
		if m.Kind.String() != c.kind || len(m.Bins) != 3 || !slices.Equal(m.StateColumns, []string{"s1", "s2", "s3"}) {
			t.Fatalf("%s: recorded map %+v", c.kind, m)
		}
		// The quantile column's cut points are the data's quantiles.
		tb, err := parquetio.Read(t.Context(), []string{data}, traj.Options{State: traj.StateSpec{Columns: []string{"s1", "s2", "s3"}}})
		if err != nil {
			t.Fatal(err)
		}
		var s1 []float64
		for h := range tb.Steps {
			for i := 0; i < tb.Steps[h].Len(); i++ {
				s1 = append(s1, tb.Steps[h].State[i*3])
			}
		}
		if want := features.QuantileCuts(s1, m.Bins[0].Quantiles); !slices.Equal(m.Bins[0].Cuts, want) || m.Bins[0].Column != "s1" {
			t.Errorf("%s: s1's cut points %v, want the data's quantiles %v", c.kind, m.Bins[0].Cuts, want)
		}
		if !slices.Equal(m.Bins[1].Cuts, []float64{0.3, 0.6}) {
			t.Errorf("%s: s2's cut points %v", c.kind, m.Bins[1].Cuts)
		}
		if txt := mustRun(t, "show", pol); !strings.Contains(txt, "bins s1") || !strings.Contains(txt, "quantiles") {
			t.Errorf("%s: show does not list the bins:\n%s", c.kind, txt)
		}
		applied := filepath.Join(dir, c.kind+"-applied.parquet")
		mustRun(t, "apply", "--policy", pol, "-o", applied, data)
		if fi, err := os.Stat(applied); err != nil || fi.Size() == 0 {
			t.Fatalf("%s: apply wrote nothing: %v", c.kind, err)
		}
		// The same --bins are accepted, others refused.
		mustRun(t, "apply", "--policy", pol, "--bins", args[4], "--bins", args[6], "--bins", args[8], "-o", applied, data)
		code, _, errOut = grmdp(t, "apply", "--policy", pol, "--bins", "s1:q5", "--bins", args[6], "--bins", args[8], "-o", applied, data)
		checkFailure(t, code, errOut, exitUsage, "", "--bins", "s1:q5", "the policy was learned with")
		mustRun(t, "eval", "--policy", pol, "--bootstrap", "0", "--permutations", "0", data)
	}
}

// TestBinnedOutOfCore checks that given cut points solve out of core to
// the in-memory policy, and that quantile bins, which need every row at
// once, are refused there with a way forward.
func TestBinnedOutOfCore(t *testing.T) {
	dir := t.TempDir()
	data, _ := simulated(t, dir, "benchmark", "--trajectories", "30,20,40")
	steps := map[string]string{}
	for _, mode := range []string{"memory", "out-of-core"} {
		pol := filepath.Join(dir, mode+".parquet")
		args := []string{"solve", "--features", "soft-binned", "--bins", "s1:0.2,0.5,0.8", "--bins", "s3:0,1", "-o", pol, data}
		if mode == "out-of-core" {
			args = append(args, "--out-of-core")
		}
		mustRun(t, args...)
		var doc map[string]any
		if err := json.Unmarshal([]byte(mustRun(t, "show", "--json", pol)), &doc); err != nil {
			t.Fatal(err)
		}
		js, _ := json.Marshal(doc["steps"])
		steps[mode] = string(js)
	}
	if steps["memory"] != steps["out-of-core"] {
		t.Error("soft-binned: the out-of-core policy differs from the in-memory one")
	}
	code, _, errOut := grmdp(t, "solve", "--features", "binned", "--bins", "s1:q4", "--out-of-core", "-o", filepath.Join(dir, "q.parquet"), data)
	checkFailure(t, code, errOut, exitUsage, "", "--out-of-core", "quantile bins", "give the cut points")
}

// TestBinsErrors checks that bad --bins are one-line usage errors.
func TestBinsErrors(t *testing.T) {
	dir := t.TempDir()
	data, _ := simulated(t, dir, "benchmark", "--trajectories", "10,10,10")
	out := filepath.Join(dir, "p.parquet")
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--features", "binned"}, []string{"--features binned needs --bins COL:c1,c2,... or COL:qK for each state column"}},
		{[]string{"--bins", "s1:0.5"}, []string{"--bins is for --features binned or soft-binned, not action-block"}},
		{[]string{"--state", "s1,,s2"}, []string{`--state "s1,,s2" has an empty column name`}},
		{[]string{"--features", "binned", "--bins", "s1:0.5,0.2"}, []string{"--bins", "ascend"}},
		{[]string{"--features", "soft-binned", "--bins", "s1:0.5"}, []string{"--bins", "at least 2"}},
		{[]string{"--features", "binned", "--bins", "s1:q1"}, []string{"--bins", "K >= 2"}},
		{[]string{"--features", "binned", "--bins", "s1:0.5", "--state", "s2"}, []string{"--state s2", "bins name (s1)"}},
		{[]string{"--features", "binned", "--bins", "s1:0.5", "--bins", "s1:0.7"}, []string{"s1", "twice"}},
		{[]string{"--features", "binned", "--bins", "nosuch:0.5"}, []string{"nosuch"}},
	} {
		code, _, errOut := grmdp(t, append(append([]string{"solve"}, c.args...), "-o", out, data)...)
		wantCode := exitUsage
		if c.args[len(c.args)-1] == "nosuch:0.5" {
			wantCode = exitBadData
		}
		checkFailure(t, code, errOut, wantCode, "", c.want...)
	}
}

// writeClinical writes the benchmark's rows with the state rescaled to
// look like lactate (0..4 mmol/L), SOFA (0..12) and age (20..80 years),
// and the actions recoded a%3 (0..2), with action 5 in one row when
// miscode is set.
func writeClinical(t *testing.T, dir string, miscode bool) string {
	t.Helper()
	data, _ := simulated(t, dir, "benchmark", "--trajectories", "40,30,50")
	c := readChunk(t, data)
	for i := 0; i < c.Len(); i++ {
		s := c.State[i*3 : i*3+3]
		s[0], s[1], s[2] = 4*s[0], float64(int(12*s[1])), 20+60*s[2]
		c.ActionInt[i] %= 3
	}
	if miscode {
		c.ActionInt[c.Len()/2] = 5
	}
	path := filepath.Join(dir, "clinical.parquet")
	if err := parquetio.WriteChunks(path, []*traj.Chunk{c}, parquetio.WriteOptions{StateColumns: []string{"lactate", "sofa", "age"}}); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestActionBlockWarnsOnSeparateMeasurements: action-block on lactate,
// SOFA and age says what it does and warns, naming binned and
// soft-binned, in solve, compare and inspect; the benchmark's own states
// do not warn.
func TestActionBlockWarnsOnSeparateMeasurements(t *testing.T) {
	dir := t.TempDir()
	data := writeClinical(t, dir, false)
	code, out, errOut := grmdp(t, "solve", "--state", "lactate,sofa,age", "--json", "-o", filepath.Join(dir, "p.parquet"), data)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, frag := range []string{"grmdp: note: the action-block map divides each row's lactate, sofa, age by their sum",
		"grmdp: warning: the action-block map divides", "look like separate measurements", "age 5", "--features binned", "--features soft-binned"} {
		if !strings.Contains(errOut, frag) {
			t.Errorf("solve's stderr lacks %q:\n%s", frag, errOut)
		}
	}
	var doc struct{ Warnings []string }
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if strings.Count(errOut, "grmdp: warning:") != len(doc.Warnings) || !strings.Contains(strings.Join(doc.Warnings, "\n"), "soft-binned") {
		t.Errorf("the warning is not in the policy's warnings: %v", doc.Warnings)
	}
	// --method cluster keeps them beside the cluster mapping's warnings.
	clusters := filepath.Join(dir, "clusters.csv")
	if err := os.WriteFile(clusters, []byte("site,cluster\n1,a\n2,a\n3,b\n4,b\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = grmdp(t, "solve", "--method", "cluster", "--clusters", clusters, "--allow-singletons",
		"--state", "lactate,sofa,age", "--json", "-o", filepath.Join(dir, "c.parquet"), data)
	doc.Warnings = nil
	if err := json.Unmarshal([]byte(out), &doc); code != 0 || err != nil {
		t.Fatalf("solve --method cluster: exit %d, %v: %s", code, err, errOut)
	}
	if w := strings.Join(doc.Warnings, "\n"); strings.Count(errOut, "grmdp: warning:") != len(doc.Warnings) ||
		!strings.Contains(w, "separate measurements") || !strings.Contains(w, `site "4" of cluster "b"`) {
		t.Errorf("solve --method cluster: warnings %q, stderr:\n%s", doc.Warnings, errOut)
	}
	code, out, errOut = grmdp(t, "inspect", "--state", "lactate,sofa,age", data)
	if code != 0 || !strings.Contains(out, "divides each row's lactate, sofa, age by their sum") || !strings.Contains(errOut, "soft-binned") {
		t.Errorf("inspect: exit %d, stdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	code, _, errOut = grmdp(t, "compare", "--state", "lactate,sofa,age", "-o", filepath.Join(dir, "cmp"), data)
	if code != 0 || strings.Count(errOut, "separate measurements") != 1 {
		t.Errorf("compare: exit %d, want the warning once:\n%s", code, errOut)
	}
	bench, _ := simulated(t, dir, "benchmark", "--trajectories", "40,30,50")
	_, _, errOut = grmdp(t, "solve", "-o", filepath.Join(dir, "b.parquet"), bench)
	if strings.Contains(errOut, "separate measurements") {
		t.Errorf("the benchmark's states warn:\n%s", errOut)
	}
}

// TestMissingActionsWarning pins the warning for a miscoded action: data
// coded 0..2 with one row of action 5.
func TestMissingActionsWarning(t *testing.T) {
	dir := t.TempDir()
	data := writeClinical(t, dir, true)
	want := "grmdp: warning: actions 3, 4 never appear in the data (A = 6 from the largest action 5); " +
		"if the data are coded 0..2, a row has a miscoded action; set --actions to say A explicitly\n"
	for _, cmd := range []string{"solve", "inspect"} {
		args := []string{cmd, "--features", "binned", "--bins", "lactate:1,2", "--bins", "sofa:q3", data}
		if cmd == "solve" {
			args = append(args, "-o", filepath.Join(dir, "p.parquet"))
		}
		code, _, errOut := grmdp(t, args...)
		if code != 0 || !strings.Contains(errOut, want) {
			t.Errorf("%s: exit %d; stderr lacks\n%s\n got:\n%s", cmd, code, want, errOut)
		}
	}
	// Data coded 0..2 throughout: no warning.
	clean := writeClinical(t, t.TempDir(), false)
	_, _, errOut := grmdp(t, "solve", "--features", "binned", "--bins", "lactate:1,2", "-o", filepath.Join(dir, "q.parquet"), clean)
	if strings.Contains(errOut, "never appear") {
		t.Errorf("clean data warn:\n%s", errOut)
	}
}

// TestInspectBinnedCells checks inspect's rows per cell and site: each
// site's counts sum to its rows, and the JSON carries them.
func TestInspectBinnedCells(t *testing.T) {
	dir := t.TempDir()
	data, _ := simulated(t, dir, "benchmark", "--trajectories", "20,30,40")
	out := mustRun(t, "inspect", "--features", "binned", "--bins", "s1:0.5", "--bins", "s2:q2", "--json", data)
	var rep dataset.Inspection
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Cells) != 3 {
		t.Fatalf("cells for %d sites, want 3", len(rep.Cells))
	}
	for k, s := range rep.Sites {
		rows, n := 0, 0
		for _, r := range s.RowsByStep {
			rows += r
		}
		for _, c := range rep.Cells[k] {
			n += c
		}
		if len(rep.Cells[k]) != 4 || n != rows {
			t.Errorf("site %s: %d cells holding %d rows, want 4 holding %d", s.Site, len(rep.Cells[k]), n, rows)
		}
	}
	txt := mustRun(t, "inspect", "--features", "binned", "--bins", "s1:0.5", "--bins", "s2:q2", data)
	if !strings.Contains(txt, "rows per cell") || !strings.Contains(txt, "s1<=0.5 & s2<=") {
		t.Errorf("inspect's cell table missing:\n%s", txt)
	}
}

// TestBinnedFeatureLabels checks the names of binned and soft-binned
// features in reports against a hand-worked map.
func TestBinnedFeatureLabels(t *testing.T) {
	bins := []features.Bins{{Column: "lactate", Cuts: []float64{2, 4}}, {Column: "sofa", Cuts: []float64{6}}}
	b := features.Map{Kind: features.Binned, A: 2, Bins: bins}
	// Feature 7 = cell 3 (lactate bin 1, sofa bin 1), action 1.
	if got := b.FeatureLabel(7); got != "a1:2<lactate<=4 & sofa>6" {
		t.Errorf("binned feature 7: %q", got)
	}
	s := features.Map{Kind: features.SoftBinned, A: 2, Bins: bins}
	// d = 6: action 1's block is 3..5; feature 5 is sofa's centre 6.
	if got := s.FeatureLabel(5); got != "a1:sofa~6" {
		t.Errorf("soft-binned feature 5: %q", got)
	}
}

// TestBinsInConfig checks that --bins can come from a --config file as a
// YAML list, and that the command line wins over it.
func TestBinsInConfig(t *testing.T) {
	dir := t.TempDir()
	data, _ := simulated(t, dir, "benchmark", "--trajectories", "10,10,10")
	cfg := filepath.Join(dir, "job.yaml")
	if err := os.WriteFile(cfg, []byte("features: soft-binned\nbins:\n  - \"s1:0.2,0.5,0.8\"\n  - \"s2:q3\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		extra []string
		want  []string
	}{
		{nil, []string{"s1:0.2,0.5,0.8", "s2:q3"}},
		{[]string{"--bins", "s3:0.1,0.9"}, []string{"s3:0.1,0.9"}},
	} {
		pol := filepath.Join(dir, "p.parquet")
		mustRun(t, append(append([]string{"solve", "--config", cfg}, c.extra...), "-o", pol, data)...)
		var show struct {
			Map features.Map `json:"feature_map"`
		}
		if err := json.Unmarshal([]byte(mustRun(t, "show", "--json", pol)), &show); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, b := range show.Map.Bins {
			got = append(got, b.String())
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%v: bins %v, want %v", c.extra, got, c.want)
		}
	}
}

// TestBinnedDeterministic checks that binned and soft-binned solves give
// the same vectors for any --workers.
func TestBinnedDeterministic(t *testing.T) {
	dir := t.TempDir()
	data, _ := simulated(t, dir, "benchmark", "--trajectories", "30,20,40")
	for _, kind := range []string{"binned", "soft-binned"} {
		var steps []string
		for _, w := range []string{"1", "2"} {
			pol := filepath.Join(dir, kind+w+".parquet")
			mustRun(t, "solve", "--features", kind, "--bins", "s1:q3", "--bins", "s3:0.3,0.7", "--workers", w, "-o", pol, data)
			var doc map[string]any
			if err := json.Unmarshal([]byte(mustRun(t, "show", "--json", pol)), &doc); err != nil {
				t.Fatal(err)
			}
			js, _ := json.Marshal([]any{doc["steps"], doc["feature_map"]})
			steps = append(steps, string(js))
		}
		if steps[0] != steps[1] {
			t.Errorf("%s: --workers 1 and 2 give different policies", kind)
		}
	}
}
