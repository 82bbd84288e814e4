package parquetio_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"os"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/traj"
)

// uvarint and zigzag encode a Thrift compact-protocol i64.
func uvarint(v uint64) []byte { return binary.AppendUvarint(nil, v) }
func zigzag(v int64) uint64   { return uint64(v<<1) ^ uint64(v>>63) }

// TestReadListFooterLies reads a file whose list column's footer claims an
// uncompressed size of 4 TiB (every row and value is real; only that
// footer field lies): the presized output must stay bounded, and the
// reader report the data's error instead of running out of memory.
func TestReadListFooterLies(t *testing.T) {
	const n, w = 1 << 18, 1 << 20
	mem := memory.NewGoAllocator()
	sc := arrow.NewSchema([]arrow.Field{{Name: "site", Type: arrow.PrimitiveTypes.Int64}, {Name: "traj", Type: arrow.PrimitiveTypes.Int64},
		{Name: "step", Type: arrow.PrimitiveTypes.Int64}, {Name: "action", Type: arrow.PrimitiveTypes.Int64},
		{Name: "reward", Type: arrow.PrimitiveTypes.Float64}, {Name: "phi", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64)}}, nil)
	rb := array.NewRecordBuilder(mem, sc)
	lb := rb.Field(5).(*array.ListBuilder)
	vb := lb.ValueBuilder().(*array.Float64Builder)
	for i := range n {
		rb.Field(0).(*array.Int64Builder).Append(0)
		rb.Field(1).(*array.Int64Builder).Append(int64(i))
		rb.Field(2).(*array.Int64Builder).Append(1)
		rb.Field(3).(*array.Int64Builder).Append(0)
		rb.Field(4).(*array.Float64Builder).Append(0.5)
		lb.Append(true)
		if i == 0 {
			for range w {
				vb.Append(0)
			}
		} else {
			vb.Append(1)
		}
	}
	rec := rb.NewRecordBatch()
	path := t.TempDir() + "/lie.parquet"
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	fw, err := pqarrow.NewFileWriter(sc, f, parquet.NewWriterProperties(parquet.WithMaxRowGroupLength(n), parquet.WithDictionaryDefault(false)), pqarrow.DefaultWriterProps())
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.Write(rec); err != nil {
		t.Fatal(err)
	}
	if err := fw.Close(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r, err := file.OpenParquetFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	cc, _ := r.MetaData().RowGroup(0).ColumnChunk(5)
	tus, tcs := cc.TotalUncompressedSize(), cc.TotalCompressedSize()
	r.Close()
	flen := int(binary.LittleEndian.Uint32(data[len(data)-8:]))
	fstart := len(data) - 8 - flen
	footer := data[fstart : len(data)-8]
	old := append(append(append([]byte{0x16}, uvarint(zigzag(tus))...), 0x16), uvarint(zigzag(tcs))...)
	if bytes.Count(footer, old) != 1 {
		t.Fatalf("pattern found %d times", bytes.Count(footer, old))
	}
	nw := append(append(append([]byte{0x16}, uvarint(zigzag(1<<42))...), 0x16), uvarint(zigzag(tcs))...)
	footer = bytes.Replace(footer, old, nw, 1)
	out := append([]byte{}, data[:fstart]...)
	out = append(out, footer...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(footer)))
	out = append(out, "PAR1"...)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	opts := traj.Options{State: traj.StateSpec{Columns: []string{"phi"}, List: true}}
	_, err = parquetio.Scan(context.Background(), []string{path}, opts)
	wantErr(t, err, parquetio.ErrBadData, "row 1", "list of length 1, but earlier rows have length 1048576")
	_, err = parquetio.Read(context.Background(), []string{path}, opts)
	wantErr(t, err, parquetio.ErrBadData, "row 1", "list of length 1, but earlier rows have length 1048576")
}
