package eval

import (
	"encoding/json"
	"math"
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
