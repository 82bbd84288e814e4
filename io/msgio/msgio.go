// Package msgio reads and writes the Parquet files of a federated job's
// site messages (package federate): named vectors of doubles, one row
// each, with the message's header as key-value metadata. It holds the
// arrow-go code of the federated protocol, so that package federate does
// not import it.
//
// The schema is three columns: name (string), index (int32) and values
// (list<double>). DuckDB, pandas and Polars read it as they read any
// Parquet file; the metadata is the file's key-value metadata.
package msgio

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/grmdp/grmdp/io/parquetio"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/grmdp/grmdp/io/fileio"
)

// ErrBadFile marks a file that is not a readable message file: not
// Parquet, truncated, or without the message columns.
var ErrBadFile = errors.New("not a readable message file")

// Vector is one row: a named vector of doubles; Index tells apart vectors
// of the same name (a run, a step).
type Vector struct {
	Name   string
	Index  int32
	Values []float64
}

var fields = []arrow.Field{
	{Name: "name", Type: arrow.BinaryTypes.String},
	{Name: "index", Type: arrow.PrimitiveTypes.Int32},
	{Name: "values", Type: arrow.ListOf(arrow.PrimitiveTypes.Float64)},
}

// Write writes vecs and meta to path atomically: the file appears only
// when complete.
func Write(path string, meta map[string]string, vecs []Vector) error {
	mem := memory.DefaultAllocator
	md := parquetio.SortedMetadata(meta)
	sc := arrow.NewSchema(fields, &md)
	rb := array.NewRecordBuilder(mem, sc)
	defer rb.Release()
	names := rb.Field(0).(*array.StringBuilder)
	index := rb.Field(1).(*array.Int32Builder)
	lb := rb.Field(2).(*array.ListBuilder)
	vb := lb.ValueBuilder().(*array.Float64Builder)
	for _, v := range vecs {
		names.Append(v.Name)
		index.Append(v.Index)
		lb.Append(true)
		vb.AppendValues(v.Values, nil)
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()
	f, err := fileio.CreateAtomic(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	props := parquet.NewWriterProperties(parquet.WithAllocator(mem), parquet.WithCompression(compress.Codecs.Snappy),
		parquet.WithDictionaryDefault(false), parquet.WithMaxRowGroupLength(int64(max(len(vecs), 1))))
	fw, err := pqarrow.NewFileWriter(sc, f, props, pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(mem)))
	if err != nil {
		return fmt.Errorf("msgio: cannot write %s: %w", path, err)
	}
	if err := fw.Write(rec); err != nil {
		fw.Close()
		return fmt.Errorf("msgio: cannot write %s: %w", path, err)
	}
	if err := fw.Close(); err != nil {
		return fmt.Errorf("msgio: cannot write %s: %w", path, err)
	}
	return f.Commit()
}

// Read reads a file written by [Write]. A missing file is an error
// wrapping fs.ErrNotExist; any other unreadable file, one wrapping
// ErrBadFile.
func Read(path string) (meta map[string]string, vecs []Vector, err error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s: %w: %s", path, ErrBadFile, fmt.Sprintf(format, args...))
	}
	defer func() {
		if r := recover(); r != nil {
			meta, vecs, err = nil, nil, bad("%v", r)
		}
	}()
	osf, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	defer osf.Close()
	mem := memory.DefaultAllocator
	fr, err := file.NewParquetReader(osf, file.WithReadProps(parquet.NewReaderProperties(mem)))
	if err != nil {
		return nil, nil, bad("not Parquet, or truncated: %v", err)
	}
	defer fr.Close()
	ar, err := pqarrow.NewFileReader(fr, pqarrow.ArrowReadProperties{}, mem)
	if err != nil {
		return nil, nil, bad("%v", err)
	}
	sc, err := ar.Schema()
	if err != nil {
		return nil, nil, bad("%v", err)
	}
	if sc.NumFields() != len(fields) {
		return nil, nil, bad("%d columns, want name, index, values", sc.NumFields())
	}
	for i, f := range fields {
		if got := sc.Field(i); got.Name != f.Name || !arrow.TypeEqual(got.Type, f.Type) {
			return nil, nil, bad("column %d is %s %s, want %s %s", i, got.Name, got.Type, f.Name, f.Type)
		}
	}
	tbl, err := ar.ReadTable(context.Background())
	if err != nil {
		return nil, nil, bad("%v", err)
	}
	defer tbl.Release()
	n := int(tbl.NumRows())
	vecs = make([]Vector, n)
	for c := 0; c < 3; c++ {
		row := 0
		for _, chunk := range tbl.Column(c).Data().Chunks() {
			if chunk.NullN() > 0 {
				return nil, nil, bad("column %s has a null", fields[c].Name)
			}
			switch a := chunk.(type) {
			case *array.String:
				for i := range a.Len() {
					vecs[row+i].Name = a.Value(i)
				}
			case *array.Int32:
				for i := range a.Len() {
					vecs[row+i].Index = a.Value(i)
				}
			case *array.List:
				offs := a.Offsets()
				values := a.ListValues().(*array.Float64)
				if values.NullN() > 0 {
					return nil, nil, bad("column values has a null")
				}
				for i := range a.Len() {
					vecs[row+i].Values = slices.Clone(values.Float64Values()[offs[i]:offs[i+1]])
				}
			}
			row += chunk.Len()
		}
	}
	meta = map[string]string{}
	kv := fr.MetaData().KeyValueMetadata()
	for _, k := range kv.Keys() {
		if k == "ARROW:schema" {
			continue
		}
		if v := kv.FindValue(k); v != nil {
			meta[k] = *v
		}
	}
	return meta, vecs, nil
}

// IntegerColumn reports whether column col of the Parquet file at path is
// an integer column (false when the file has no such column).
func IntegerColumn(path, col string) (ok bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			ok, err = false, fmt.Errorf("%s: %w: %v", path, ErrBadFile, r)
		}
	}()
	fr, err := file.OpenParquetFile(path, false)
	if err != nil {
		return false, fmt.Errorf("%s: %w: %v", path, ErrBadFile, err)
	}
	defer fr.Close()
	sc := fr.MetaData().Schema
	i := sc.ColumnIndexByName(col)
	if i < 0 {
		return false, nil
	}
	switch sc.Column(i).PhysicalType() {
	case parquet.Types.Int32, parquet.Types.Int64:
		return true, nil
	}
	return false, nil
}
