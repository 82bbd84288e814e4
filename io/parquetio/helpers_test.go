package parquetio_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/decimal128"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/traj"
)

// column is a test column: values are Go ints, float64s, strings,
// []float64 (lists) or nil (null).
type column struct {
	name     string
	typ      arrow.DataType
	nullable bool
	vals     []any
}

func col(name string, typ arrow.DataType, vals ...any) column {
	return column{name: name, typ: typ, vals: vals}
}

func ncol(name string, typ arrow.DataType, vals ...any) column {
	return column{name: name, typ: typ, nullable: true, vals: vals}
}

func appendValue(t testing.TB, b array.Builder, v any) {
	t.Helper()
	if v == nil {
		b.AppendNull()
		return
	}
	switch b := b.(type) {
	case *array.Int8Builder:
		b.Append(int8(v.(int)))
	case *array.Int16Builder:
		b.Append(int16(v.(int)))
	case *array.Int32Builder:
		switch v := v.(type) {
		case int:
			b.Append(int32(v))
		case float64:
			b.Append(int32(v))
		}
	case *array.Int64Builder:
		b.Append(int64(v.(int)))
	case *array.Uint8Builder:
		b.Append(uint8(v.(int)))
	case *array.Uint16Builder:
		b.Append(uint16(v.(int)))
	case *array.Uint32Builder:
		b.Append(uint32(v.(int)))
	case *array.Uint64Builder:
		switch v := v.(type) {
		case int:
			b.Append(uint64(v))
		case uint64:
			b.Append(v)
		}
	case *array.Float32Builder:
		b.Append(float32(v.(float64)))
	case *array.Float64Builder:
		switch v := v.(type) {
		case int:
			b.Append(float64(v))
		case float64:
			b.Append(v)
		}
	case *array.StringBuilder:
		b.Append(v.(string))
	case *array.LargeStringBuilder:
		b.Append(v.(string))
	case *array.BinaryBuilder:
		b.Append([]byte(v.(string)))
	case *array.BooleanBuilder:
		b.Append(v.(bool))
	case *array.BinaryDictionaryBuilder:
		if err := b.AppendString(v.(string)); err != nil {
			t.Fatal(err)
		}
	case *array.Decimal128Builder:
		dt := b.Type().(*arrow.Decimal128Type)
		d, err := decimal128.FromString(v.(string), dt.Precision, dt.Scale)
		if err != nil {
			t.Fatal(err)
		}
		b.Append(d)
	case *array.Date32Builder:
		b.Append(arrow.Date32(v.(int)))
	case *array.ListBuilder:
		b.Append(true)
		for _, x := range v.([]any) {
			appendValue(t, b.ValueBuilder(), x)
		}
	case *array.LargeListBuilder:
		b.Append(true)
		for _, x := range v.([]any) {
			appendValue(t, b.ValueBuilder(), x)
		}
	case *array.FixedSizeListBuilder:
		b.Append(true)
		for _, x := range v.([]any) {
			appendValue(t, b.ValueBuilder(), x)
		}
	default:
		t.Fatalf("appendValue: unsupported builder %T", b)
	}
}

// writeParquet writes the columns as one Parquet file, rowGroup rows per
// row group (0: one row group).
func writeParquet(t testing.TB, path string, rowGroup int, cols ...column) {
	t.Helper()
	writeParquetWith(t, path, rowGroup, nil, cols...)
}

// writeParquetWith is writeParquet with more writer properties.
func writeParquetWith(t testing.TB, path string, rowGroup int, extra []parquet.WriterProperty, cols ...column) {
	t.Helper()
	mem := memory.NewGoAllocator()
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		fields[i] = arrow.Field{Name: c.name, Type: c.typ, Nullable: c.nullable}
	}
	sc := arrow.NewSchema(fields, nil)
	rb := array.NewRecordBuilder(mem, sc)
	defer rb.Release()
	n := 0
	if len(cols) > 0 {
		n = len(cols[0].vals)
	}
	for i, c := range cols {
		if len(c.vals) != n {
			t.Fatalf("writeParquet: column %s has %d values, want %d", c.name, len(c.vals), n)
		}
		for _, v := range c.vals {
			appendValue(t, rb.Field(i), v)
		}
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if rowGroup <= 0 {
		rowGroup = max(n, 1)
	}
	props := parquet.NewWriterProperties(append([]parquet.WriterProperty{parquet.WithMaxRowGroupLength(int64(rowGroup))}, extra...)...)
	fw, err := pqarrow.NewFileWriter(sc, f, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema()))
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
}

// rows is a small long-format dataset in Go values.
type rows struct {
	site, traj, step, action []any
	reward                   []any
	state                    [][]any // per state column
}

func (r rows) columns(siteT, trajT, stepT, actionT, rewardT, stateT arrow.DataType, stateNames ...string) []column {
	cols := []column{
		col("site", siteT, r.site...),
		col("traj", trajT, r.traj...),
		col("step", stepT, r.step...),
		col("action", actionT, r.action...),
		col("reward", rewardT, r.reward...),
	}
	for j, name := range stateNames {
		cols = append(cols, col(name, stateT, r.state[j]...))
	}
	return cols
}

// sampleRows returns nTraj trajectories per site over sites, with lengths
// cycling 1..H, integer actions in 0..A-1 and two state columns.
func sampleRows(sites []any, nTraj, H, A int) rows {
	var r rows
	r.state = make([][]any, 2)
	k := 0
	for _, s := range sites {
		for tr := 0; tr < nTraj; tr++ {
			length := 1 + (tr+k)%H
			for h := 1; h <= length; h++ {
				r.site = append(r.site, s)
				r.traj = append(r.traj, 100+tr)
				r.step = append(r.step, h)
				r.action = append(r.action, (tr+h)%A)
				r.reward = append(r.reward, float64((tr*7+h*3)%11)/10)
				r.state[0] = append(r.state[0], float64(1+(tr+h)%5))
				r.state[1] = append(r.state[1], float64((tr*h)%3))
			}
		}
		k++
	}
	return r
}

// permute returns the rows reordered by perm.
func (r rows) permute(perm []int) rows {
	pick := func(v []any) []any {
		out := make([]any, len(perm))
		for i, p := range perm {
			out[i] = v[p]
		}
		return out
	}
	out := rows{site: pick(r.site), traj: pick(r.traj), step: pick(r.step), action: pick(r.action), reward: pick(r.reward)}
	for _, s := range r.state {
		out.state = append(out.state, pick(s))
	}
	return out
}

func (r rows) slice(lo, hi int) rows {
	out := rows{site: r.site[lo:hi], traj: r.traj[lo:hi], step: r.step[lo:hi], action: r.action[lo:hi], reward: r.reward[lo:hi]}
	for _, s := range r.state {
		out.state = append(out.state, s[lo:hi])
	}
	return out
}

func listOf(t arrow.DataType) arrow.DataType { return arrow.ListOf(t) }

var (
	i32 = arrow.PrimitiveTypes.Int32
	i64 = arrow.PrimitiveTypes.Int64
	f64 = arrow.PrimitiveTypes.Float64
	str = arrow.BinaryTypes.String
)

func stateOpts(cols ...string) traj.Options {
	return traj.Options{State: traj.StateSpec{Columns: cols}}
}

// readChecked reads with a checked allocator and fails the test on a leak.
func readChecked(t testing.TB, paths []string, opts traj.Options) (*traj.Table, error) {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	return parquetio.ReadWith(context.Background(), paths, opts, mem)
}

// clearSources drops provenance, which differs between equal tables read
// from different files.
func clearSources(tb *traj.Table) *traj.Table {
	c := *tb
	c.Sources = nil
	return &c
}

func equalTables(t testing.TB, got, want *traj.Table) {
	t.Helper()
	g, w := clearSources(got), clearSources(want)
	if reflect.DeepEqual(g, w) {
		return
	}
	t.Errorf("tables differ:\n got: sites %v actions %v A=%d H=%d W=%d rows=%d traj=%v\nwant: sites %v actions %v A=%d H=%d W=%d rows=%d traj=%v",
		g.Sites, g.Actions, g.A, g.H, g.W, g.Rows, g.Trajectories, w.Sites, w.Actions, w.A, w.H, w.W, w.Rows, w.Trajectories)
	for h := range min(len(g.Steps), len(w.Steps)) {
		if !reflect.DeepEqual(g.Steps[h], w.Steps[h]) {
			t.Errorf("step %d:\n got %+v\nwant %+v", h+1, g.Steps[h], w.Steps[h])
			break
		}
	}
}

// wantErr checks that err wraps sentinel and mentions every fragment.
func wantErr(t testing.TB, err, sentinel error, fragments ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("got no error, want one wrapping %q and mentioning %q", sentinel, fragments)
	}
	if sentinel != nil && !errors.Is(err, sentinel) {
		t.Errorf("error %q: got no %q in its chain", err, sentinel)
	}
	for _, f := range fragments {
		if !strings.Contains(err.Error(), f) {
			t.Errorf("error %q: want it to mention %q", err, f)
		}
	}
	if testing.Verbose() {
		t.Log(err)
	}
	msg := err.Error()
	if strings.HasSuffix(msg, ".") || strings.HasSuffix(msg, "!") {
		t.Errorf("error %q ends with punctuation", msg)
	}
}

func tmpPath(t testing.TB, name string) string {
	t.Helper()
	return filepath.Join(t.TempDir(), name)
}

func anyInts(v ...int) []any {
	out := make([]any, len(v))
	for i, x := range v {
		out[i] = x
	}
	return out
}

func anyStrings(format string, v ...any) []any {
	out := make([]any, len(v))
	for i, x := range v {
		out[i] = fmt.Sprintf(format, x)
	}
	return out
}
