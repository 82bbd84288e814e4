package main

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
)

// A policy that learned nothing says so: at the default c on the formulary
// scenario every decision takes the fallback, so solve and apply print the
// fallback line, apply --json carries the share, and --min-evidence 0.9
// makes apply exit 4 after writing its output.
func TestApplyMostlyFallback(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "f.parquet")
	mustRun(t, "simulate", "--scenario", "formulary", "--seed", "1", "-o", data)
	pol := filepath.Join(dir, "p.parquet")
	_, errOut := mustRunErr(t, "solve", "--features", "tabular", "-o", pol, data)
	const line = "the recommendations are mostly the fallback"
	if strings.Count(errOut, line) != 1 || !strings.Contains(errOut, "--c-path") || !strings.Contains(errOut, "grmdp validate") {
		t.Errorf("solve's stderr lacks one fallback line:\n%s", errOut)
	}
	out, errOut := mustRunErr(t, "apply", "--json", "--policy", pol, "-o", filepath.Join(dir, "r.parquet"), data)
	if strings.Count(errOut, line) != 1 {
		t.Errorf("apply's stderr lacks one fallback line:\n%s", errOut)
	}
	var sum struct {
		Share *float64 `json:"no_evidence_share"`
	}
	if err := json.Unmarshal([]byte(out), &sum); err != nil || sum.Share == nil || *sum.Share < 0.5 {
		t.Errorf("apply --json: no_evidence_share %v (err %v):\n%s", sum.Share, err, out)
	}
	code, _, errOut := grmdp(t, "apply", "--min-evidence", "0.9", "--policy", pol, "-o", filepath.Join(dir, "r2.parquet"), data)
	if code != exitLowEvidence || !strings.Contains(errOut, "--min-evidence") {
		t.Errorf("apply --min-evidence 0.9: exit %d, want %d:\n%s", code, exitLowEvidence, errOut)
	}
	if code, _, _ := grmdp(t, "apply", "--min-evidence", "1.5", "--policy", pol, "-o", filepath.Join(dir, "r3.parquet"), data); code != exitUsage {
		t.Errorf("apply --min-evidence 1.5: exit %d, want %d", code, exitUsage)
	}
}

// apply --nulls keeps every row of an export with NULL lactates: the rows
// it cannot score (a NULL state, or later rows of an episode truncated at
// one) have a NULL recommendation, evidence false and the reason in
// recommendation_note, and --json counts them per site.
func TestApplyNullsKeepsEveryRow(t *testing.T) {
	fixture, err := filepath.Abs(clinicalFixture)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	pol := filepath.Join(dir, "p.parquet")
	cols := []string{"--site-col", "hospital", "--traj-col", "patient_id", "--step-col", "t", "--action-col", "treatment",
		"--reward-col", "reward", "--state", "lactate,sofa", "--first-step", "0"}
	mustRun(t, append(append([]string{"solve", "--features", "binned", "--bins", "lactate:2,4", "--bins", "sofa:q3", "--nulls", "truncate", "-o", pol}, cols...), fixture)...)
	in, err := file.OpenParquetFile(fixture, false)
	if err != nil {
		t.Fatal(err)
	}
	inRows := in.NumRows()
	in.Close()
	for _, nulls := range []string{"truncate", "drop-episode"} {
		out := filepath.Join(dir, nulls+".parquet")
		stdout := mustRun(t, "apply", "--json", "--nulls", nulls, "--first-step", "0", "--policy", pol, "-o", out, fixture)
		var sum struct {
			Rows     int64 `json:"rows"`
			Unscored int64 `json:"unscored"`
			Sites    []struct {
				Unscored int64 `json:"unscored"`
			} `json:"sites"`
		}
		if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
			t.Fatal(err)
		}
		f, err := file.OpenParquetFile(out, false)
		if err != nil {
			t.Fatal(err)
		}
		fr, err := pqarrow.NewFileReader(f, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
		if err != nil {
			t.Fatal(err)
		}
		tab, err := fr.ReadTable(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
		if tab.NumRows() != inRows || sum.Rows != inRows {
			t.Errorf("--nulls %s: %d rows written, %d in the summary, want the input's %d", nulls, tab.NumRows(), sum.Rows, inRows)
		}
		col := func(name string) arrow.Array {
			idx := tab.Schema().FieldIndices(name)
			if len(idx) != 1 {
				t.Fatalf("--nulls %s: no column %s", nulls, name)
			}
			return tab.Column(idx[0]).Data().Chunk(0)
		}
		lactate, rec, q, ev, note := col("lactate"), col("recommended_action"), col("recommended_q"), col("evidence").(*array.Boolean), col("recommendation_note").(*array.String)
		var unscored, nullLactate int64
		for i := range int(tab.NumRows()) {
			if note.IsNull(i) {
				if rec.IsNull(i) || q.IsNull(i) {
					t.Fatalf("--nulls %s: row %d has no note but no recommendation", nulls, i)
				}
				continue
			}
			unscored++
			if rec.IsValid(i) || q.IsValid(i) || ev.Value(i) {
				t.Errorf("--nulls %s: row %d (%s) has a recommendation", nulls, i, note.Value(i))
			}
			if lactate.IsNull(i) {
				nullLactate++
				if note.Value(i) != "null state column lactate" {
					t.Errorf("--nulls %s: row %d with a NULL lactate has note %q", nulls, i, note.Value(i))
				}
			}
		}
		var perSite int64
		for _, s := range sum.Sites {
			perSite += s.Unscored
		}
		if nullLactate == 0 || unscored < nullLactate || sum.Unscored != unscored || perSite != unscored {
			t.Errorf("--nulls %s: %d NULL-lactate rows, %d unscored, summary %d, per site %d", nulls, nullLactate, unscored, sum.Unscored, perSite)
		}
	}
}
