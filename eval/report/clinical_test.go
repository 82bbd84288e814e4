package report

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"

	"github.com/grmdp/grmdp/eval"
)

// flaggedInput is sampleInput with identification bounds, a site and the
// robust value not identified, exact values and observed care.
func flaggedInput() Input {
	in := sampleInput()
	e := *in.Eval
	e.HasBounds, e.H = true, 4
	e.Lower, e.Upper, e.Identified = 0.5, 3.9, false
	e.Sites = append([]eval.SiteValue(nil), e.Sites...)
	for k := range e.Sites {
		e.Sites[k].Exact, e.Sites[k].Lower, e.Sites[k].Upper = 2.5, 2.3, 2.6
		e.Sites[k].Identified = k != 1
	}
	e.Sites[1].Lower, e.Sites[1].Upper = 0.2, 3.8
	for _, s := range e.Sites {
		e.Observed = append(e.Observed, eval.ObservedValue{Site: s.Site, Value: 2.2, CILow: 2.1, CIHigh: 2.3})
	}
	in.Eval = &e
	return in
}

// The report writes the site-value PNG and, under it, a caption that names
// the units, says why the robust value can lie below every site's own
// value, and names in words the values that are not identified; the PNG
// is a PNG, and the figure's own caption says the same.
func TestSiteValuesCaption(t *testing.T) {
	dir := t.TempDir()
	in := flaggedInput()
	if err := Write(dir, in); err != nil {
		t.Fatal(err)
	}
	png, err := os.ReadFile(filepath.Join(dir, SiteValuesPlot+".png"))
	if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Fatalf("site-values.png missing or not a PNG: %v", err)
	}
	md, err := os.ReadFile(filepath.Join(dir, ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	at := strings.Index(string(md), "![Value of the policy per site](site-values.png)")
	if at < 0 {
		t.Fatal("report.md does not embed site-values.png")
	}
	under := string(md[at:])
	for _, want := range []string{
		"expected total reward over H = 4 steps",
		RobustCaption,
		"adversary that picks each feature's worst site",
		"Not identified (bounds wider than 10% of the value range, so the data cannot pin the value down): the robust value, site hospital-B.",
		"Crosses are the exact values under the known model",
		"Triangles are the observed care",
	} {
		if !strings.Contains(under, want) {
			t.Errorf("the caption under the site plot lacks %q:\n%s", want, under)
		}
	}
	f := siteFigure(in.Eval, in.Model)
	if !strings.Contains(f.caption, RobustCaption) || !strings.Contains(f.caption, notIdentifiedLabel) {
		t.Errorf("the figure's caption lacks the robust reading or the not-identified wording: %q", f.caption)
	}
	if f.plot.Y.Label.Text != "value: expected total reward over H = 4 steps" {
		t.Errorf("y axis label %q", f.plot.Y.Label.Text)
	}
	// The x axis names the robust column and every site; the flagged ones
	// say "not identified" under their names, the others do not.
	var labels []string
	for _, tk := range f.plot.X.Tick.Marker.Ticks(f.plot.X.Min, f.plot.X.Max) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	want := []string{"robust\n(worst site\nper feature)\nnot identified", "hospital-A", "hospital-B\nnot identified", "hospital-C", "hospital-D"}
	if !slices.Equal(labels, want) {
		t.Errorf("x tick labels %q, want %q", labels, want)
	}
	// All identified: the caption says so instead.
	for k := range in.Eval.Sites {
		in.Eval.Sites[k].Identified = true
	}
	in.Eval.Identified = true
	if c := siteCaption(in.Eval, true); !strings.Contains(c, "Every value shown is identified") || strings.Contains(c, "Not identified") {
		t.Errorf("all identified: caption %q", c)
	}
}

// Counts fall into fixed classes: 0 alone, then 1-4, 5-19, 20-99 and 100
// or more; NaN stays NaN.
func TestCoverageClass(t *testing.T) {
	for _, c := range []struct{ v, want float64 }{
		{0, 0}, {-1, 0}, {0.5, 1}, {1, 1}, {4, 1}, {4.99, 1}, {5, 2}, {19, 2}, {20, 3}, {99, 3}, {100, 4}, {1e9, 4},
	} {
		if got := coverageClass(c.v); got != c.want {
			t.Errorf("class of %v: got %v, want %v", c.v, got, c.want)
		}
	}
	if !math.IsNaN(coverageClass(math.NaN())) {
		t.Error("class of NaN is not NaN")
	}
	if coverageClasses[0].Color != red {
		t.Error("zero counts are not red")
	}
}

// With each feature's action, the coverage map orders its columns by
// action (features of no action last), names each group by the action's
// label, and bins only within an action: a bin never mixes two actions.
func TestCoverageLayoutGroupsByAction(t *testing.T) {
	cov := &Coverage{
		Sites:         []string{"x", "y"},
		Features:      []string{"s0:a0", "s0:a1", "s1:a0", "s1:a1", "s2", "s2:a0"},
		Counts:        [][]float64{{1, 2, 3, 4, 5, 6}, {0, 7, 8, 9, 10, 11}},
		FeatureAction: []int{0, 1, 0, 1, -1, 0},
		Actions:       []string{"metformin"},
	}
	labels, counts, bin, groups := coverageLayout(cov)
	if bin != 1 {
		t.Fatalf("bin %d, want 1", bin)
	}
	if want := []string{"s0:a0", "s1:a0", "s2:a0", "s0:a1", "s1:a1", "s2"}; !slices.Equal(labels, want) {
		t.Errorf("columns %v, want %v", labels, want)
	}
	if want := []float64{0, 8, 11, 7, 9, 10}; !slices.Equal(counts[1], want) {
		t.Errorf("site y's counts %v, want %v", counts[1], want)
	}
	wantGroups := []columnGroup{{"metformin", 0, 3}, {"a1", 3, 5}, {"no action", 5, 6}}
	if !slices.Equal(groups, wantGroups) {
		t.Errorf("groups %v, want %v", groups, wantGroups)
	}
	// 1300 features of two actions, in bins of 3: action 0's 650 features
	// make 217 bins, the last holding 2, and action 1 starts a bin of its own.
	big := &Coverage{Sites: []string{"x"}, Counts: [][]float64{make([]float64, 1300)}}
	for j := 0; j < 1300; j++ {
		big.Features = append(big.Features, "f")
		big.FeatureAction = append(big.FeatureAction, j%2)
		big.Counts[0][j] = float64(1 + j%2) // action 0: 1, action 1: 2
	}
	_, counts, bin, groups = coverageLayout(big)
	if bin != 3 || len(groups) != 2 || groups[0].End != 217 || groups[1].End != 434 {
		t.Fatalf("binned layout: bin %d, groups %v; want bin 3, groups ending at 217 and 434", bin, groups)
	}
	for j, v := range counts[0] {
		if want := float64(1 + j/217); v != want {
			t.Fatalf("column %d holds %v, want %v: a bin mixed two actions", j, v, want)
		}
	}
	if err := Write(t.TempDir(), Input{Coverage: &Coverage{Sites: []string{"x"}, Features: []string{"f"}, Counts: [][]float64{{1}}, FeatureAction: []int{0, 1}}}); err == nil {
		t.Error("no error for feature actions of the wrong length")
	}
}

// The Delta plot's caption says what Delta is and that its rings use
// p-values adjusted over all steps and clusters by the max-statistic
// permutation test, with the number of permutations.
func TestDeltaCaption(t *testing.T) {
	rep := sampleInput().Eval
	c := deltaCaption(rep)
	for _, want := range []string{"ridge regression of the most different site", "cluster's pooled regression",
		"adjusted for all steps and clusters at once by the max-statistic method", "199 permutations", "yardstick"} {
		if !strings.Contains(c, want) {
			t.Errorf("Delta caption lacks %q: %q", want, c)
		}
	}
	untested := *rep
	untested.Delta = []eval.DeltaValue{{Step: 1, Cluster: "m", Delta: 0.1, PValue: math.NaN()}}
	if c := deltaCaption(&untested); !strings.Contains(c, "No permutation p-values") || strings.Contains(c, "Rings") {
		t.Errorf("without p-values: %q", c)
	}
}

// CPathPlot writes two panels as PNG and SVG, the same bytes twice; a
// path through c = 0 uses a linear axis, and an empty path still draws.
func TestCPathPlot(t *testing.T) {
	dir := t.TempDir()
	pts := []CPathPoint{
		{C: 1e-5, ValueEstimate: 3.1, RobustValue: 3.2, PessimisticValue: 3.1, NoEvidence: 0, Agreement: 0.05},
		{C: 1e-3, ValueEstimate: 1.4, RobustValue: 3.1, PessimisticValue: 1.4, NoEvidence: 0.2, Agreement: 0.3},
		{C: 1e-2, ValueEstimate: 0, RobustValue: 1.7, PessimisticValue: 0, NoEvidence: 1, Agreement: 1},
	}
	base := filepath.Join(dir, "p.cpath")
	if err := CPathPlot(base, pts, 5e-4, 7, nil); err != nil {
		t.Fatal(err)
	}
	exists(t, base)
	first, _ := os.ReadFile(base + ".svg")
	if err := CPathPlot(base, pts, 5e-4, 7, nil); err != nil {
		t.Fatal(err)
	}
	if second, _ := os.ReadFile(base + ".svg"); !bytes.Equal(first, second) {
		t.Error("CPathPlot is not deterministic")
	}
	if !bytes.Contains(first, []byte("chosen c = 0.0005")) || !bytes.Contains(first, []byte("over H = 7 steps")) {
		t.Error("the c-path SVG does not mark the chosen c or state the value's units")
	}
	lin := append([]CPathPoint{{C: 0, RobustValue: 3, NoEvidence: 0, Agreement: 0}}, pts...)
	for name, p := range map[string][]CPathPoint{"linear": lin, "empty": nil, "nan": {{C: 1, RobustValue: math.NaN()}}} {
		if err := CPathPlot(filepath.Join(dir, name), p, math.NaN(), 0, nil); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		exists(t, filepath.Join(dir, name))
	}
}

// wrapText keeps every line within the width unless a single word is
// wider, and loses no word.
func TestWrapText(t *testing.T) {
	measure := func(s string) vg.Length { return vg.Length(len(s)) }
	s := "the robust value can lie below every site's own value supercalifragilistic a b"
	lines := wrapText(s, 12, measure)
	for _, l := range lines {
		if measure(l) > 12 && strings.Contains(l, " ") {
			t.Errorf("line %q is wider than 12", l)
		}
	}
	if got := strings.Join(lines, " "); got != s {
		t.Errorf("rejoined %q, want %q", got, s)
	}
}
