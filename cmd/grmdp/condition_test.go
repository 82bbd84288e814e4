package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// solve --json reports, per group, the worst-conditioned step of its
// Lambda_h^g (diagnostics.condition): one entry per group of the method,
// named as the groups are, at a step in 1..H, with a condition number of
// at least 1; behaviour has no regression and no entry. (The numbers
// themselves are checked against dense references in package solve.)
func TestSolveJSONCondition(t *testing.T) {
	dir := t.TempDir()
	data, _ := simulated(t, dir, "benchmark", "--trajectories", "60,40,80", "--horizon", "4")
	for _, tc := range []struct {
		method string
		groups []string
	}{{"sitewise", []string{"1", "2", "3"}}, {"pooled", []string{"all"}}, {"pevi-min", []string{"1", "2", "3"}}, {"behaviour", nil}} {
		js := mustRun(t, "solve", "--method", tc.method, "--json", "-o", filepath.Join(dir, tc.method+".parquet"), data)
		var doc struct {
			Groups []struct {
				Name string `json:"name"`
			} `json:"groups"`
			Diagnostics struct {
				Condition []struct {
					Group string   `json:"group"`
					Step  int      `json:"step"`
					Cond  *float64 `json:"cond"`
				} `json:"condition"`
			} `json:"diagnostics"`
			Warnings []string `json:"warnings"`
		}
		if err := json.Unmarshal([]byte(js), &doc); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, c := range doc.Diagnostics.Condition {
			got = append(got, c.Group)
			if c.Step < 1 || c.Step > 4 || c.Cond == nil || !(*c.Cond >= 1) {
				t.Errorf("%s: condition entry %+v", tc.method, c)
			}
		}
		if strings.Join(got, ",") != strings.Join(tc.groups, ",") {
			t.Errorf("%s: condition for groups %v, want %v", tc.method, got, tc.groups)
		}
		for _, w := range doc.Warnings {
			if strings.Contains(w, "ill-conditioned") {
				t.Errorf("%s: warns on well-conditioned data: %s", tc.method, w)
			}
		}
	}
}
