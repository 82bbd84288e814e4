package parquetio

import (
	"fmt"
	"iter"
	"math"
	"slices"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/grmdp/grmdp/io/fileio"
	"github.com/grmdp/grmdp/traj"
)

// WriteChunks writes the rows of chunks to path, atomically, in the
// trajectory contract's layout: the chunks in order, each chunk's rows in
// order, and each chunk starting a new row group (split further every
// opts.RowGroupRows rows when that is positive).
//
// Column types follow the Chunk fields that are set (non-nil): site is
// string (SiteStr) or int64 (SiteInt), traj string (TrajStr) or int64
// (TrajInt), action string (ActionStr) or int64 (ActionInt); step is int64,
// reward double, and the state is W double columns named
// opts.StateColumns, or one list<double> column of length W when opts.List
// is set. Column names come from opts.Columns (defaults for empty names).
// opts.IntSites is ignored: the chunks say the site type. Every chunk must
// set the same alternatives as the first and have the same W (a list state
// may vary in W from chunk to chunk); a chunk with zero rows still fixes the
// types, which is how a file with a schema and no rows is written.
//
// Unlike [WriteTrajectories], WriteChunks does not validate values: it
// writes NaN, out-of-range rewards, duplicate rows and gaps as given, so
// that tests can build inputs that [Read] must reject, and can write one
// table's rows shuffled or split across files. Chunk.Src is ignored.
//
// Only site, step and action are dictionary-encoded, so that chunks with
// many distinct trajectory ids, rewards or states always give the same
// bytes (see writerProps). WriteChunks is [WriteChunksSeq] over the slice.
func WriteChunks(path string, chunks []*traj.Chunk, opts WriteOptions) error {
	return writeChunksSeq(path, chunkSeq(chunks), opts, memory.DefaultAllocator)
}

// WriteChunksSeq writes the chunks of a sequence to path as they come, as
// [WriteChunks] writes the same chunks given as a slice: the same schema,
// row groups and bytes. Only the chunk being written is held, so a caller
// that makes each chunk when asked writes files larger than memory.
//
// The output is written to a temporary file beside path (created when the
// first chunk arrives) and renamed to path once the sequence ends; when the
// sequence yields an error, or a chunk cannot be written, WriteChunksSeq
// stops iterating, removes the temporary file and returns the error (the
// sequence's own error as it is, unwrapped). A chunk with zero rows is
// written only when it is the sequence's only chunk, as WriteChunks does.
func WriteChunksSeq(path string, chunks iter.Seq2[*traj.Chunk, error], opts WriteOptions) error {
	return writeChunksSeq(path, chunks, opts, memory.DefaultAllocator)
}

// chunkSeq yields the chunks of a slice.
func chunkSeq(chunks []*traj.Chunk) iter.Seq2[*traj.Chunk, error] {
	return func(yield func(*traj.Chunk, error) bool) {
		for _, c := range chunks {
			if !yield(c, nil) {
				return
			}
		}
	}
}

// chunkKinds records which alternative of each column pair a chunk sets.
type chunkKinds struct{ siteStr, trajStr, actionStr bool }

func kindsOf(c *traj.Chunk) chunkKinds {
	return chunkKinds{siteStr: c.SiteStr != nil, trajStr: c.TrajStr != nil, actionStr: c.ActionStr != nil}
}

func checkChunk(path string, i int, c *traj.Chunk, opts WriteOptions) error {
	if c == nil {
		return fmt.Errorf("parquetio: cannot write %s: chunk %d is nil", path, i)
	}
	n := len(c.Step)
	lens := []struct {
		name string
		n    int
	}{{"reward", len(c.Reward)}, {"site", len(c.SiteStr) + len(c.SiteInt)}, {"traj", len(c.TrajStr) + len(c.TrajInt)},
		{"action", len(c.ActionStr) + len(c.ActionInt)}, {"state", len(c.State)}}
	for _, l := range lens {
		want := n
		if l.name == "state" {
			want = n * c.W
		}
		if l.n != want {
			return fmt.Errorf("parquetio: cannot write %s: chunk %d has %d %s values for %d rows", path, i, l.n, l.name, n)
		}
	}
	if c.SiteStr != nil && c.SiteInt != nil || c.TrajStr != nil && c.TrajInt != nil || c.ActionStr != nil && c.ActionInt != nil {
		return fmt.Errorf("parquetio: cannot write %s: chunk %d sets both the string and the integer form of a column", path, i)
	}
	if !opts.List && c.W != len(opts.StateColumns) {
		return fmt.Errorf("parquetio: cannot write %s: chunk %d has state width %d but %d state columns are named (%v)", path, i, c.W, len(opts.StateColumns), opts.StateColumns)
	}
	return nil
}

func writeChunksSeq(path string, chunks iter.Seq2[*traj.Chunk, error], opts WriteOptions, mem memory.Allocator) error {
	if opts.List && len(opts.StateColumns) != 1 {
		return fmt.Errorf("parquetio: cannot write %s: a list state needs exactly one column name, got %v", path, opts.StateColumns)
	}
	cols := opts.Columns.WithDefaults()
	names := append([]string{cols.Site, cols.Traj, cols.Step, cols.Action, cols.Reward}, opts.StateColumns...)
	for i, name := range names {
		if slices.Contains(names[:i], name) {
			return fmt.Errorf("parquetio: cannot write %s: column name %q is used twice", path, name)
		}
	}
	w := &chunkWriter{path: path, opts: opts, mem: mem}
	defer w.abort()
	n := 0
	var empty *traj.Chunk // the first chunk when it has no rows
	for c, err := range chunks {
		if err != nil {
			return err
		}
		if err := checkChunk(path, n, c, opts); err != nil {
			return err
		}
		if n == 0 {
			if err := w.open(kindsOf(c)); err != nil {
				return err
			}
		} else if kindsOf(c) != w.kinds {
			return fmt.Errorf("parquetio: cannot write %s: chunk %d sets other column types than chunk 0", path, n)
		}
		switch {
		case c.Len() > 0:
			if err := w.write(c); err != nil {
				return err
			}
		case n == 0:
			empty = c
		}
		n++
	}
	if n == 0 {
		return fmt.Errorf("parquetio: cannot write %s: no chunks, so no column types", path)
	}
	if n == 1 && empty != nil {
		// A file with a schema and no rows.
		if err := w.write(empty); err != nil {
			return err
		}
	}
	return w.commit()
}

// chunkWriter writes chunks to a temporary file that commit renames to its
// path and abort removes.
type chunkWriter struct {
	path  string
	opts  WriteOptions
	mem   memory.Allocator
	kinds chunkKinds
	f     *fileio.File
	fw    *pqarrow.FileWriter // nil once closed
	rb    *array.RecordBuilder
}

// open creates the temporary file and the Parquet writer for chunks of the
// given kinds.
func (w *chunkWriter) open(kinds chunkKinds) error {
	w.kinds = kinds
	cols := w.opts.Columns.WithDefaults()
	pick := func(str bool) arrow.DataType {
		if str {
			return arrow.BinaryTypes.String
		}
		return arrow.PrimitiveTypes.Int64
	}
	fields := []arrow.Field{
		{Name: cols.Site, Type: pick(kinds.siteStr)},
		{Name: cols.Traj, Type: pick(kinds.trajStr)},
		{Name: cols.Step, Type: arrow.PrimitiveTypes.Int64},
		{Name: cols.Action, Type: pick(kinds.actionStr)},
		{Name: cols.Reward, Type: arrow.PrimitiveTypes.Float64},
	}
	if w.opts.List {
		fields = append(fields, arrow.Field{Name: w.opts.StateColumns[0], Type: arrow.ListOfNonNullable(arrow.PrimitiveTypes.Float64)})
	} else {
		for _, name := range w.opts.StateColumns {
			fields = append(fields, arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Float64, Nullable: w.opts.NullNaN})
		}
	}
	sc := arrow.NewSchema(fields, nil)
	rgRows := w.opts.RowGroupRows
	if rgRows <= 0 {
		rgRows = DefaultRowGroupRows
	}
	f, err := fileio.CreateAtomic(w.path)
	if err != nil {
		return err
	}
	w.f = f
	props := writerProps(w.mem, int64(rgRows), dictionary(cols))
	fw, err := pqarrow.NewFileWriter(sc, f, props, pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(w.mem)))
	if err != nil {
		return fmt.Errorf("parquetio: cannot write %s: %w", w.path, err)
	}
	w.fw = fw
	w.rb = array.NewRecordBuilder(w.mem, sc)
	return nil
}

// write writes c's rows as one record: one row group, or more of at most
// RowGroupRows rows.
func (w *chunkWriter) write(c *traj.Chunk) error {
	appendChunk(w.rb, c, w.kinds, w.opts.List, w.opts.NullNaN)
	rec := w.rb.NewRecordBatch()
	err := w.fw.Write(rec)
	rec.Release()
	if err != nil {
		w.fw = nil // Write closes the writer on failure
		return fmt.Errorf("parquetio: cannot write %s: %w", w.path, err)
	}
	return nil
}

// commit closes the Parquet writer and renames the file into place.
func (w *chunkWriter) commit() error {
	fw := w.fw
	w.fw = nil
	if err := fw.Close(); err != nil {
		return fmt.Errorf("parquetio: cannot write %s: %w", w.path, err)
	}
	return w.f.Commit()
}

// abort releases what open made and removes the temporary file, unless
// commit succeeded.
func (w *chunkWriter) abort() {
	if w.fw != nil {
		w.fw.Close()
	}
	if w.rb != nil {
		w.rb.Release()
	}
	if w.f != nil {
		w.f.Abort()
	}
}

// appendChunk appends c's rows to rb, whose fields are site, traj, step,
// action, reward and the state (NaN state values as NULL when nullNaN).
func appendChunk(rb *array.RecordBuilder, c *traj.Chunk, k chunkKinds, list, nullNaN bool) {
	if k.siteStr {
		rb.Field(0).(*array.StringBuilder).AppendValues(c.SiteStr, nil)
	} else {
		rb.Field(0).(*array.Int64Builder).AppendValues(c.SiteInt, nil)
	}
	if k.trajStr {
		rb.Field(1).(*array.StringBuilder).AppendValues(c.TrajStr, nil)
	} else {
		rb.Field(1).(*array.Int64Builder).AppendValues(c.TrajInt, nil)
	}
	rb.Field(2).(*array.Int64Builder).AppendValues(c.Step, nil)
	if k.actionStr {
		rb.Field(3).(*array.StringBuilder).AppendValues(c.ActionStr, nil)
	} else {
		rb.Field(3).(*array.Int64Builder).AppendValues(c.ActionInt, nil)
	}
	rb.Field(4).(*array.Float64Builder).AppendValues(c.Reward, nil)
	n, w := c.Len(), c.W
	if list {
		lb := rb.Field(5).(*array.ListBuilder)
		vb := lb.ValueBuilder().(*array.Float64Builder)
		for i := range n {
			lb.Append(true)
			vb.AppendValues(c.State[i*w:(i+1)*w], nil)
		}
		return
	}
	for j := range w {
		b := rb.Field(5 + j).(*array.Float64Builder)
		b.Reserve(n)
		for i := range n {
			if v := c.State[i*w+j]; nullNaN && math.IsNaN(v) {
				b.UnsafeAppendBoolToBitmap(false)
			} else {
				b.UnsafeAppend(v)
			}
		}
	}
}
