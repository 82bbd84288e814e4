package parquetio_test

import (
	"fmt"
	"testing"

	"github.com/grmdp/grmdp/traj"
)

// duckdbClinicalRows recomputes testdata/duckdb_clinical.parquet (see
// testdata/duckdb_clinical.cjs) from its formulas, with steps numbered from
// 1 and, for the NULL lactate values, the rows an episode keeps under
// --nulls truncate: those before its first NULL.
func duckdbClinicalRows() (r rows, nulls map[string]traj.NullCount) {
	r.state = make([][]any, 3)
	nulls = map[string]traj.NullCount{}
	treatments := []string{"fluids", "pressors", "both"}
	for sid, hosp := range []string{"general", "mercy", "st-luke"} {
		for p := range 40 {
			n := 1 + (p+sid)%4
			kept := 0
			for t := range n {
				if (p*11+t*5+sid)%17 == 3 {
					break
				}
				kept++
				r.site = append(r.site, hosp)
				r.traj = append(r.traj, fmt.Sprintf("P%05d", sid*1000+p))
				r.step = append(r.step, t+1)
				r.action = append(r.action, treatments[(p*7+t*3+sid)%3])
				r.reward = append(r.reward, float64((p*3+t*5+sid)%11)/10)
				r.state[0] = append(r.state[0], float64((p*37+t*53+sid*7)%900+50)/100)
				r.state[1] = append(r.state[1], float64((p*13+t*7+sid)%200)/10)
				r.state[2] = append(r.state[2], float64((p*7919+t*104729+sid)%100000)/1000)
			}
			if kept < n {
				c := nulls[hosp]
				c.Site = hosp
				c.Rows += n - kept
				c.Episodes++
				if kept > 0 {
					c.Truncated++
				}
				nulls[hosp] = c
			}
		}
	}
	return r, nulls
}

// TestReadDuckDBClinical reads a file DuckDB wrote with the types of a
// hospital export: string sites, patient ids and treatment labels, a time
// column from 0, DECIMAL(6,2) (INT32), DECIMAL(12,1) (INT64) and
// DECIMAL(20,3) (FIXED_LEN_BYTE_ARRAY) measurements, NULLs in lactate. With
// the column names given, steps detected as numbered from 0 and --nulls
// truncate, it must read as the table recomputed from the generator's
// formulas, each decimal the float64 nearest it, with the null counts per
// site.
func TestReadDuckDBClinical(t *testing.T) {
	const path = "testdata/duckdb_clinical.parquet"
	r, nulls := duckdbClinicalRows()
	opts := stateOpts("lactate", "sofa", "weight")
	opts.Columns = traj.Columns{Site: "hospital", Traj: "patient_id", Step: "t", Action: "treatment"}
	opts.FirstStep, opts.Nulls = traj.StepsDetect, traj.NullsTruncate
	got, err := readChecked(t, []string{path}, opts)
	if err != nil {
		t.Fatal(err)
	}
	equalTables(t, bare(got), expected(t, r, opts))
	if got.ZeroStepFile != path {
		t.Errorf("ZeroStepFile %q, want %q", got.ZeroStepFile, path)
	}
	if len(got.Nulls) != len(nulls) {
		t.Fatalf("null counts %+v, want %+v", got.Nulls, nulls)
	}
	for _, c := range got.Nulls {
		if c != nulls[c.Site] {
			t.Errorf("null counts of %s: %+v, want %+v", c.Site, c, nulls[c.Site])
		}
	}
}
