package report

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"
)

func exists(t *testing.T, base string) {
	t.Helper()
	for _, ext := range []string{".png", ".svg"} {
		st, err := os.Stat(base + ext)
		if err != nil {
			t.Fatal(err)
		}
		if st.Size() == 0 {
			t.Errorf("%s is empty", base+ext)
		}
	}
}

func TestLinePlot(t *testing.T) {
	nan := math.NaN()
	series := []Series{
		{Name: "suboptimality", X: []float64{50, 100, 500, 1000}, Y: []float64{0.4, 0.3, 0.12, 0.09},
			Lo: []float64{0.35, 0.25, 0.1, nan}, Hi: []float64{0.45, 0.35, 0.14, nan}},
		{Name: "fit: slope -0.45", X: []float64{50, 1000}, Y: []float64{0.41, 0.085}, Dashed: true},
		{Name: "value gap", X: []float64{0, 50, 100, 500, 1000}, Y: []float64{1, 0.2, -0.1, 0.05, 0}},
	}
	cases := []struct {
		name       string
		series     []Series
		logX, logY bool
	}{
		{"linear", series, false, false},
		{"logx", series, true, false},
		{"loglog", series, true, true},
		{"all dropped", []Series{{Name: "bad", X: []float64{0, -1}, Y: []float64{-1, 0}}}, true, true},
		{"single point", []Series{{Name: "one", X: []float64{3}, Y: []float64{3}}}, true, true},
		{"no series", nil, true, true},
		{"inf and nan", []Series{{X: []float64{1, 2, math.Inf(1)}, Y: []float64{nan, 2, 3}}}, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			base := filepath.Join(t.TempDir(), "plot")
			if err := LinePlot(base, "Convergence", "N_min", "mean", c.series, c.logX, c.logY); err != nil {
				t.Fatal(err)
			}
			exists(t, base)
		})
	}
}

func TestLinePlotBadSeries(t *testing.T) {
	for _, s := range []Series{
		{Name: "short", X: []float64{1, 2}, Y: []float64{1}},
		{Name: "lo only", X: []float64{1}, Y: []float64{1}, Lo: []float64{0}},
		{Name: "short hi", X: []float64{1}, Y: []float64{1}, Lo: []float64{0}, Hi: []float64{}},
	} {
		dir := t.TempDir()
		if err := LinePlot(filepath.Join(dir, "p"), "", "", "", []Series{s}, false, false); err == nil {
			t.Errorf("%s: no error", s.Name)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("%s: wrote %d files", s.Name, len(ents))
		}
	}
}

func TestBoxPlot(t *testing.T) {
	dir := t.TempDir()
	groups := []BoxGroup{
		{Name: "sitewise", Values: []float64{0.1, 0.12, 0.09, 0.3, 0.11}},
		{Name: "cluster", Values: []float64{0.05, 0.06, 0.04}},
		{Name: "pevi-min", Values: []float64{0.2}},
		{Name: "empty", Values: []float64{math.NaN()}},
	}
	base := filepath.Join(dir, "box")
	if err := BoxPlot(base, "Benchmark", "suboptimality", groups); err != nil {
		t.Fatal(err)
	}
	exists(t, base)
	first, _ := os.ReadFile(base + ".svg")
	if err := BoxPlot(base, "Benchmark", "suboptimality", groups); err != nil {
		t.Fatal(err)
	}
	second, _ := os.ReadFile(base + ".svg")
	if !bytes.Equal(first, second) {
		t.Error("BoxPlot is not deterministic")
	}
	if err := BoxPlot(filepath.Join(dir, "none"), "", "", nil); err != nil {
		t.Fatal(err)
	}
}

func TestTicks(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		n      int
	}{{1, 4, 4}, {1, 40, 8}, {0.5, 1.5, 1}, {3, 2, 0}} {
		if got := len(intTicks{}.Ticks(c.lo, c.hi)); got != c.n {
			t.Errorf("intTicks(%g, %g): got %d ticks, want %d", c.lo, c.hi, got, c.n)
		}
	}
	labelled := 0
	for _, tk := range (logTicks{}).Ticks(0.3, 0.35) {
		if tk.Label != "" {
			labelled++
		}
	}
	if labelled < 2 {
		t.Errorf("logTicks on a narrow range labels %d ticks", labelled)
	}
	if got := (logTicks{}).Ticks(0, 1); got != nil {
		t.Errorf("logTicks(0, 1): got %v, want none", got)
	}
}
