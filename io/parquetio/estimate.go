package parquetio

import (
	"fmt"
	"math"

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

// The memory model of Read: a read of N rows whose state has W floats per
// row peaks at about
//
//	memBase + N * (memPerRow + memPerState*W)
//
// bytes of resident memory (memPerList instead of memPerState for the
// precomputed map's list column). Every data-reading command holds, while
// Build sorts the rows into the per-step table, the reader's ids, steps and
// actions (20 bytes per row; the rewards live in the memory of the table's
// states until the second pass writes them), Build's sort order (4 bytes
// per row; the sorted trajectory ids live in the table's actions until
// Build copies the actions, and the table's rewards reuse the reader's
// trajectory ids once the sort has copied them) and the rest of the table
// (28 bytes per row plus 8 per state value; see the package doc). The
// collector's headroom is small for such pointer-free heaps, and the
// decoders' in-flight row groups add to it: the constants include both.
//
// The constants are calibrated with scripts/memcal.go (peak resident
// memory of inspect and solve with 2 workers on synthetic inputs of 1M and
// 4M rows, 8 sites, H = 20, A = 10, for the tabular, action-block and
// precomputed maps), chosen so that every calibration point lies below the
// estimate; the points and the fit are docs/PERFORMANCE.md item 54.
// Reusing the trajectory ids' memory in Build lowers the cost per row, not
// per value, so memPerList holds for it too. Recalibrate with memcal after
// changing the reader, the statistics or the collector's tuning.
//
// The paths that hold the rows twice have constants of their own, those of
// a read that keeps its decoded rows beside the table (85 B + 26 B per
// state value, 35 B per list value, rounded up): a table built with
// traj.Builder.Add (simulated data), the out-of-core windows
// ([Plan.ReadSteps]) and an in-memory table copied step by step for a
// writer. [EstimateMemoryHeldTwice] is theirs.
const (
	memBase     = 128 << 20
	memPerRow   = 30
	memPerState = 10
	memPerList  = 21

	memPerRowTwice   = 90
	memPerStateTwice = 30
	memPerListTwice  = 37
)

// EstimateMemory returns the bytes of resident memory a [Read] of rows rows
// of state width w peaks at, by the model above; list says the state is one
// list column (the precomputed map).
func EstimateMemory(rows int64, w int, list bool) int64 {
	per := float64(memPerRow + memPerState*w)
	if list {
		per = float64(memPerRow + memPerList*w)
	}
	return memFor(rows, per)
}

// EstimateMemoryHeldTwice is [EstimateMemory] for the paths that hold the
// rows twice: a table built with traj.Builder.Add, the windows of
// [Plan.ReadSteps], and a table copied step by step for a writer.
func EstimateMemoryHeldTwice(rows int64, w int, list bool) int64 {
	per := float64(memPerRowTwice + memPerStateTwice*w)
	if list {
		per = float64(memPerRowTwice + memPerListTwice*w)
	}
	return memFor(rows, per)
}

func memFor(rows int64, per float64) int64 {
	b := float64(memBase) + float64(rows)*per
	if b > math.MaxInt64/2 {
		return math.MaxInt64 / 2
	}
	return int64(b)
}

// InflightMemory is the memory of row groups decoded ahead of the table
// being built, beyond what [EstimateMemory] holds: the reader keeps up to
// twice as many decoded row groups as it has workers, each about (80 + 16 W)
// bytes per row with the collector's headroom (docs/PERFORMANCE.md item
// 54). The calibration of EstimateMemory already holds four in flight, so
// only row groups beyond four count.
func (fp Footprint) InflightMemory(workers, w int) int64 {
	n := min(2*workers, fp.RowGroups) - 4
	if n <= 0 {
		return 0
	}
	return int64(n) * fp.MaxRowGroupRows * int64(80+16*w)
}
