package parquetio

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/compress"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/grmdp/grmdp/io/fileio"
	"github.com/grmdp/grmdp/traj"
)

// DefaultRowGroupRows is the row group size WriteTrajectories uses when
// WriteOptions.RowGroupRows is zero.
const DefaultRowGroupRows = 1 << 20

// WriteOptions configures [WriteTrajectories].
type WriteOptions struct {
	// Columns names the contract columns; empty names take the defaults
	// (site, traj, step, action, reward).
	Columns traj.Columns
	// StateColumns names the state columns: one per state value (W of
	// them), or exactly one when List is set. It may be empty only when the
	// table has no state (W = 0).
	StateColumns []string
	// List writes the state as one list<double> column of length W.
	List bool
	// IntSites writes the site column as int64 instead of string. Every
	// site label must then be a decimal integer; use it when the labels
	// came from integers, so that reading the file back keeps their numeric
	// order.
	IntSites bool
	// RowGroupRows is the number of rows per row group; zero means
	// DefaultRowGroupRows.
	RowGroupRows int
	// NullNaN makes [WriteChunks] write the scalar state columns as
	// nullable, with NULL for each NaN state value (the simulated
	// hospital exports' missing measurements).
	NullNaN bool
}

// writerProps are the Parquet settings of every file this package writes:
// snappy (read by DuckDB, pandas, Polars and Spark alike), statistics, no
// timestamps, and dictionary encoding for the named columns only, so that
// equal inputs give byte-identical files; more settings follow (and
// override) these.
//
// Dictionaries are kept to columns whose distinct values are few by the
// contract (site, step, action). A column chunk whose dictionary outgrows
// its page (1 MiB: more than 131,072 distinct 8-byte values) falls back to
// plain encoding, and arrow-go then lists the page counts of the two
// encodings in the footer in random order (it ranges over a map), so a
// dictionary on trajectory ids, rewards, states or Q-values would make two
// writes of the same rows differ in a few footer bytes. On such columns a
// dictionary also only costs.
func writerProps(mem memory.Allocator, rowGroupRows int64, dict []string, more ...parquet.WriterProperty) *parquet.WriterProperties {
	props := []parquet.WriterProperty{
		parquet.WithAllocator(mem),
		parquet.WithCompression(compress.Codecs.Snappy),
		parquet.WithDictionaryDefault(false),
		parquet.WithStats(true),
		parquet.WithMaxRowGroupLength(rowGroupRows),
	}
	for _, name := range dict {
		props = append(props, parquet.WithDictionaryPath(parquet.ColumnPath{name}, true))
	}
	return parquet.NewWriterProperties(append(props, more...)...)
}

// WriteTrajectories writes t in the trajectory contract to path, atomically:
// columns site (string, or int64 with IntSites), traj (int64: the global
// trajectory ordinal Step.Traj), step (int32), action (int32, or the label
// string when t.Actions is not nil), reward (double) and the state columns
// (double, or one list<double>), rows in (site, traj, step) order. Reading
// the file back with the same state columns gives a Table equal to t
// (except Sources).
//
// Tables with row weights (Step.Weight) cannot be written: the contract has
// one row per transition.
func WriteTrajectories(path string, t *traj.Table, opts WriteOptions) error {
	return writeTrajectories(path, t, opts, memory.DefaultAllocator)
}

func writeTrajectories(path string, t *traj.Table, opts WriteOptions, mem memory.Allocator) (err error) {
	cols := opts.Columns.WithDefaults()
	siteInts, err := checkWritable(path, t, opts)
	if err != nil {
		return err
	}
	rgRows := opts.RowGroupRows
	if rgRows <= 0 {
		rgRows = DefaultRowGroupRows
	}
	sc, err := trajectorySchema(path, t, opts, cols)
	if err != nil {
		return err
	}
	nrows := 0
	for h := range t.Steps {
		nrows += t.Steps[h].Len()
	}
	if nrows > 0 && len(t.Steps[0].SiteStart) != len(t.Sites)+1 {
		return fmt.Errorf("parquetio: cannot write %s: step 1 has %d site offsets for %d sites", path, len(t.Steps[0].SiteStart), len(t.Sites))
	}

	f, err := fileio.CreateAtomic(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	fw, err := pqarrow.NewFileWriter(sc, f, writerProps(mem, int64(rgRows), dictionary(cols)), pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(mem)))
	if err != nil {
		return fmt.Errorf("parquetio: cannot write %s: %w", path, err)
	}
	defer func() {
		if cerr := fw.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("parquetio: cannot write %s: %w", path, cerr)
		}
		if err == nil {
			err = f.Commit()
		}
	}()

	rb := array.NewRecordBuilder(mem, sc)
	defer rb.Release()
	rw := newTrajRowWriter(path, t, opts, siteInts, fw, rb, rgRows)
	written, err := rw.writeAll(nrows)
	if err != nil {
		return err
	}
	if written != nrows {
		return fmt.Errorf("parquetio: cannot write %s: following trajectories from step 1 reaches %d of the table's %d rows", path, written, nrows)
	}
	return rw.flush()
}

// checkWritable checks that the table fits the trajectory contract and the
// options (no row weights, as many state columns as the state is wide) and,
// with IntSites, returns the sites as integers.
func checkWritable(path string, t *traj.Table, opts WriteOptions) ([]int64, error) {
	for h := range t.Steps {
		if t.Steps[h].Weight != nil {
			return nil, fmt.Errorf("parquetio: cannot write %s: step %d has row weights, and the trajectory contract has one row per transition", path, h+1)
		}
	}
	switch {
	case opts.List && len(opts.StateColumns) != 1:
		return nil, fmt.Errorf("parquetio: cannot write %s: a list state needs exactly one column name, got %v", path, opts.StateColumns)
	case !opts.List && len(opts.StateColumns) != t.W:
		return nil, fmt.Errorf("parquetio: cannot write %s: the table's state has width %d but %d state columns are named (%v)", path, t.W, len(opts.StateColumns), opts.StateColumns)
	case opts.List && t.W == 0:
		return nil, fmt.Errorf("parquetio: cannot write %s: a list state needs a table with state width W > 0", path)
	}
	if !opts.IntSites {
		return nil, nil
	}
	siteInts := make([]int64, len(t.Sites))
	for k, s := range t.Sites {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("parquetio: cannot write %s with integer sites: site %q is not an integer", path, s)
		}
		siteInts[k] = v
	}
	return siteInts, nil
}

// trajectorySchema returns the written file's schema: the five contract
// columns, then the state as W float columns or one list column; no two
// columns may share a name.
func trajectorySchema(path string, t *traj.Table, opts WriteOptions, cols traj.Columns) (*arrow.Schema, error) {
	siteType := arrow.DataType(arrow.BinaryTypes.String)
	if opts.IntSites {
		siteType = arrow.PrimitiveTypes.Int64
	}
	actionType := arrow.DataType(arrow.PrimitiveTypes.Int32)
	if t.Actions != nil {
		actionType = arrow.BinaryTypes.String
	}
	fields := []arrow.Field{
		{Name: cols.Site, Type: siteType},
		{Name: cols.Traj, Type: arrow.PrimitiveTypes.Int64},
		{Name: cols.Step, Type: arrow.PrimitiveTypes.Int32},
		{Name: cols.Action, Type: actionType},
		{Name: cols.Reward, Type: arrow.PrimitiveTypes.Float64},
	}
	if opts.List {
		fields = append(fields, arrow.Field{Name: opts.StateColumns[0], Type: arrow.ListOfNonNullable(arrow.PrimitiveTypes.Float64)})
	} else {
		for _, name := range opts.StateColumns {
			fields = append(fields, arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Float64})
		}
	}
	for i, f := range fields {
		for _, g := range fields[:i] {
			if f.Name == g.Name {
				return nil, fmt.Errorf("parquetio: cannot write %s: column name %q is used twice", path, f.Name)
			}
		}
	}
	return arrow.NewSchema(fields, nil), nil
}

// trajRowWriter appends a table's rows to a record builder, one column
// builder per contract column, and writes a record batch every rgRows rows.
type trajRowWriter struct {
	path     string
	t        *traj.Table
	siteInts []int64 // the sites as integers, or nil to write their labels
	fw       *pqarrow.FileWriter
	rb       *array.RecordBuilder
	rgRows   int
	pending  int // rows appended since the last batch

	siteS   *array.StringBuilder
	siteI   *array.Int64Builder
	traj    *array.Int64Builder
	step    *array.Int32Builder
	actI    *array.Int32Builder
	actS    *array.StringBuilder
	reward  *array.Float64Builder
	stateB  []*array.Float64Builder
	listB   *array.ListBuilder
	listVal *array.Float64Builder
}

func newTrajRowWriter(path string, t *traj.Table, opts WriteOptions, siteInts []int64, fw *pqarrow.FileWriter, rb *array.RecordBuilder, rgRows int) *trajRowWriter {
	rw := &trajRowWriter{
		path: path, t: t, siteInts: siteInts, fw: fw, rb: rb, rgRows: rgRows,
		traj:   rb.Field(1).(*array.Int64Builder),
		step:   rb.Field(2).(*array.Int32Builder),
		reward: rb.Field(4).(*array.Float64Builder),
	}
	if opts.IntSites {
		rw.siteI = rb.Field(0).(*array.Int64Builder)
	} else {
		rw.siteS = rb.Field(0).(*array.StringBuilder)
	}
	if t.Actions != nil {
		rw.actS = rb.Field(3).(*array.StringBuilder)
	} else {
		rw.actI = rb.Field(3).(*array.Int32Builder)
	}
	if opts.List {
		rw.listB = rb.Field(5).(*array.ListBuilder)
		rw.listVal = rw.listB.ValueBuilder().(*array.Float64Builder)
	} else {
		for j := range opts.StateColumns {
			rw.stateB = append(rw.stateB, rb.Field(5+j).(*array.Float64Builder))
		}
	}
	return rw
}

// flush writes the pending rows, if any, as one record batch.
func (rw *trajRowWriter) flush() error {
	if rw.pending == 0 {
		return nil
	}
	rec := rw.rb.NewRecordBatch()
	defer rec.Release()
	rw.pending = 0
	if err := rw.fw.Write(rec); err != nil {
		return fmt.Errorf("parquetio: cannot write %s: %w", rw.path, err)
	}
	return nil
}

// writeAll writes every trajectory in (site, traj, step) order and returns
// the number of rows written. Trajectory ordinals follow (site, trajectory
// key), and a trajectory's rows are found by following Next from its row
// at step 1, whose index is its ordinal.
func (rw *trajRowWriter) writeAll(nrows int) (int, error) {
	if nrows == 0 {
		return 0, nil
	}
	t := rw.t
	first := &t.Steps[0]
	site, written := 0, 0
	for tr := 0; tr < first.Len(); tr++ {
		for site < len(t.Sites) && int32(tr) >= first.SiteStart[site+1] {
			site++
		}
		if site >= len(t.Sites) {
			return written, fmt.Errorf("parquetio: cannot write %s: trajectory %d at step 1 has no site", rw.path, tr)
		}
		for h, row := 0, tr; row >= 0; h++ {
			if h >= len(t.Steps) || row >= t.Steps[h].Len() {
				return written, fmt.Errorf("parquetio: cannot write %s: trajectory %d links to a missing row at step %d", rw.path, tr, h+1)
			}
			if err := rw.appendRow(site, h, row); err != nil {
				return written, err
			}
			written++
			if err := rw.flushIfFull(); err != nil {
				return written, err
			}
			row = int(t.Steps[h].Next[row])
		}
	}
	return written, nil
}

// appendRow appends row of step h+1, at the given site, to the builders.
func (rw *trajRowWriter) appendRow(site, h, row int) error {
	t := rw.t
	st := &t.Steps[h]
	if rw.siteI != nil {
		rw.siteI.Append(rw.siteInts[site])
	} else {
		rw.siteS.Append(t.Sites[site])
	}
	rw.traj.Append(int64(st.Traj[row]))
	rw.step.Append(int32(h + 1))
	a := st.Action[row]
	if rw.actS != nil {
		if a < 0 || int(a) >= len(t.Actions) {
			return fmt.Errorf("parquetio: cannot write %s: action %d at step %d has no label (%d labels)", rw.path, a, h+1, len(t.Actions))
		}
		rw.actS.Append(t.Actions[a])
	} else {
		rw.actI.Append(a)
	}
	rw.reward.Append(st.Reward[row])
	vals := st.State[row*t.W : (row+1)*t.W]
	if rw.listB != nil {
		rw.listB.Append(true)
		rw.listVal.AppendValues(vals, nil)
	} else {
		for j, b := range rw.stateB {
			b.Append(vals[j])
		}
	}
	return nil
}

// flushIfFull counts one more pending row and writes a batch once there are
// rgRows of them.
func (rw *trajRowWriter) flushIfFull() error {
	rw.pending++
	if rw.pending == rw.rgRows {
		return rw.flush()
	}
	return nil
}

// PolicyRow is one row of a policy artifact: the vectors of one group at one
// step.
type PolicyRow struct {
	Step, Group int32
	W, M, Linv  []float64
	Fallback    []int32
	// Counts is the behaviour row's evidence counts (column counts, which
	// policies written before it lack: it reads as nil then).
	Counts []float64
}

// policyTypes names the policy columns' types in messages.
var policyTypes = []string{"int32", "int32", "list<double>", "list<double>", "list<double>", "list<int32>", "list<double>"}

// policyOptional is the index of the first column of policyFields that
// older policy files may lack.
const policyOptional = 6

var policyFields = []arrow.Field{
	{Name: "step", Type: arrow.PrimitiveTypes.Int32},
	{Name: "group", Type: arrow.PrimitiveTypes.Int32},
	{Name: "w", Type: arrow.ListOfNonNullable(arrow.PrimitiveTypes.Float64)},
	{Name: "m", Type: arrow.ListOfNonNullable(arrow.PrimitiveTypes.Float64)},
	{Name: "linv", Type: arrow.ListOfNonNullable(arrow.PrimitiveTypes.Float64)},
	{Name: "fallback", Type: arrow.ListOfNonNullable(arrow.PrimitiveTypes.Int32)},
	{Name: "counts", Type: arrow.ListOfNonNullable(arrow.PrimitiveTypes.Float64)},
}

// WritePolicy writes a policy artifact to path, atomically: one row per
// PolicyRow with columns step (int32), group (int32), w, m, linv
// (list<double>), fallback (list<int32>) and counts (list<double>), and
// meta as the file's
// key-value metadata. Keys are written in sorted order and nothing depends
// on the clock, so equal inputs give byte-identical files.
func WritePolicy(path string, rows []PolicyRow, meta map[string]string) error {
	return writePolicy(path, rows, meta, memory.DefaultAllocator)
}

func writePolicy(path string, rows []PolicyRow, meta map[string]string, mem memory.Allocator) (err error) {
	if _, ok := meta["ARROW:schema"]; ok {
		return fmt.Errorf("parquetio: cannot write %s: metadata key %q is reserved", path, "ARROW:schema")
	}
	md := SortedMetadata(meta)
	sc := arrow.NewSchema(policyFields, &md)

	rb := array.NewRecordBuilder(mem, sc)
	defer rb.Release()
	step := rb.Field(0).(*array.Int32Builder)
	group := rb.Field(1).(*array.Int32Builder)
	appendF := func(i int, v []float64) {
		lb := rb.Field(i).(*array.ListBuilder)
		lb.Append(true)
		lb.ValueBuilder().(*array.Float64Builder).AppendValues(v, nil)
	}
	fb := rb.Field(5).(*array.ListBuilder)
	fbv := fb.ValueBuilder().(*array.Int32Builder)
	for _, r := range rows {
		step.Append(r.Step)
		group.Append(r.Group)
		appendF(2, r.W)
		appendF(3, r.M)
		appendF(4, r.Linv)
		fb.Append(true)
		fbv.AppendValues(r.Fallback, nil)
		appendF(6, r.Counts)
	}
	rec := rb.NewRecordBatch()
	defer rec.Release()

	f, err := fileio.CreateAtomic(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	fw, err := pqarrow.NewFileWriter(sc, f, writerProps(mem, int64(max(len(rows), 1)), nil), pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(mem)))
	if err != nil {
		return fmt.Errorf("parquetio: cannot write %s: %w", path, err)
	}
	if err := fw.Write(rec); err != nil {
		fw.Close()
		return fmt.Errorf("parquetio: cannot write %s: %w", path, err)
	}
	if err := fw.Close(); err != nil {
		return fmt.Errorf("parquetio: cannot write %s: %w", path, err)
	}
	return f.Commit()
}

// ReadPolicy reads a policy artifact written by [WritePolicy]: its rows (an
// empty list reads as a nil slice) and its key-value metadata. A file that
// is not Parquet is an error wrapping ErrParquet; one without the policy
// columns, an error wrapping ErrSchema.
func ReadPolicy(path string) ([]PolicyRow, map[string]string, error) {
	return readPolicy(path, memory.DefaultAllocator)
}

func readPolicy(path string, mem memory.Allocator) (rows []PolicyRow, meta map[string]string, err error) {
	defer func() {
		if r := recover(); r != nil {
			rows, meta, err = nil, nil, fileErr(path, "cannot read the policy: %v", r)
		}
	}()
	fi := &fileInfo{input: input{path: path}}
	if fi.size, fi.fp, fi.md, err = openFooter(path); err != nil {
		return nil, nil, err
	}
	fr, err := openReader(fi, parquet.NewReaderProperties(mem))
	if err != nil {
		return nil, nil, err
	}
	defer fr.Close()
	ar, err := pqarrow.NewFileReader(fr, pqarrow.ArrowReadProperties{}, mem)
	if err != nil {
		return nil, nil, fileErr(path, "cannot read the policy schema: %v", err)
	}
	sc, err := ar.Schema()
	if err != nil {
		return nil, nil, fileErr(path, "cannot read the policy schema: %v", err)
	}
	idx := make([]int, len(policyFields))
	for i, want := range policyFields {
		found := sc.FieldIndices(want.Name)
		if len(found) == 0 && i >= policyOptional {
			idx[i] = -1
			continue
		}
		if len(found) == 0 {
			names := make([]string, sc.NumFields())
			for j, f := range sc.Fields() {
				names[j] = f.Name
			}
			return nil, nil, &traj.RowError{File: path, RowGroup: -1, Row: -1, Column: want.Name,
				Msg: fmt.Sprintf("missing: the file has columns %v, want a policy written by grmdp solve", names), Err: ErrSchema}
		}
		got := sc.Field(found[0]).Type
		if !policyTypeOK(got, want.Type) {
			return nil, nil, &traj.RowError{File: path, RowGroup: -1, Row: -1, Column: want.Name,
				Msg: fmt.Sprintf("has type %s, want %s", got, policyTypes[i]), Err: ErrSchema}
		}
		idx[i] = found[0]
	}
	tbl, err := ar.ReadTable(context.Background())
	if err != nil {
		return nil, nil, fileErr(path, "cannot read the policy: %v", err)
	}
	defer tbl.Release()
	n := int(tbl.NumRows())
	rows = make([]PolicyRow, n)
	for i, ci := range idx {
		if ci < 0 {
			continue
		}
		name := policyFields[i].Name
		row := 0
		for _, chunk := range tbl.Column(ci).Data().Chunks() {
			if err := fillPolicy(rows[row:], i, chunk, path, name, row); err != nil {
				return nil, nil, err
			}
			row += chunk.Len()
		}
	}
	meta = map[string]string{}
	kv := fi.md.KeyValueMetadata()
	for _, k := range kv.Keys() {
		if k == "ARROW:schema" {
			continue
		}
		if v := kv.FindValue(k); v != nil {
			meta[k] = *v
		}
	}
	return rows, meta, nil
}

func policyTypeOK(got, want arrow.DataType) bool {
	if got.ID() != want.ID() {
		return false
	}
	if l, ok := got.(*arrow.ListType); ok {
		return l.Elem().ID() == want.(*arrow.ListType).Elem().ID()
	}
	return true
}

func fillPolicy(rows []PolicyRow, col int, a arrow.Array, path, name string, row0 int) error {
	nullErr := func(i int) error {
		return &traj.RowError{File: path, RowGroup: -1, Row: int64(row0 + i), Column: name, Msg: "null value in a policy", Err: ErrBadData}
	}
	switch col {
	case 0, 1:
		v := a.(*array.Int32)
		for i := range v.Len() {
			if v.IsNull(i) {
				return nullErr(i)
			}
			if col == 0 {
				rows[i].Step = v.Value(i)
			} else {
				rows[i].Group = v.Value(i)
			}
		}
		return nil
	}
	l := a.(*array.List)
	offs := l.Offsets()
	for i := range l.Len() {
		if l.IsNull(i) {
			return nullErr(i)
		}
		lo, hi := int(offs[i]), int(offs[i+1])
		if lo == hi {
			continue
		}
		if col == 5 {
			vals := l.ListValues().(*array.Int32)
			if vals.NullN() > 0 {
				for j := lo; j < hi; j++ {
					if vals.IsNull(j) {
						return nullErr(i)
					}
				}
			}
			rows[i].Fallback = slices.Clone(vals.Int32Values()[lo:hi])
			continue
		}
		vals := l.ListValues().(*array.Float64)
		if vals.NullN() > 0 {
			for j := lo; j < hi; j++ {
				if vals.IsNull(j) {
					return nullErr(i)
				}
			}
		}
		v := slices.Clone(vals.Float64Values()[lo:hi])
		switch col {
		case 2:
			rows[i].W = v
		case 3:
			rows[i].M = v
		case 4:
			rows[i].Linv = v
		case 6:
			rows[i].Counts = v
		}
	}
	return nil
}

// dictionary names the columns whose distinct values are few by the
// contract (site, step, action): the only ones written with a dictionary
// (see writerProps).
func dictionary(c traj.Columns) []string {
	return []string{c.Site, c.Step, c.Action}
}

// SortedMetadata returns meta as Arrow key-value metadata with its keys in
// sorted order, so that equal maps give byte-identical files.
func SortedMetadata(meta map[string]string) arrow.Metadata {
	keys := slices.Sorted(maps.Keys(meta))
	vals := make([]string, len(keys))
	for i, k := range keys {
		vals[i] = meta[k]
	}
	return arrow.NewMetadata(keys, vals)
}
