package eval

import (
	"context"
	"math"
	"testing"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/solve"
)

// A binned map's phi(s, a) is the indicator of (bin of s, a), index
// bin*A + a: with cut points 0.5, 1.5, 2.5 on integer states 0..3 it is
// the tabular map with S = 4, feature for feature. Its evaluation has
// identification bounds and the count-based support, and every number of
// the report (values, bounds, support, per site and robust, identified
// flags) is the tabular map's bit for bit on the same rows. Its support is
// also the leverage criterion's (the support a binned map had before it
// counted as an indicator map, on tables small enough to be read whole).
func TestBinnedBoundsAreTabular(t *testing.T) {
	ctx := context.Background()
	const H = 4
	tab := features.Map{Kind: features.Tabular, A: 3, S: 4, StateColumns: []string{"state"}}
	bin := features.Map{Kind: features.Binned, A: 3, StateColumns: []string{"state"}, Bins: []features.Bins{{Column: "state", Cuts: []float64{0.5, 1.5, 2.5}}}}
	tb := randomTable(t, tab, 3, H, []int{25, 8, 40}, 11)
	// The lowest action where no action has evidence: the behaviour
	// fallback is per state for a tabular map, per action for a binned one.
	s := solve.DefaultSettings
	s.Fallback = solve.FallbackLowest
	prob := solve.Problem{Method: solve.Sitewise}
	var reps []*Report
	for _, m := range []features.Map{tab, bin} {
		sv := newSolver(t, tb, m, s)
		p, err := sv.Solve(ctx, prob)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := FromData(ctx, sv, p, s, Options{})
		if err != nil {
			t.Fatal(err)
		}
		reps = append(reps, rep)
		if m.Kind == features.Binned {
			site, all, err := leverageSupport(ctx, sv, p, nil, 1)
			if err != nil {
				t.Fatal(err)
			}
			for k := range site {
				if !near(site[k], rep.Sites[k].Support, 1e-15) {
					t.Errorf("site %d: leverage support %v, count support %v", k, site[k], rep.Sites[k].Support)
				}
			}
			if !near(all, rep.Support, 1e-15) {
				t.Errorf("every site: leverage support %v, count support %v", all, rep.Support)
			}
		}
	}
	want, got := reps[0], reps[1]
	same := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) }
	if !got.HasBounds || math.IsNaN(got.Lower) || math.IsNaN(got.Upper) {
		t.Fatalf("binned map: bounds %v [%v, %v], want them computed", got.HasBounds, got.Lower, got.Upper)
	}
	if !same(want.PolicyValue, got.PolicyValue) || !same(want.PessimisticValue, got.PessimisticValue) || !same(want.Lower, got.Lower) || !same(want.Upper, got.Upper) ||
		!same(want.Support, got.Support) || want.Identified != got.Identified {
		t.Fatalf("binned %v %v [%v, %v] support %v identified %v; tabular %v %v [%v, %v] %v %v", got.PolicyValue, got.PessimisticValue, got.Lower, got.Upper, got.Support, got.Identified,
			want.PolicyValue, want.PessimisticValue, want.Lower, want.Upper, want.Support, want.Identified)
	}
	for k := range want.Sites {
		w, g := want.Sites[k], got.Sites[k]
		if !same(w.Value, g.Value) || !same(w.Lower, g.Lower) || !same(w.Upper, g.Upper) || !same(w.Support, g.Support) || w.Identified != g.Identified {
			t.Fatalf("site %d: binned %+v, tabular %+v", k, g, w)
		}
	}
	if want.Support <= 0 || want.Support >= 1 {
		t.Fatalf("support %v: want a case strictly between 0 and 1", want.Support)
	}
}
