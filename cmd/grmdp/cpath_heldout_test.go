package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
)

// solve --c auto --lambda auto --c-path writes the held-out scores beside
// the path: each row of the CSV holds the score, worst-site value and
// interval of the candidate at its c and the chosen lambda, as the
// selection records them, and at most one row is the chosen candidate.
func TestCPathCSVHeldOut(t *testing.T) {
	dir := t.TempDir()
	data, _ := simulated(t, dir, "benchmark", "--trajectories", "40,30,50", "--horizon", "3")
	pol := filepath.Join(dir, "p.parquet")
	out := mustRun(t, "solve", "--c", "auto", "--lambda", "auto", "--c-path", "1e-5:5e-4:2", "--folds", "3", "--json", "-o", pol, data)
	var doc struct {
		Selection struct {
			Chosen struct {
				C, Lambda *float64
			} `json:"chosen"`
			Candidates []struct {
				C         *float64 `json:"c"`
				Lambda    *float64 `json:"lambda"`
				Score     *float64 `json:"score"`
				WorstSite string   `json:"worst_site"`
				Sites     []struct {
					Site   string   `json:"site"`
					Value  *float64 `json:"value"`
					CILow  *float64 `json:"ci_low"`
					CIHigh *float64 `json:"ci_high"`
				} `json:"sites"`
			} `json:"candidates"`
		} `json:"selection"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(dir, "p.cpath.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("p.cpath.csv: %q", recs)
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	for _, h := range []string{"heldout_score", "heldout_value", "heldout_ci_low", "heldout_ci_high", "heldout_worst_site", "fallback_score", "chosen"} {
		if _, ok := col[h]; !ok {
			t.Fatalf("the c-path CSV lacks %s: header %q", h, recs[0])
		}
	}
	// The path is solved at the chosen lambda, the base lambda 1 when the
	// fallback was chosen.
	lambda := 1.0
	if l := doc.Selection.Chosen.Lambda; l != nil {
		lambda = *l
	}
	num := func(x *float64) string {
		if x == nil {
			return ""
		}
		return strconv.FormatFloat(*x, 'g', -1, 64)
	}
	chosen := 0
	if len(recs) != 3 {
		t.Fatalf("%d rows, want a header and 2 values of c", len(recs))
	}
	for _, r := range recs[1:] {
		c, err := strconv.ParseFloat(r[0], 64)
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, k := range doc.Selection.Candidates {
			if k.C == nil || k.Lambda == nil || *k.C != c || *k.Lambda != lambda {
				continue
			}
			found = true
			if r[col["heldout_score"]] != num(k.Score) || r[col["heldout_worst_site"]] != k.WorstSite {
				t.Errorf("c %g: score %q at %q, want %q at %q", c, r[col["heldout_score"]], r[col["heldout_worst_site"]], num(k.Score), k.WorstSite)
			}
			for _, st := range k.Sites {
				if st.Site != k.WorstSite {
					continue
				}
				if got, want := []string{r[col["heldout_value"]], r[col["heldout_ci_low"]], r[col["heldout_ci_high"]]}, []string{num(st.Value), num(st.CILow), num(st.CIHigh)}; !slices.Equal(got, want) {
					t.Errorf("c %g: worst site's value and interval %q, want %q", c, got, want)
				}
			}
		}
		if !found {
			t.Errorf("c %g: no candidate at lambda %g in the selection", c, lambda)
		}
		if r[col["chosen"]] == "true" {
			chosen++
			if ch := doc.Selection.Chosen; ch.C == nil || *ch.C != c {
				t.Errorf("row at c %g is marked chosen; the selection chose c %v", c, num(ch.C))
			}
		}
	}
	if want := map[bool]int{true: 0, false: 1}[doc.Selection.Chosen.C == nil]; chosen != want {
		t.Errorf("%d rows marked chosen, want %d", chosen, want)
	}
}
