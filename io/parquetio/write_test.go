package parquetio_test

import (
	"bytes"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/traj"
)

func TestWriteTrajectoriesRoundTrip(t *testing.T) {
	ints := sampleRows(anyInts(1, 2, 3), 20, 5, 3)
	strs := ints
	strs.site = anyStrings("site-%v", ints.site...)
	strs.traj = anyStrings("t%03v", ints.traj...)
	strs.action = anyStrings("act-%v", ints.action...)
	big := sampleRows(anyInts(2, 10, 30), 200, 7, 4)
	cases := []struct {
		name  string
		r     rows
		state []string
		wo    parquetio.WriteOptions
	}{
		{"int sites as strings", ints, []string{"s1", "s2"}, parquetio.WriteOptions{StateColumns: []string{"s1", "s2"}}},
		{"string labels", strs, []string{"s1", "s2"}, parquetio.WriteOptions{StateColumns: []string{"s1", "s2"}, RowGroupRows: 17}},
		{"int sites kept numeric", big, []string{"s1"}, parquetio.WriteOptions{StateColumns: []string{"s1"}, IntSites: true, RowGroupRows: 100}},
		{"no state", ints, nil, parquetio.WriteOptions{}},
		{"renamed columns", ints, []string{"s1", "s2"}, parquetio.WriteOptions{StateColumns: []string{"x", "y"},
			Columns: traj.Columns{Site: "hospital", Traj: "patient", Step: "t", Action: "a", Reward: "r"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			opts := stateOpts(c.state...)
			want := expected(t, c.r, opts)
			path := tmpPath(t, "out.parquet")
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			if err := parquetio.WriteTrajectoriesWith(path, want, c.wo, mem); err != nil {
				t.Fatal(err)
			}
			mem.AssertSize(t, 0)
			ropts := stateOpts(c.wo.StateColumns...)
			ropts.Columns = c.wo.Columns
			got, err := readChecked(t, []string{path}, ropts)
			if err != nil {
				t.Fatal(err)
			}
			equalTables(t, got, want)
		})
	}
}

func TestWriteTrajectoriesStringSites(t *testing.T) {
	// Integer sites written as strings read back in lexical order.
	r := sampleRows(anyInts(2, 10), 3, 2, 2)
	tb := expected(t, r, traj.Options{})
	path := tmpPath(t, "s.parquet")
	if err := parquetio.WriteTrajectories(path, tb, parquetio.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	got, err := readChecked(t, []string{path}, traj.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"10", "2"}; !reflect.DeepEqual(got.Sites, want) {
		t.Errorf("sites: got %v, want %v", got.Sites, want)
	}
	if tb.Sites[0] != "2" {
		t.Errorf("sites of the integer table: got %v, want 2 first", tb.Sites)
	}
}

func TestWriteTrajectoriesList(t *testing.T) {
	// A list state (the precomputed map): A = 2 actions, d = 2.
	r := sampleRows(anyInts(1, 2), 6, 3, 2)
	phi := make([]any, len(r.step))
	for i := range phi {
		x := float64(i%4) / 4
		phi[i] = []any{x, 1 - x, 0.5, 0.5}
	}
	path := tmpPath(t, "phi.parquet")
	cols := r.columns(i64, i64, i32, i32, f64, f64)
	cols = append(cols, col("phi", listOf(f64), phi...))
	writeParquet(t, path, 5, cols...)
	opts := traj.Options{State: traj.StateSpec{Columns: []string{"phi"}, List: true}}
	got, err := readChecked(t, []string{path}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if got.W != 4 {
		t.Fatalf("W: got %d, want 4", got.W)
	}
	out := tmpPath(t, "again.parquet")
	if err := parquetio.WriteTrajectories(out, got, parquetio.WriteOptions{StateColumns: []string{"phi"}, List: true}); err != nil {
		t.Fatal(err)
	}
	again, err := readChecked(t, []string{out}, opts)
	if err != nil {
		t.Fatal(err)
	}
	equalTables(t, again, got)
}

func TestWriteTrajectoriesErrors(t *testing.T) {
	r := sampleRows(anyInts(1), 3, 2, 2)
	tb := expected(t, r, stateOpts("s1"))
	dir := t.TempDir()
	err := parquetio.WriteTrajectories(filepath.Join(dir, "a.parquet"), tb, parquetio.WriteOptions{})
	wantErr(t, err, nil, "state has width 1")
	err = parquetio.WriteTrajectories(filepath.Join(dir, "missing", "a.parquet"), tb, parquetio.WriteOptions{StateColumns: []string{"s1"}})
	wantErr(t, err, os.ErrNotExist, filepath.Join(dir, "missing"), "does not exist")
	w := *tb
	w.Steps = append([]traj.Step(nil), tb.Steps...)
	w.Steps[0].Weight = make([]float64, w.Steps[0].Len())
	err = parquetio.WriteTrajectories(filepath.Join(dir, "w.parquet"), &w, parquetio.WriteOptions{StateColumns: []string{"s1"}})
	wantErr(t, err, nil, "weights")
	ents, _ := os.ReadDir(dir)
	if len(ents) != 0 {
		t.Errorf("failed writes left files behind: %v", ents)
	}
}

func TestPolicyRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var rows []parquetio.PolicyRow
	for h := int32(1); h <= 3; h++ {
		for g := int32(0); g < 2; g++ {
			r := parquetio.PolicyRow{Step: h, Group: g}
			for range 6 {
				r.W = append(r.W, rng.Float64())
				r.M = append(r.M, rng.Float64())
			}
			if g == 0 {
				r.Linv = []float64{1, 0.5, 0.25}
				r.Fallback = []int32{0, 2, 1}
			}
			rows = append(rows, r)
		}
	}
	meta := map[string]string{"method": "sitewise", "H": "3", "features": "action-block", "version": "test"}
	dir := t.TempDir()
	p1, p2 := filepath.Join(dir, "p1.parquet"), filepath.Join(dir, "p2.parquet")
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	if err := parquetio.WritePolicyWith(p1, rows, meta, mem); err != nil {
		t.Fatal(err)
	}
	if err := parquetio.WritePolicy(p2, rows, meta); err != nil {
		t.Fatal(err)
	}
	b1, _ := os.ReadFile(p1)
	b2, _ := os.ReadFile(p2)
	if !bytes.Equal(b1, b2) {
		t.Errorf("two writes of the same policy differ (%d and %d bytes)", len(b1), len(b2))
	}
	got, gotMeta, err := parquetio.ReadPolicyWith(p1, mem)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, rows) {
		t.Errorf("rows:\n got %+v\nwant %+v", got, rows)
	}
	if !reflect.DeepEqual(gotMeta, meta) {
		t.Errorf("metadata: got %v, want %v", gotMeta, meta)
	}
}

func TestReadPolicyErrors(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "policy.parquet")
	os.WriteFile(text, []byte("not parquet at all, just text\n"), 0o644)
	_, _, err := parquetio.ReadPolicy(text)
	wantErr(t, err, parquetio.ErrParquet, text, "not a parquet file")

	data := filepath.Join(dir, "data.parquet")
	writeParquet(t, data, 0, sampleRows(anyInts(1), 2, 2, 2).columns(i64, i64, i32, i32, f64, f64)...)
	_, _, err = parquetio.ReadPolicy(data)
	wantErr(t, err, parquetio.ErrSchema, data, `column "group"`, "missing", "site traj step")
	_, _, err = parquetio.ReadPolicy(filepath.Join(dir, "none.parquet"))
	wantErr(t, err, os.ErrNotExist, "none.parquet")

	wrong := filepath.Join(dir, "wrong.parquet")
	writeParquet(t, wrong, 0, col("step", i32, 1), col("group", i32, 0), col("w", f64, 1.0))
	_, _, err = parquetio.ReadPolicy(wrong)
	wantErr(t, err, parquetio.ErrSchema, wrong, `column "w"`, "has type float64")

	err = parquetio.WritePolicy(filepath.Join(dir, "nodir", "p.parquet"), nil, nil)
	wantErr(t, err, nil, "nodir", "does not exist")
	if err := parquetio.WritePolicy(filepath.Join(dir, "empty.parquet"), nil, nil); err != nil {
		t.Fatal(err)
	}
	rows, meta, err := parquetio.ReadPolicy(filepath.Join(dir, "empty.parquet"))
	if err != nil || len(rows) != 0 || len(meta) != 0 {
		t.Errorf("empty policy: got %v %v %v, want no rows, no metadata, no error", rows, meta, err)
	}
	if strings.Contains(dir, "\n") {
		t.Skip()
	}
}
