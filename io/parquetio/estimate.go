package parquetio

import (
	"fmt"

	"github.com/apache/arrow-go/v18/parquet/metadata"

	"github.com/grmdp/grmdp/traj"
)

// CountRows returns the number of rows in the Parquet files that paths name
// (files, directories and globs, expanded as [Read] does), from their
// footers only: no data page is read, so it costs a few small reads per
// file whatever the files' sizes. It is meant for estimating the memory a
// read needs before starting it. Errors are those of [Read] for files that
// are missing, unreadable or not Parquet.
func CountRows(paths []string) (int64, error) {
	fp, err := Measure(paths, "")
	return fp.Rows, err
}

// CountValues returns, from the footers only, the number of rows and the
// number of leaf values stored in column col across the files that paths
// name (see [Measure]).
func CountValues(paths []string, col string) (rows, values int64, err error) {
	fp, err := Measure(paths, col)
	return fp.Rows, fp.Values, err
}

// Footprint is what the footers of a set of inputs say about their size.
type Footprint struct {
	Files, RowGroups int
	// Rows is the total row count; MaxRowGroupRows the largest row group's.
	Rows, MaxRowGroupRows int64
	// Values counts the leaf values stored in the column [Measure] was
	// asked about, across all files: for a list column, Values/Rows is the
	// mean list length. A file without the column adds no values.
	Values int64
}

// Measure reads the footers of the files that paths name, as [CountRows]
// does, and returns their [Footprint]; col, when not empty, names the
// top-level column whose values are counted.
func Measure(paths []string, col string) (Footprint, error) {
	var fp Footprint
	ins, err := expandPaths(paths, traj.DefaultColumns.Site)
	if err != nil {
		return fp, err
	}
	if len(ins) == 0 {
		return fp, fmt.Errorf("parquetio: no parquet files in %v: %w", paths, ErrNoData)
	}
	for _, in := range ins {
		_, _, md, err := openFooter(in.path)
		if err != nil {
			return Footprint{}, err
		}
		fp.Files++
		for rg := range md.NumRowGroups() {
			n := md.RowGroup(rg).NumRows()
			fp.Rows += n
			fp.RowGroups++
			fp.MaxRowGroupRows = max(fp.MaxRowGroupRows, n)
		}
		if col == "" {
			continue
		}
		v, err := leafValues(in.path, md, col)
		if err != nil {
			return Footprint{}, err
		}
		fp.Values += v
	}
	return fp, nil
}

// leafValues sums the value counts of the column chunks of the first leaf
// column under the top-level field col.
func leafValues(path string, md *metadata.FileMetaData, col string) (n int64, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fileErr(path, "cannot read the parquet footer: %v", r)
		}
	}()
	leaf := -1
	for i := range md.Schema.NumColumns() {
		if p := md.Schema.Column(i).ColumnPath(); len(p) > 0 && p[0] == col {
			leaf = i
			break
		}
	}
	if leaf < 0 {
		return 0, nil
	}
	for rg := range md.NumRowGroups() {
		cc, err := md.RowGroup(rg).ColumnChunk(leaf)
		if err != nil {
			return 0, fileErr(path, "cannot read the parquet footer: %v", err)
		}
		n += cc.NumValues()
	}
	return n, nil
}
