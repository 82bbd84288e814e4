package parquetio_test

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/grmdp/grmdp/io/parquetio"
)

// TestPolicyCountsColumn: the behaviour row's evidence counts round-trip
// through the counts column, and a policy file written before that column
// existed (the six columns step, group, w, m, linv, fallback) still reads,
// its counts nil.
func TestPolicyCountsColumn(t *testing.T) {
	dir := t.TempDir()
	rows := []parquetio.PolicyRow{
		{Step: 1, Group: 0, W: []float64{0.5, 0.25}, M: []float64{0.1, 0.2}},
		{Step: 1, Group: -1, Fallback: []int32{1}, Counts: []float64{3, 0.5}},
	}
	path := filepath.Join(dir, "new.parquet")
	if err := parquetio.WritePolicy(path, rows, map[string]string{"k": "v"}); err != nil {
		t.Fatal(err)
	}
	got, _, err := parquetio.ReadPolicy(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got[1].Counts, rows[1].Counts) || got[0].Counts != nil {
		t.Errorf("counts read back: %v and %v", got[0].Counts, got[1].Counts)
	}

	// The older six-column layout.
	lf := func() arrow.DataType { return arrow.ListOfNonNullable(arrow.PrimitiveTypes.Float64) }
	sc := arrow.NewSchema([]arrow.Field{
		{Name: "step", Type: arrow.PrimitiveTypes.Int32}, {Name: "group", Type: arrow.PrimitiveTypes.Int32},
		{Name: "w", Type: lf()}, {Name: "m", Type: lf()}, {Name: "linv", Type: lf()},
		{Name: "fallback", Type: arrow.ListOfNonNullable(arrow.PrimitiveTypes.Int32)},
	}, nil)
	rb := array.NewRecordBuilder(memory.DefaultAllocator, sc)
	defer rb.Release()
	rb.Field(0).(*array.Int32Builder).AppendValues([]int32{1, 1}, nil)
	rb.Field(1).(*array.Int32Builder).AppendValues([]int32{0, -1}, nil)
	for i, vals := range [][][]float64{{{0.5, 0.25}, nil}, {{0.1, 0.2}, nil}, {nil, nil}} {
		lb := rb.Field(2 + i).(*array.ListBuilder)
		for _, v := range vals {
			lb.Append(true)
			lb.ValueBuilder().(*array.Float64Builder).AppendValues(v, nil)
		}
	}
	fb := rb.Field(5).(*array.ListBuilder)
	fb.Append(true)
	fb.Append(true)
	fb.ValueBuilder().(*array.Int32Builder).Append(1)
	rec := rb.NewRecordBatch()
	defer rec.Release()
	old := filepath.Join(dir, "old.parquet")
	f, err := os.Create(old)
	if err != nil {
		t.Fatal(err)
	}
	fw, err := pqarrow.NewFileWriter(sc, f, nil, pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	got, _, err = parquetio.ReadPolicy(old)
	if err != nil {
		t.Fatal(err)
	}
	want := []parquetio.PolicyRow{{Step: 1, Group: 0, W: []float64{0.5, 0.25}, M: []float64{0.1, 0.2}}, {Step: 1, Group: -1, Fallback: []int32{1}}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("old layout:\n got %+v\nwant %+v", got, want)
	}
}
