package parquetio_test

import (
	"testing"

	"github.com/grmdp/grmdp/traj"
)

// duckdbRows recomputes testdata/duckdb_trajectories.parquet (see
// testdata/duckdb_gen.cjs) from its formulas, in a different row order.
func duckdbRows() (r rows, phi [][]float64) {
	r.state = make([][]any, 3)
	for sid, site := range []string{"north", "south", "east"} {
		for traj := 1; traj <= 400; traj++ {
			for step := 1; step <= 1+(traj+sid)%5; step++ {
				r.site = append(r.site, site)
				r.traj = append(r.traj, traj)
				r.step = append(r.step, step)
				r.action = append(r.action, (traj*7+step*3+sid)%2)
				r.reward = append(r.reward, float64((traj*13+step*7+sid*5)%11)/10.0)
				r.state[0] = append(r.state[0], float64(1+(traj+step)%4))
				r.state[1] = append(r.state[1], float64((traj*step)%3))
				r.state[2] = append(r.state[2], float64((traj+2*step+sid)%5)/4.0)
				x, y := float64((traj+step)%5)/4.0, float64((traj*step)%3)/2.0
				phi = append(phi, []float64{x, 1 - x, y, 1 - y})
			}
		}
	}
	return r, phi
}

// TestReadDuckDB reads a file DuckDB wrote: every column optional
// (nullable) without nulls, a DOUBLE[4] column as list<double>, shuffled
// rows over two row groups.
func TestReadDuckDB(t *testing.T) {
	const path = "testdata/duckdb_trajectories.parquet"
	r, phi := duckdbRows()
	opts := stateOpts("s1", "s2", "s3")
	got, err := readChecked(t, []string{path}, opts)
	if err != nil {
		t.Fatal(err)
	}
	equalTables(t, got, expected(t, r, opts))
	if got.Rows != 3600 || len(got.Sources) != 1 || got.Sources[0].Rows != 3600 {
		t.Errorf("rows: got %d, sources %+v, want 3600", got.Rows, got.Sources)
	}

	lopts := traj.Options{State: traj.StateSpec{Columns: []string{"phi"}, List: true, D: 2}}
	lt, err := readChecked(t, []string{path}, lopts)
	if err != nil {
		t.Fatal(err)
	}
	if lt.W != 4 || lt.A != 2 {
		t.Fatalf("list state: got W=%d A=%d, want W=4 A=2", lt.W, lt.A)
	}
	// Check phi row by row through the (site, traj, step) of each row.
	type key struct{ site, traj, step int }
	want := map[key][]float64{}
	sites := map[string]int{}
	for i, s := range got.Sites {
		sites[s] = i
	}
	for i := range r.step {
		want[key{sites[r.site[i].(string)], r.traj[i].(int), r.step[i].(int)}] = phi[i]
	}
	// Trajectory ordinals follow (site, traj key): recover each ordinal's
	// traj key from the scalar table, whose rows are the same.
	trajKey := map[int32]int{}
	ord := int32(0)
	for k := range got.Sites {
		for traj := 1; traj <= 400; traj++ {
			if _, ok := want[key{k, traj, 1}]; ok {
				trajKey[ord] = traj
				ord++
			}
		}
	}
	for h := range lt.Steps {
		st := &lt.Steps[h]
		for i := range st.Len() {
			k := key{st.Site(i), trajKey[st.Traj[i]], h + 1}
			w, ok := want[k]
			if !ok {
				t.Fatalf("step %d row %d: no such row %+v in the source", h+1, i, k)
			}
			for j, v := range st.State[i*4 : i*4+4] {
				if v != w[j] {
					t.Fatalf("step %d row %d %+v: phi %v, want %v", h+1, i, k, st.State[i*4:i*4+4], w)
				}
			}
		}
	}
}
