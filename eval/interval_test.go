package eval

import (
	"context"
	"math"
	"strings"
	"testing"

	"github.com/grmdp/grmdp/solve"
)

// The basic bootstrap reflects the replicates' quantiles about the
// estimate: with replicates 0..100 (quantiles 2.5 and 97.5 at level 0.95)
// and estimate 60, the interval is [120 - 97.5, 120 - 2.5] and the bias
// mean - estimate = 50 - 60.
func TestBasicCI(t *testing.T) {
	x := make([]float64, 101)
	for i := range x {
		x[i] = float64(i)
	}
	x = append(x, math.NaN())
	lo, hi, bias := basicCI(60, x, 0.95)
	if !near(lo, 22.5, 1e-12) || !near(hi, 117.5, 1e-12) || !near(bias, -10, 1e-12) {
		t.Errorf("got [%v, %v] bias %v, want [22.5, 117.5] bias -10", lo, hi, bias)
	}
	if lo, hi, bias := basicCI(1, []float64{math.NaN()}, 0.95); !math.IsNaN(lo) || !math.IsNaN(hi) || !math.IsNaN(bias) {
		t.Errorf("all-NaN replicates: got %v %v %v, want NaN", lo, hi, bias)
	}
	// The bounds' interval never lies inside the bounds.
	if got := boundsCILow(3, []float64{4, 5, 6}, 0.95); got != 3 {
		t.Errorf("boundsCILow: got %v, want the bound 3", got)
	}
	if got := boundsCIHigh(3, []float64{1, 2, 10}, 0.95); !near(got, 9.6, 1e-12) {
		t.Errorf("boundsCIHigh: got %v, want the 97.5%% quantile 9.6", got)
	}
}

// An interval that misses its estimate, and a bias above half the width,
// each give a warning; a sound interval none.
func TestIntervalWarnings(t *testing.T) {
	if w := IntervalWarnings("v", 1, 0.5, 1.5, 0.1); len(w) != 0 {
		t.Errorf("sound interval: got warnings %q", w)
	}
	if w := IntervalWarnings("v", 2, 0.5, 1.5, 0.1); len(w) != 1 || !contains(w[0], "does not contain") {
		t.Errorf("missed estimate: got %q", w)
	}
	if w := IntervalWarnings("v", 1, 0.5, 1.5, -0.6); len(w) != 1 || !contains(w[0], "bias") {
		t.Errorf("large bias: got %q", w)
	}
	if w := IntervalWarnings("v", 1, math.NaN(), math.NaN(), math.NaN()); len(w) != 0 {
		t.Errorf("no bootstrap: got %q", w)
	}
}

// ObservedCare gives the same values and intervals as FromData's observed
// care for the same seed and replicates.
func TestObservedCareMatchesFromData(t *testing.T) {
	m := testMaps()[0]
	tb := randomTable(t, m, 2, 3, []int{30, 40}, 5)
	s := solve.DefaultSettings
	pol := solvePolicy(t, tb, m, s, solve.Problem{Method: solve.Sitewise})
	rep, err := FromData(context.Background(), newSolver(t, tb, m, s), pol, s, Options{Bootstrap: 30, Seed: 9})
	if err != nil {
		t.Fatal(err)
	}
	got := ObservedCare(tb, 30, 9, 0.95)
	for k := range got {
		if got[k] != rep.Observed[k] {
			t.Errorf("site %d: ObservedCare %+v, FromData %+v", k, got[k], rep.Observed[k])
		}
	}
}

// An identified value whose bounds are wider than its interval is warned
// about (the cells without data could move it beyond the interval); with
// bounds narrower than the interval, or for a map without bounds, it is
// not; a value not identified gets the not-identified warning instead.
func TestBoundsWiderThanIntervalWarns(t *testing.T) {
	nan := math.NaN()
	mk := func(lower, upper float64, hasBounds bool) *Report {
		return &Report{H: 20, HasBounds: hasBounds, PolicyValue: 5, ValueCILow: 4.8, ValueCIHigh: 5.4, ValueBias: 0,
			Lower: lower, Upper: upper, BoundsCILow: lower - 0.1, BoundsCIHigh: upper + 0.1}
	}
	count := func(r *Report) int {
		n := 0
		for _, w := range r.Warnings {
			if strings.Contains(w, "are wider than its interval") {
				n++
			}
		}
		return n
	}
	for _, c := range []struct {
		name         string
		lower, upper float64
		bounds       bool
		want         int
	}{
		{"identified, bounds 1.5 wide against an interval 0.6 wide", 5, 6.5, true, 1},
		{"identified, bounds 0.2 wide", 5, 5.2, true, 0},
		{"not identified", 0, 12, true, 0},
		{"no bounds", nan, nan, false, 0},
	} {
		r := mk(c.lower, c.upper, c.bounds)
		r.flag()
		if got := count(r); got != c.want {
			t.Errorf("%s: %d bounds warnings, want %d (%v)", c.name, got, c.want, r.Warnings)
		}
		if got := IntervalWarned(r.PolicyValue, r.ValueCILow, r.ValueCIHigh, r.ValueBias, c.lower, c.upper); got != (c.want > 0 || (c.bounds && c.upper-c.lower > 0.6)) {
			t.Errorf("%s: IntervalWarned %v", c.name, got)
		}
	}
}
