package experiment

import (
	"math"
	"testing"

	"gonum.org/v1/gonum/floats/scalar"
)

func near(got, want, tol float64) bool {
	if math.IsNaN(want) {
		return math.IsNaN(got)
	}
	return scalar.EqualWithinAbsOrRel(got, want, tol, tol)
}

func TestTQuantile(t *testing.T) {
	// Two-sided 95% critical values from standard t tables.
	for _, c := range []struct{ df, want float64 }{
		{1, 12.706205},
		{2, 4.302653},
		{4, 2.776445},
		{10, 2.228139},
		{49, 2.009575},
		{1e9, 1.959964},
		{0, math.NaN()},
	} {
		if got := tQuantile(0.975, c.df); !near(got, c.want, 1e-6) {
			t.Errorf("tQuantile(0.975, %g) = %.7g, want %.7g", c.df, got, c.want)
		}
	}
}

func TestMeanCI(t *testing.T) {
	for _, c := range []struct {
		name                  string
		x                     []float64
		mean, lo, hi, sd, med float64
	}{
		// mean 3, sd sqrt(2.5), se sqrt(0.5), t_{0.975,4} = 2.776445:
		// half-width 1.963243.
		{"1..5", []float64{1, 2, 3, 4, 5}, 3, 1.036757, 4.963243, math.Sqrt(2.5), 3},
		// mean 2, sd sqrt(2), se 1, t_{0.975,1} = 12.706205.
		{"two values", []float64{3, 1}, 2, 2 - 12.706205, 2 + 12.706205, math.Sqrt(2), 2},
		{"one value", []float64{7}, 7, math.NaN(), math.NaN(), math.NaN(), 7},
		{"constant", []float64{0.5, 0.5, 0.5, 0.5}, 0.5, 0.5, 0.5, 0, 0.5},
		{"empty", nil, math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN()},
	} {
		t.Run(c.name, func(t *testing.T) {
			iv := MeanCI(c.x, 0.95)
			for _, f := range []struct {
				what      string
				got, want float64
			}{{"mean", iv.Mean, c.mean}, {"low", iv.Low, c.lo}, {"high", iv.High, c.hi}, {"sd", iv.SD, c.sd}, {"median", iv.Median, c.med}} {
				if !near(f.got, f.want, 1e-6) {
					t.Errorf("%s = %.7g, want %.7g", f.what, f.got, f.want)
				}
			}
		})
	}
}

func TestOLS(t *testing.T) {
	// By hand: xbar = 2.5, ybar = 4, Sxx = 5, Sxy = 7, so slope 1.4 and
	// intercept 0.5; residuals 0.1, -0.3, 0.3, -0.1, SSE = 0.2, SST = 10,
	// R^2 = 0.98; se(slope) = sqrt(0.2/2/5) = sqrt(0.02); t_{0.975,2} =
	// 4.302653, half-width 0.6084870.
	l := OLS([]float64{1, 2, 3, 4}, []float64{2, 3, 5, 6}, 0.95)
	for _, f := range []struct {
		what      string
		got, want float64
	}{
		{"slope", l.Slope, 1.4},
		{"intercept", l.Intercept, 0.5},
		{"r2", l.R2, 0.98},
		{"se", l.SE, math.Sqrt(0.02)},
		{"low", l.Low, 1.4 - 0.6084870},
		{"high", l.High, 1.4 + 0.6084870},
	} {
		if !near(f.got, f.want, 1e-6) {
			t.Errorf("%s = %.7g, want %.7g", f.what, f.got, f.want)
		}
	}
	if l.N != 4 {
		t.Errorf("N = %d, want 4", l.N)
	}

	two := OLS([]float64{1, 2}, []float64{1, 3}, 0.95)
	if !near(two.Slope, 2, 1e-12) || !math.IsNaN(two.Low) || !math.IsNaN(two.High) {
		t.Errorf("two points: slope %g [%g, %g], want 2 with no interval", two.Slope, two.Low, two.High)
	}
	flat := OLS([]float64{3, 3, 3}, []float64{1, 2, 3}, 0.95)
	if !math.IsNaN(flat.Slope) {
		t.Errorf("equal x: slope %g, want NaN", flat.Slope)
	}
}

func TestLogLog(t *testing.T) {
	// y = 3 x^-0.5 exactly, with a zero that must be skipped.
	x := []float64{10, 100, 1000, 10000, 100000}
	y := make([]float64, len(x))
	for i, v := range x {
		y[i] = 3 * math.Pow(v, -0.5)
	}
	y[4] = 0
	l, skipped := LogLog(x, y, 0.95)
	if !near(l.Slope, -0.5, 1e-12) || !near(l.Intercept, math.Log(3), 1e-12) || !near(l.R2, 1, 1e-12) {
		t.Errorf("slope %g, intercept %g, R2 %g: want -0.5, log 3, 1", l.Slope, l.Intercept, l.R2)
	}
	if l.N != 4 || len(skipped) != 1 || skipped[0] != 4 {
		t.Errorf("fitted %d points, skipped %v: want 4 and [4]", l.N, skipped)
	}

	// The paper's use: a fit on the means, where the slope's interval is
	// the OLS one in log space.
	got, _ := LogLog([]float64{math.E, math.Exp(2), math.Exp(3), math.Exp(4)}, []float64{math.Exp(2), math.Exp(3), math.Exp(5), math.Exp(6)}, 0.95)
	want := OLS([]float64{1, 2, 3, 4}, []float64{2, 3, 5, 6}, 0.95)
	if !near(got.Slope, want.Slope, 1e-12) || !near(got.Low, want.Low, 1e-12) || !near(got.R2, want.R2, 1e-12) {
		t.Errorf("log-log fit %+v, want %+v", got, want)
	}
}

func TestFitPoints(t *testing.T) {
	nmin := []int{10, 100, 1000}
	f := fitPoints(MetricSuboptimality, 1e-3, nmin, []float64{1, 0.1, 0}, []int{0, 1, 2}, "all")
	if len(f.NMin) != 2 || len(f.Skipped) != 1 || f.Skipped[0] != 1000 {
		t.Fatalf("fitted %v, skipped %v: want [10 100] and [1000]", f.NMin, f.Skipped)
	}
	if !near(float64(f.Slope), -1, 1e-12) || f.Note == "" {
		t.Errorf("slope %g, note %q: want -1 and a note on the skipped point", float64(f.Slope), f.Note)
	}
}

func TestDerive(t *testing.T) {
	seen := map[uint64]bool{}
	for r := uint64(0); r < 100; r++ {
		for _, tag := range []uint64{tagModel, tagData, tagEval} {
			s := Derive(1, r, tag)
			if s >= 1<<53 {
				t.Fatalf("Derive(1, %d, %d) = %d does not fit 53 bits", r, tag, s)
			}
			if seen[s] {
				t.Fatalf("Derive(1, %d, %d) = %d repeats", r, tag, s)
			}
			seen[s] = true
		}
	}
	if Derive(1, 2, 3) != Derive(1, 2, 3) || Derive(1, 2, 3) == Derive(2, 2, 3) || Derive(1, 2) == Derive(1, 2, 0) {
		t.Error("Derive is not a function of (seed, tags) that tells them apart")
	}
}
