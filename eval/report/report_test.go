package report

import (
	"bytes"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/grmdp/grmdp/eval"
)

// -keep DIR writes the test report to DIR so it can be looked at.
var keep = flag.String("keep", "", "also write the sample report to this directory")

func sampleInput() Input {
	nan := math.NaN()
	return Input{
		Title: "grmdp evaluation of policy.parquet",
		Policy: PolicyInfo{
			Method: "cluster", Features: "action-block", H: 4, D: 6, A: 3,
			Beta: 0.01234, Lambda: 1, Groups: []string{"north", "south"}, Fallback: "behaviour",
		},
		Eval: &eval.Report{
			PolicyValue: 2.3456, PessimisticValue: 2.1011, ValueCILow: 2.25, ValueCIHigh: 2.4401,
			Beta: 0.0321,
			Sites: []eval.SiteValue{
				{Site: "hospital-A", Value: 2.61, CILow: 2.5, CIHigh: 2.72},
				{Site: "hospital-B", Value: 2.152, CILow: 2.01, CIHigh: 2.3},
				{Site: "hospital-C", Value: 2.48, CILow: 2.31, CIHigh: 2.66},
				{Site: "hospital-D", Value: 2.705, CILow: nan, CIHigh: nan},
			},
			Delta: []eval.DeltaValue{
				{Step: 1, Cluster: "north", Delta: 0.031, PValue: 0.41},
				{Step: 1, Cluster: "south", Delta: 0.092, PValue: 0.012},
				{Step: 2, Cluster: "north", Delta: 0.025, PValue: 0.52},
				{Step: 2, Cluster: "south", Delta: 0.071, PValue: 0.03},
				{Step: 3, Cluster: "north", Delta: 0.018, PValue: 0.77},
				{Step: 3, Cluster: "south", Delta: 0.045, PValue: 0.2},
				{Step: 4, Cluster: "north", Delta: 0.009, PValue: 0.9},
				{Step: 4, Cluster: "south", Delta: 0.021, PValue: 0.6},
			},
			DeltaSum:  0.092 + 0.071 + 0.045 + 0.021,
			Yardstick: 0.05858,
			Bootstrap: 200, Seed: 7, Level: 0.95, Permutations: 199,
			WorstSite:  "hospital-B",
			Clustering: "clusters.json",
		},
		Coverage: &Coverage{
			Sites:    []string{"hospital-A", "hospital-B", "hospital-C", "hospital-D"},
			Features: []string{"a0:s1", "a0:s2", "a1:s1", "a1:s2", "a2:s1", "a2:s2"},
			Counts: [][]float64{
				{120, 80, 40, 33, 5, 1},
				{200, 150, 0, 0, 12, 9},
				{90, 70, 22, 18, 0, 3},
				{1500, 900, 300, 250, 40, 0},
			},
		},
		Model:    &eval.ExactValues{OptimalValue: 2.9, PolicyValue: 2.7, Suboptimality: 0.2, ValueGap: 0.1234},
		Commands: []string{"grmdp solve --features action-block --method cluster --clusters clusters.json -o policy.parquet data/", "grmdp eval --policy policy.parquet --report out data/"},
		Notes:    []string{"site hospital-B never observes action 1"},
	}
}

var reportFiles = []string{
	"coverage.png", "coverage.svg", "delta.png", "delta.svg", "report.md",
	"site-values.png", "site-values.svg",
}

func readDir(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = b
	}
	return files
}

func names(files map[string][]byte) []string {
	var n []string
	for k := range files {
		n = append(n, k)
	}
	slices.Sort(n)
	return n
}

func TestWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "report")
	in := sampleInput()
	if err := Write(dir, in); err != nil {
		t.Fatal(err)
	}
	files := readDir(t, dir)
	if got := names(files); !slices.Equal(got, reportFiles) {
		t.Fatalf("files: got %v, want %v", got, reportFiles)
	}
	for name, b := range files {
		switch filepath.Ext(name) {
		case ".png":
			if !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
				t.Errorf("%s is not a PNG", name)
			}
		case ".svg":
			if !bytes.Contains(b, []byte("<svg")) {
				t.Errorf("%s is not an SVG", name)
			}
		}
	}
	md := string(files["report.md"])
	for _, want := range []string{
		"# grmdp evaluation of policy.parquet",
		"site hospital-B never observes action 1",
		"| method | cluster |",
		"| pessimism beta | 0.01234 |",
		"| groups | 2: north, south |",
		"| robust policy value | 2.346 |",
		"| 95% bootstrap interval | [2.25, 2.44] |",
		"| worst site: hospital-B | 2.152 n/a |", // hospital-D has no interval, so the minimum has none (eval.WorstOf)
		"Its interval is that of the minimum over sites, [smallest low end, smallest high end] of every site's interval",
		"| pessimistic value (beta = 0.0321) | 2.101 |",
		"| **hospital-B** (worst) | 2.152 | [2.01, 2.3] |",
		"| hospital-D | 2.705 | n/a |",
		"| 1 | south | 0.092 | **0.012** |",
		"| 4 | north | 0.009 | 0.9 |",
		"The sum of Delta_h over the 4 steps is 0.229",
		"= 0.05858",
		"the largest Delta_h is 0.092, at step 1",
		"Pooling is not justified by the paper's criterion: Delta_h exceeds the yardstick at 2 of 4 steps (steps 1, 2)",
		"Clusters whose sites differ beyond noise (adjusted p < 0.05): south (steps 1, 2)",
		"The sites of cluster north differ no more than reshuffling",
		"max-statistic permutation test",
		"adjusted for the 8 tests at once",
		"With 199 permutations the smallest attainable p-value is 1/200 = 0.005.",
		"| hospital-B | 2 | a1:s1, a1:s2 |",
		"| hospital-A | 0 | none |",
		"| suboptimality `V*_1 - V^pi_1` | 0.2 |",
		"| value gap `V*_1 - Vhat_1` | 0.1234 |",
		"grmdp eval --policy policy.parquet --report out data/\n",
		"![Delta_h,m by step](delta.png)",
		"![Value of the policy per site](site-values.png)",
		"![Coverage per site and feature](coverage.png)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report.md lacks %q", want)
		}
	}
	if *keep != "" {
		if err := Write(*keep, in); err != nil {
			t.Fatal(err)
		}
	}
}

func TestWriteDeterministic(t *testing.T) {
	a, b := t.TempDir(), t.TempDir()
	if err := Write(a, sampleInput()); err != nil {
		t.Fatal(err)
	}
	if err := Write(b, sampleInput()); err != nil {
		t.Fatal(err)
	}
	fa, fb := readDir(t, a), readDir(t, b)
	if !slices.Equal(names(fa), names(fb)) {
		t.Fatalf("files differ: %v vs %v", names(fa), names(fb))
	}
	for name := range fa {
		if !bytes.Equal(fa[name], fb[name]) {
			t.Errorf("%s differs between two writes of the same input", name)
		}
	}
	// Writing again over an existing report replaces it with the same bytes.
	if err := Write(a, sampleInput()); err != nil {
		t.Fatal(err)
	}
	for name, b := range readDir(t, a) {
		if !bytes.Equal(fa[name], b) {
			t.Errorf("%s differs after rewriting", name)
		}
	}
}

func TestWriteNilSections(t *testing.T) {
	full := sampleInput()
	cases := []struct {
		name  string
		in    Input
		files []string
		lacks []string
	}{
		{"empty", Input{}, []string{"report.md"}, []string{"## Settings", "## Policy value", "## Coverage", "## Commands", "## Warnings"}},
		{"no eval", Input{Policy: full.Policy, Coverage: full.Coverage}, []string{"coverage.png", "coverage.svg", "report.md"}, []string{"## Policy value", "Delta_h"}},
		{"no delta", Input{Eval: &eval.Report{PolicyValue: 1, PessimisticValue: 0.5, Sites: full.Eval.Sites, WorstSite: "hospital-B", ValueCILow: math.NaN(), ValueCIHigh: math.NaN()}},
			[]string{"report.md", "site-values.png", "site-values.svg"}, []string{"Delta_h,m"}},
		{"only model", Input{Model: full.Model}, []string{"report.md"}, []string{"## Policy value"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := Write(dir, c.in); err != nil {
				t.Fatal(err)
			}
			files := readDir(t, dir)
			if got := names(files); !slices.Equal(got, c.files) {
				t.Errorf("files: got %v, want %v", got, c.files)
			}
			md := string(files["report.md"])
			if !strings.HasPrefix(md, "# ") {
				t.Errorf("report.md does not start with a title: %q", md)
			}
			for _, s := range c.lacks {
				if strings.Contains(md, s) {
					t.Errorf("report.md has %q:\n%s", s, md)
				}
			}
		})
	}
}

func TestWriteBadCoverage(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	in := Input{Coverage: &Coverage{Sites: []string{"a", "b"}, Features: []string{"x"}, Counts: [][]float64{{1}}}}
	if err := Write(dir, in); err == nil {
		t.Fatal("no error for counts with too few rows")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("Write created %s for a bad input", dir)
	}
}

func TestDeltaReadings(t *testing.T) {
	cells := func(ds ...float64) []eval.DeltaValue {
		var c []eval.DeltaValue
		for i, d := range ds {
			c = append(c, eval.DeltaValue{Step: i + 1, Cluster: "m", Delta: d, PValue: math.NaN()})
		}
		return c
	}
	cases := []struct {
		name      string
		delta     []float64
		sum, yard float64
		want      string
	}{
		{"justified", []float64{0.01, 0.02}, 0.03, 0.1, "Pooling is justified by the paper's criterion"},
		{"borderline", []float64{0.06, 0.07}, 0.13, 0.1, "only borderline justified"},
		{"not justified", []float64{0.2, 0.07}, 0.27, 0.1, "exceeds the yardstick at 1 of 2 steps (step 1)"},
		{"no yardstick", []float64{0.2}, 0.2, math.NaN(), "No yardstick is known"},
		{"zero yardstick, no heterogeneity", []float64{0, 0}, 0, 0, "pooling changes nothing"},
		{"zero yardstick", []float64{0.1, 0}, 0.1, 0, "pooling is not justified"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := deltaReading(&eval.Report{Delta: cells(c.delta...), DeltaSum: c.sum, Yardstick: c.yard})
			if !strings.Contains(got, c.want) {
				t.Errorf("got %q, want it to contain %q", got, c.want)
			}
		})
	}
	if got := pValueReading(&eval.Report{Delta: cells(0.1)}); !strings.Contains(got, "No permutation p-values") {
		t.Errorf("without p-values: got %q", got)
	}
}

func TestNum(t *testing.T) {
	for _, c := range []struct {
		x    float64
		want string
	}{
		{1.23456, "1.235"}, {0, "0"}, {math.Copysign(0, -1), "0"}, {math.NaN(), "n/a"},
		{123456, "1.235e+05"}, {math.Inf(1), "+Inf"},
	} {
		if got := num(c.x); got != c.want {
			t.Errorf("num(%v): got %q, want %q", c.x, got, c.want)
		}
	}
}

// Degenerate inputs must not panic: NaN everywhere, a single step, a
// single site, no positive count.
func TestWriteDegenerate(t *testing.T) {
	nan := math.NaN()
	cases := map[string]Input{
		"all nan": {Eval: &eval.Report{PolicyValue: nan, PessimisticValue: nan, ValueCILow: nan, ValueCIHigh: nan,
			Sites:     []eval.SiteValue{{Site: "a", Value: nan, CILow: nan, CIHigh: nan}},
			Delta:     []eval.DeltaValue{{Step: 1, Cluster: "m", Delta: nan, PValue: nan}},
			DeltaSum:  nan,
			Yardstick: nan, WorstSite: "a"}},
		"one of each": {Eval: &eval.Report{PolicyValue: 1, PessimisticValue: 1, ValueCILow: 1, ValueCIHigh: 1,
			Sites:     []eval.SiteValue{{Site: "a|b\nc", Value: 1, CILow: 1, CIHigh: 1}},
			Delta:     []eval.DeltaValue{{Step: 3, Cluster: "m", Delta: 0, PValue: 1}},
			Yardstick: 0, WorstSite: "a|b\nc"},
			Coverage: &Coverage{Sites: []string{"a"}, Features: []string{"x"}, Counts: [][]float64{{0}}}},
		"no counts": {Coverage: &Coverage{Sites: []string{"a", "b"}, Features: []string{"x", "y"}, Counts: [][]float64{{0, 0}, {nan, 0}}}},
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := Write(dir, in); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestWriteManyFeatures(t *testing.T) {
	// More features than columns: binned; more cells than vector drawing.
	cov := &Coverage{}
	for k := 0; k < 40; k++ {
		cov.Sites = append(cov.Sites, "site")
		row := make([]float64, 2000)
		for j := range row {
			row[j] = float64((j*7 + k) % 50)
		}
		cov.Counts = append(cov.Counts, row)
	}
	for j := 0; j < 2000; j++ {
		cov.Features = append(cov.Features, "f")
	}
	labels, counts, bin := binCoverage(cov)
	if bin != 4 || len(labels) != 500 || len(counts[0]) != 500 {
		t.Fatalf("binning 2000 features: got bin %d, %d labels, %d columns; want 4, 500, 500", bin, len(labels), len(counts[0]))
	}
	if counts[0][0] != 0 || counts[0][1] != 28 {
		t.Errorf("bins of site 0: got %v, %v; want the bins' smallest counts 0, 28", counts[0][0], counts[0][1])
	}
	if err := Write(t.TempDir(), Input{Coverage: cov}); err != nil {
		t.Fatal(err)
	}
}

// The headline row names the worst site's interval for what it is: the
// interval of the minimum over sites (eval.WorstOf), whose high end here
// is another site's (hospital-D's 2.25, below hospital-B's own 2.3).
func TestWriteWorstInterval(t *testing.T) {
	in := sampleInput()
	e := *in.Eval
	e.Sites = append([]eval.SiteValue(nil), e.Sites...)
	e.Sites[3].CILow, e.Sites[3].CIHigh = 2.2, 2.25
	in.Eval = &e
	dir := t.TempDir()
	if err := Write(dir, in); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(dir, ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	if want := "| worst site: hospital-B | 2.152, minimum over sites [2.01, 2.25] |"; !strings.Contains(string(md), want) {
		t.Errorf("report.md lacks %q", want)
	}
}
