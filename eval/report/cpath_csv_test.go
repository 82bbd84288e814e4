package report

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// The c-path CSV has the path's columns alone without a selection record;
// with one, each row adds the held-out scores of its candidate (the same
// c, lambda and step pooling), the fallback's score and whether the
// candidate was chosen. A candidate the record lacks leaves its fields
// empty.
func TestWriteCPathHeldOut(t *testing.T) {
	dir := t.TempDir()
	pts := []CPathPoint{
		{C: 5e-5, Beta: 0.5, RobustValue: 3.1, Agreement: 0.2, Lambda: 1},
		{C: 5e-4, Beta: 5, RobustValue: 3.0, NoEvidence: 0.3, Agreement: 0.5, Lambda: 1},
		{C: 5e-3, Beta: 50, NoEvidence: 1, Agreement: 1, Lambda: 1},
	}
	sel := json.RawMessage(`{"folds": 3, "seed": 1, "level": 0.9, "chosen": {"c": 5e-5, "lambda": 1}, "candidates": [
		{"c": null, "lambda": null, "score": 2, "worst_site": "a", "sites": [{"site": "a", "value": 2.2, "ci_low": 2, "ci_high": 2.4}]},
		{"c": 5e-5, "lambda": 0.1, "score": 9, "worst_site": "a", "sites": [{"site": "a", "value": 9, "ci_low": 8, "ci_high": 10}]},
		{"c": 5e-5, "lambda": 1, "score": 2.3, "worst_site": "b, north", "sites": [{"site": "a", "value": 3, "ci_low": 2.8, "ci_high": 3.2},
			{"site": "b, north", "value": 2.5, "ci_low": 2.3, "ci_high": 2.7}]},
		{"c": 5e-4, "lambda": 1, "score": null, "worst_site": "a", "sites": [{"site": "a", "value": 2.1, "ci_low": null, "ci_high": null}]}]}`)
	read := func(name string) [][]string {
		t.Helper()
		f, err := os.Open(filepath.Join(dir, name+".cpath.csv"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		recs, err := csv.NewReader(f).ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		return recs
	}
	if err := WriteCPath(filepath.Join(dir, "plain"), pts, 5e-4, 7, nil); err != nil {
		t.Fatal(err)
	}
	want := [][]string{
		{"c", "beta", "no_evidence_share", "value_estimate", "robust_fqe", "pessimistic_value", "behaviour_agreement"},
		{"5e-05", "0.5", "0", "0", "3.1", "0", "0.2"},
		{"0.0005", "5", "0.3", "0", "3", "0", "0.5"},
		{"0.005", "50", "1", "0", "0", "0", "1"},
	}
	if got := read("plain"); !reflect.DeepEqual(got, want) {
		t.Errorf("without a selection:\n got %q\nwant %q", got, want)
	}
	if err := WriteCPath(filepath.Join(dir, "sel"), pts, 5e-4, 7, sel); err != nil {
		t.Fatal(err)
	}
	held := [][]string{
		{"heldout_score", "heldout_value", "heldout_ci_low", "heldout_ci_high", "heldout_worst_site", "fallback_score", "chosen"},
		{"2.3", "2.5", "2.3", "2.7", "b, north", "2", "true"},
		{"", "2.1", "", "", "a", "2", "false"},
		{"", "", "", "", "", "2", "false"},
	}
	got := read("sel")
	for i := range want {
		if w := append(append([]string{}, want[i]...), held[i]...); !reflect.DeepEqual(got[i], w) {
			t.Errorf("with a selection, row %d:\n got %q\nwant %q", i, got[i], w)
		}
	}
}
