package eval

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// TestEstimatesJSON pins the JSON of the estimates and the worst site:
// NaN as null, the headline's fields beside the estimator's name.
func TestEstimatesJSON(t *testing.T) {
	nan := math.NaN()
	w := WorstSite{Estimator: FQE, WorstEstimate: WorstEstimate{Site: "a", Estimate: Estimate{1, 0.5, 1.5}},
		Estimates: map[string]WorstEstimate{FQE: {Site: "a", Estimate: Estimate{1, 0.5, 1.5}}, PDWIS: {Estimate: Estimate{nan, nan, nan}}}}
	got, err := json.Marshal(w)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"site":"a","value":1,"ci_low":0.5,"ci_high":1.5,"estimator":"fqe","estimates":{"fqe":{"site":"a","value":1,"ci_low":0.5,"ci_high":1.5},` +
		`"pdwis":{"site":"","value":null,"ci_low":null,"ci_high":null}}}`
	if string(got) != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

// TestWorstOfHandWorked pins the worst site's interval on three sites'
// intervals worked by hand: the value and site are the smallest
// estimate's, the low end the smallest low end (site c's, not the worst
// site's) and the high end the smallest high end (site b's).
func TestWorstOfHandWorked(t *testing.T) {
	nan := math.NaN()
	sites := []Estimate{
		{Value: 0.50, CILow: 0.40, CIHigh: 0.60}, // a
		{Value: 0.45, CILow: 0.42, CIHigh: 0.48}, // b: the smallest estimate, the narrowest interval
		{Value: 0.55, CILow: 0.30, CIHigh: 0.80}, // c: the widest
	}
	w, at := WorstOf(sites)
	if at != 1 || w != (Estimate{Value: 0.45, CILow: 0.30, CIHigh: 0.48}) {
		t.Errorf("got %+v at %d, want {0.45 0.30 0.48} at 1", w, at)
	}
	// A site without a value is left out; a site with a value and no
	// interval leaves the minimum without one.
	w, at = WorstOf(append([]Estimate{{nan, nan, nan}}, sites...))
	if at != 2 || w != (Estimate{Value: 0.45, CILow: 0.30, CIHigh: 0.48}) {
		t.Errorf("with a NaN site: got %+v at %d, want {0.45 0.30 0.48} at 2", w, at)
	}
	w, at = WorstOf([]Estimate{{0.5, nan, nan}, {0.4, 0.3, 0.5}})
	if at != 1 || w.Value != 0.4 || !math.IsNaN(w.CILow) || !math.IsNaN(w.CIHigh) {
		t.Errorf("with a site without an interval: got %+v at %d, want {0.4 NaN NaN} at 1", w, at)
	}
	w, at = WorstOf([]Estimate{{nan, nan, nan}})
	if at != -1 || !math.IsNaN(w.Value) || !math.IsNaN(w.CILow) || !math.IsNaN(w.CIHigh) {
		t.Errorf("without values: got %+v at %d, want NaN at -1", w, at)
	}
}

// TestWorstOfCoversMin checks the intersection-bounds property on random
// sites: whatever values V_k lie inside every site's interval, the worst
// site's interval contains min_k V_k, and contains the smallest estimate.
func TestWorstOfCoversMin(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 10000; trial++ {
		K := 1 + rng.IntN(6)
		sites, v := make([]Estimate, K), make([]float64, K)
		for k := range sites {
			lo := rng.NormFloat64()
			hi := lo + rng.ExpFloat64()
			sites[k] = Estimate{Value: lo + rng.Float64()*(hi-lo), CILow: lo, CIHigh: hi}
			// A true value inside the site's interval, its ends included.
			switch rng.IntN(4) {
			case 0:
				v[k] = lo
			case 1:
				v[k] = hi
			default:
				v[k] = lo + rng.Float64()*(hi-lo)
			}
		}
		w, at := WorstOf(sites)
		m := slices.Min(v)
		if !(w.CILow <= m && m <= w.CIHigh) || !(w.CILow <= w.Value && w.Value <= w.CIHigh) {
			t.Fatalf("sites %+v, values %v: worst %+v does not contain min %v or its estimate", sites, v, w, m)
		}
		if at < 0 || sites[at].Value != w.Value {
			t.Fatalf("sites %+v: worst site %d, value %v", sites, at, w.Value)
		}
	}
}
