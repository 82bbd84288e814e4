package parquetio_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/traj"
)

// readAll reads a whole Parquet file as one record per column, as Go values.
func readAll(t testing.TB, path string) (*arrow.Schema, map[string][]any) {
	t.Helper()
	fr, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	defer fr.Close()
	ar, err := pqarrow.NewFileReader(fr, pqarrow.ArrowReadProperties{}, memory.DefaultAllocator)
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := ar.ReadTable(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tbl.Release()
	out := map[string][]any{}
	for i := range int(tbl.NumCols()) {
		c := tbl.Column(i)
		var vals []any
		for _, ch := range c.Data().Chunks() {
			for j := range ch.Len() {
				if ch.IsNull(j) {
					vals = append(vals, nil)
					continue
				}
				vals = append(vals, ch.GetOneForMarshal(j))
			}
		}
		out[c.Name()] = vals
	}
	return tbl.Schema(), out
}

func annotateFn(steps []int64, state []float64, w int, action []int32, q []float64, evidence []bool) error {
	for i, h := range steps {
		action[i] = int32(h % 2)
		q[i] = state[i*w] / 10
		evidence[i] = h != 2
	}
	return nil
}

func TestAnnotate(t *testing.T) {
	r := sampleRows(anyInts(1, 2), 10, 4, 2)
	n := len(r.step)
	note := make([]any, n)
	for i := range note {
		if i%3 != 0 {
			note[i] = "n" + string(rune('a'+i%26))
		}
	}
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.parquet"), filepath.Join(dir, "b.parquet")
	mk := func(path string, lo, hi int) {
		rr := r.slice(lo, hi)
		cs := rr.columns(i64, str, i32, i32, f64, f64, "s1", "s2")
		cs[1].vals = anyStrings("t%v", rr.traj...)
		cs = append(cs, ncol("note", str, note[lo:hi]...))
		writeParquet(t, path, 7, cs...)
	}
	mk(a, 0, n/3)
	mk(b, n/3, n)
	opts := stateOpts("s1", "s2")
	var outs [][]byte
	for _, w := range []int{1, 4} {
		opts.Workers = w
		out := filepath.Join(dir, "out.parquet")
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		if err := parquetio.AnnotateWith(context.Background(), []string{a, b}, out, opts, nil, annotateFn, mem); err != nil {
			t.Fatal(err)
		}
		mem.AssertSize(t, 0)
		data, _ := os.ReadFile(out)
		outs = append(outs, data)
		sc, got := readAll(t, out)
		wantCols := []string{"site", "traj", "step", "action", "reward", "s1", "s2", "note", "recommended_action", "recommended_q", "evidence"}
		if sc.NumFields() != len(wantCols) {
			t.Fatalf("columns: got %v, want %v", sc, wantCols)
		}
		for i, name := range wantCols {
			if sc.Field(i).Name != name {
				t.Errorf("column %d: got %s, want %s", i, sc.Field(i).Name, name)
			}
		}
		for i := range n {
			if got["note"][i] != note[i] {
				t.Fatalf("row %d: note %v, want %v", i, got["note"][i], note[i])
			}
			step := int64(r.step[i].(int))
			if got["step"][i] != int32(step) || got["s1"][i] != r.state[0][i] {
				t.Fatalf("row %d: step %v s1 %v, want %v %v (input order kept)", i, got["step"][i], got["s1"][i], step, r.state[0][i])
			}
			if got["recommended_action"][i] != int32(step%2) || got["recommended_q"][i] != r.state[0][i].(float64)/10 || got["evidence"][i] != (step != 2) {
				t.Fatalf("row %d: got %v %v %v", i, got["recommended_action"][i], got["recommended_q"][i], got["evidence"][i])
			}
		}
	}
	if !bytes.Equal(outs[0], outs[1]) {
		t.Errorf("outputs with 1 and 4 workers differ")
	}

	// String labels.
	out := filepath.Join(dir, "labels.parquet")
	if err := parquetio.Annotate(context.Background(), []string{a}, out, opts, []string{"none", "drug"}, annotateFn); err != nil {
		t.Fatal(err)
	}
	_, got := readAll(t, out)
	for i, v := range got["recommended_action"] {
		if want := []string{"none", "drug"}[r.step[i].(int)%2]; v != want {
			t.Fatalf("row %d: recommended_action %v, want %v", i, v, want)
		}
	}
}

func TestAnnotateList(t *testing.T) {
	r := sampleRows(anyInts(1), 5, 3, 2)
	phi := make([]any, len(r.step))
	for i := range phi {
		phi[i] = []any{float64(i), 1.0}
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "in.parquet")
	cs := append(r.columns(i64, i64, i32, i32, f64, f64)[2:3], col("phi", listOf(f64), phi...))
	writeParquet(t, in, 4, cs...)
	out := filepath.Join(dir, "out.parquet")
	opts := traj.Options{State: traj.StateSpec{Columns: []string{"phi"}, List: true}}
	err := parquetio.Annotate(context.Background(), []string{in}, out, opts, nil,
		func(steps []int64, state []float64, w int, action []int32, q []float64, evidence []bool) error {
			if w != 2 || len(state) != 2*len(steps) {
				return errors.New("bad width")
			}
			for i := range steps {
				q[i] = state[i*w]
			}
			return nil
		})
	if err != nil {
		t.Fatal(err)
	}
	_, got := readAll(t, out)
	for i, v := range got["recommended_q"] {
		if v != float64(i) {
			t.Fatalf("row %d: q %v, want %d", i, v, i)
		}
	}
}

func TestAnnotateErrors(t *testing.T) {
	r := sampleRows(anyInts(1, 2), 4, 3, 2)
	dir := t.TempDir()
	a := filepath.Join(dir, "a.parquet")
	writeParquet(t, a, 5, r.columns(i64, i64, i32, i32, f64, f64, "s1")...)
	b := filepath.Join(dir, "b.parquet")
	writeParquet(t, b, 5, r.columns(i64, i64, i64, i32, f64, f64, "s1")...)
	opts := stateOpts("s1")
	out := filepath.Join(dir, "out.parquet")
	run := func(paths []string, opts traj.Options, fn func([]int64, []float64, int, []int32, []float64, []bool) error) error {
		mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
		defer mem.AssertSize(t, 0)
		return parquetio.AnnotateWith(context.Background(), paths, out, opts, nil, fn, mem)
	}

	err := run([]string{a, b}, opts, annotateFn)
	wantErr(t, err, parquetio.ErrSchema, b, a, `column "step"`, "has type int64 here but int32")

	err = run([]string{a}, stateOpts("s9"), annotateFn)
	wantErr(t, err, parquetio.ErrSchema, a, `column "s9"`, "missing")

	nan := r
	nan.state = [][]any{append([]any(nil), r.state[0]...)}
	nan.state[0][6] = math.NaN()
	c := filepath.Join(dir, "c.parquet")
	writeParquet(t, c, 5, nan.columns(i64, i64, i32, i32, f64, f64, "s1")...)
	err = run([]string{c}, opts, annotateFn)
	wantErr(t, err, parquetio.ErrBadData, c, "row group 1, row 6", `column "s1"`, "NaN")

	nul := filepath.Join(dir, "null.parquet")
	steps := append([]any(nil), r.step...)
	steps[3] = nil
	cs := r.columns(i64, i64, i32, i32, f64, f64, "s1")
	cs[2] = ncol("step", i32, steps...)
	writeParquet(t, nul, 5, cs...)
	err = run([]string{nul}, opts, annotateFn)
	wantErr(t, err, parquetio.ErrBadData, nul, "row group 0, row 3", `column "step"`, "null")

	boom := errors.New("boom")
	err = run([]string{a}, opts, func([]int64, []float64, int, []int32, []float64, []bool) error { return boom })
	wantErr(t, err, boom, a, "row group 0")

	err = run([]string{a}, opts, func(s []int64, _ []float64, _ int, act []int32, _ []float64, _ []bool) error {
		act[2] = -1
		return nil
	})
	wantErr(t, err, nil, "recommended action -1")

	err = parquetio.Annotate(context.Background(), []string{a}, a, opts, nil, annotateFn)
	wantErr(t, err, nil, a, "is also an input")

	err = parquetio.Annotate(context.Background(), []string{a}, filepath.Join(dir, "no", "out.parquet"), opts, nil, annotateFn)
	wantErr(t, err, os.ErrNotExist, filepath.Join(dir, "no"), "does not exist")

	clash := filepath.Join(dir, "clash.parquet")
	writeParquet(t, clash, 0, append(r.columns(i64, i64, i32, i32, f64, f64, "s1"), col("evidence", f64, r.reward...))...)
	err = run([]string{clash}, opts, annotateFn)
	wantErr(t, err, parquetio.ErrSchema, clash, `column "evidence"`, "already has this column")

	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("failed runs left %s behind", out)
	}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if filepath.Ext(e.Name()) != ".parquet" {
			t.Errorf("leftover file %s", e.Name())
		}
	}
}

func TestAnnotateHive(t *testing.T) {
	r := sampleRows(anyInts(3), 3, 2, 2)
	dir := t.TempDir()
	sub := filepath.Join(dir, "site=3")
	os.MkdirAll(sub, 0o755)
	writeParquet(t, filepath.Join(sub, "p.parquet"), 0, r.columns(i64, i64, i32, i32, f64, f64, "s1")[1:]...)
	out := filepath.Join(dir, "out.parquet")
	if err := parquetio.Annotate(context.Background(), []string{dir}, out, stateOpts("s1"), nil, annotateFn); err != nil {
		t.Fatal(err)
	}
	sc, got := readAll(t, out)
	if idx := sc.FieldIndices("site"); len(idx) != 1 || sc.Field(idx[0]).Type.ID() != arrow.INT64 {
		t.Fatalf("schema %v: want an int64 site column from the folder name", sc)
	}
	for i, v := range got["site"] {
		if v != int64(3) {
			t.Fatalf("row %d: site %v, want 3", i, v)
		}
	}
	_ = array.NewInt64Builder
}

// Under a null policy Annotate keeps every row: a row with a NULL state has
// no recommendation and says why; truncate also leaves the later rows of
// its episode unscored, drop-episode every row of it; fn sees only the
// scored rows.
func TestAnnotateNulls(t *testing.T) {
	const in = "testdata/duckdb_clinical.parquet"
	for _, policy := range []traj.NullPolicy{traj.NullsTruncate, traj.NullsDropEpisode} {
		out := filepath.Join(t.TempDir(), "out.parquet")
		opts := traj.Options{Columns: traj.Columns{Site: "hospital", Traj: "patient_id", Step: "t"},
			State: traj.StateSpec{Columns: []string{"lactate", "sofa"}}, FirstStep: traj.StepsFrom0, Nulls: policy}
		scored := 0
		fn := func(steps []int64, state []float64, w int, action []int32, q []float64, evidence []bool) error {
			scored += len(steps) // one worker
			return annotateFn(steps, state, w, action, q, evidence)
		}
		opts.Workers = 1
		if err := parquetio.Annotate(context.Background(), []string{in}, out, opts, nil, fn); err != nil {
			t.Fatalf("%s: %v", policy, err)
		}
		_, cols := readAll(t, out)
		rows := len(cols["t"])
		if rows != 300 {
			t.Fatalf("%s: %d rows, want 300", policy, rows)
		}
		type ep struct{ site, traj any }
		firstNull := map[ep]int64{}
		for i := range rows {
			if cols["lactate"][i] == nil {
				k, h := ep{cols["hospital"][i], cols["patient_id"][i]}, toInt64(cols["t"][i])
				if s, ok := firstNull[k]; !ok || h < s {
					firstNull[k] = h
				}
			}
		}
		unscored := 0
		for i := range rows {
			s, cut := firstNull[ep{cols["hospital"][i], cols["patient_id"][i]}]
			want := cut && (policy == traj.NullsDropEpisode || toInt64(cols["t"][i]) >= s)
			note := cols[parquetio.ColRecommendationNote][i]
			if got := note != nil; got != want {
				t.Fatalf("%s: row %d: note %v, want one: %v", policy, i, note, want)
			}
			if !want {
				continue
			}
			unscored++
			if cols[parquetio.ColRecommendedAction][i] != nil || cols[parquetio.ColRecommendedQ][i] != nil || cols[parquetio.ColEvidence][i] != false {
				t.Errorf("%s: row %d has a recommendation", policy, i)
			}
			if cols["lactate"][i] == nil && note != "null state column lactate" {
				t.Errorf("%s: row %d: note %v", policy, i, note)
			}
		}
		if len(firstNull) == 0 || scored+unscored != rows {
			t.Errorf("%s: %d episodes with a NULL, %d scored + %d unscored rows, want %d", policy, len(firstNull), scored, unscored, rows)
		}
	}
}

func toInt64(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case int32:
		return int64(x)
	}
	panic("not an integer")
}
