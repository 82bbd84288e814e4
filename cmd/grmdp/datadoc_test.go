package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// clinicalComplete is clinicalFixture without the episodes that have a
// NULL lactate (written by DuckDB from it; see io/parquetio/testdata's
// README): the data apply recommends on, since apply drops no rows.
const clinicalComplete = "../../io/parquetio/testdata/duckdb_clinical_complete.parquet"

// The workflow of docs/DATA.md on the DuckDB-written hospital export
// (string hospitals and treatments, patient_id, t from 0, DECIMAL
// lactate and sofa, NULL lactates): one --config file names the columns,
// the feature map, the bins, the NULL policy, the first step and the data,
// and inspect, solve (binned and soft-binned), eval, apply and show run
// with no column flag. Each command's output is checked where it could go
// wrong: the truncated rows are the ones eval counts, apply's
// recommendations are the policy's labels and are counted per hospital
// (read from the policy's site column), and show prints the decision
// table for the binned map only.
func TestDataGuideWorkflow(t *testing.T) {
	fixture, err := filepath.Abs(clinicalFixture)
	if err != nil {
		t.Fatal(err)
	}
	complete, err := filepath.Abs(clinicalComplete)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	labels := []string{"both", "fluids", "pressors"}
	hospitals := []string{"general", "mercy", "st-luke"}
	for _, kind := range []string{"binned", "soft-binned"} {
		out := filepath.Join(dir, kind)
		cfg := filepath.Join(dir, kind+".yaml")
		writeFile(t, cfg, `data: [`+fixture+`]
site-col: hospital
traj-col: patient_id
step-col: t
action-col: treatment
reward-col: reward
state: [lactate, sofa]
features: `+kind+`
bins:
  lactate: [2, 4]
  sofa: q3
first-step: 0
bootstrap: 20
inspect:
  nulls: truncate
solve:
  nulls: truncate
  output: `+out+`/policy.parquet
eval:
  nulls: truncate
  policy: `+out+`/policy.parquet
apply:
  data: [`+complete+`]
  policy: `+out+`/policy.parquet
  output: `+out+`/recommendations.parquet
`)
		stdout, stderr := mustRunErr(t, "inspect", "--config", cfg)
		if !strings.Contains(stdout, "272 rows, 3 sites, H = 4, A = 3") {
			t.Errorf("%s: inspect's first line is not the truncated table's:\n%s", kind, stdout)
		}
		if kind == "binned" && !strings.Contains(stdout, "rows per cell (binned map)") {
			t.Errorf("inspect does not count the binned map's cells:\n%s", stdout)
		}
		// 10 + 9 + 9 rows follow a NULL lactate (duckdb_clinical.cjs's formula).
		if !strings.Contains(stderr, "site general: 10 rows removed from 6 episodes") {
			t.Errorf("%s: inspect's stderr lacks the truncation count:\n%s", kind, stderr)
		}
		mustRun(t, "solve", "--config", cfg)

		var ev struct {
			Sites []struct {
				Site  string   `json:"site"`
				Value *float64 `json:"value"`
			} `json:"sites"`
			Agreement struct {
				Rows  int `json:"rows"`
				Sites []struct {
					Site string `json:"site"`
					Rows int    `json:"rows"`
				} `json:"sites"`
			} `json:"agreement"`
		}
		if err := json.Unmarshal([]byte(mustRun(t, "eval", "--config", cfg, "--json")), &ev); err != nil {
			t.Fatalf("%s: eval --json: %v", kind, err)
		}
		var got []string
		for _, s := range ev.Sites {
			if s.Value == nil {
				t.Errorf("%s: eval has no value for site %s", kind, s.Site)
			}
			got = append(got, s.Site)
		}
		if !slices.Equal(got, hospitals) {
			t.Errorf("%s: eval's sites are %v, want %v", kind, got, hospitals)
		}
		sum := 0
		for _, s := range ev.Agreement.Sites {
			sum += s.Rows
		}
		if ev.Agreement.Rows != 272 || sum != 272 {
			t.Errorf("%s: eval's agreement counts %d rows (%d over the sites), want the 272 kept", kind, ev.Agreement.Rows, sum)
		}

		var ap struct {
			Rows        int `json:"rows"`
			Recommended []struct {
				Action string `json:"action"`
				Rows   int    `json:"rows"`
			} `json:"recommended"`
			Sites []struct {
				Site string `json:"site"`
				Rows int    `json:"rows"`
			} `json:"sites"`
		}
		if err := json.Unmarshal([]byte(mustRun(t, "apply", "--config", cfg, "--json")), &ap); err != nil {
			t.Fatalf("%s: apply --json: %v", kind, err)
		}
		total := 0
		for _, r := range ap.Recommended {
			if !slices.Contains(labels, r.Action) {
				t.Errorf("%s: apply recommends %q, not one of the policy's labels %v", kind, r.Action, labels)
			}
			total += r.Rows
		}
		if ap.Rows != 255 || total != 255 {
			t.Errorf("%s: apply annotated %d rows (%d recommended), want the complete file's 255", kind, ap.Rows, total)
		}
		got = got[:0]
		for _, s := range ap.Sites {
			got = append(got, s.Site)
		}
		if !slices.Equal(got, hospitals) {
			t.Errorf("%s: apply's per-site summary has sites %v, want %v (from the policy's site column, hospital)", kind, got, hospitals)
		}
		if _, err := os.Stat(filepath.Join(out, "recommendations.parquet")); err != nil {
			t.Errorf("%s: apply wrote no file: %v", kind, err)
		}

		show := mustRun(t, "show", filepath.Join(out, "policy.parquet"))
		hasTable := strings.Contains(show, "step 1: recommended action per state cell:")
		if hasTable != (kind == "binned") {
			t.Errorf("%s: show prints the decision table: %v, want %v:\n%s", kind, hasTable, kind == "binned", show)
		}
		if !strings.Contains(show, "step 1: w, the coefficients of Qhat, by state feature and action:") {
			t.Errorf("%s: show prints no coefficient table:\n%s", kind, show)
		}
	}
}
