package parquetio

import (
	"fmt"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/grmdp/grmdp/io/fileio"
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
func WriteChunks(path string, chunks []*Chunk, opts WriteOptions) error {
	return writeChunks(path, chunks, opts, memory.DefaultAllocator)
}

// chunkKinds records which alternative of each column pair a chunk sets.
type chunkKinds struct{ siteStr, trajStr, actionStr bool }

func kindsOf(c *Chunk) chunkKinds {
	return chunkKinds{siteStr: c.SiteStr != nil, trajStr: c.TrajStr != nil, actionStr: c.ActionStr != nil}
}

func checkChunk(path string, i int, c *Chunk, opts WriteOptions) error {
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

func writeChunks(path string, chunks []*Chunk, opts WriteOptions, mem memory.Allocator) (err error) {
	if len(chunks) == 0 {
		return fmt.Errorf("parquetio: cannot write %s: no chunks, so no column types", path)
	}
	if opts.List && len(opts.StateColumns) != 1 {
		return fmt.Errorf("parquetio: cannot write %s: a list state needs exactly one column name, got %v", path, opts.StateColumns)
	}
	kinds := kindsOf(chunks[0])
	for i, c := range chunks {
		if err := checkChunk(path, i, c, opts); err != nil {
			return err
		}
		if kindsOf(c) != kinds {
			return fmt.Errorf("parquetio: cannot write %s: chunk %d sets other column types than chunk 0", path, i)
		}
	}
	cols := opts.Columns.withDefaults()
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
				return fmt.Errorf("parquetio: cannot write %s: column name %q is used twice", path, f.Name)
			}
		}
	}
	sc := arrow.NewSchema(fields, nil)
	rgRows := opts.RowGroupRows
	if rgRows <= 0 {
		rgRows = DefaultRowGroupRows
	}

	f, err := fileio.CreateAtomic(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	fw, err := pqarrow.NewFileWriter(sc, f, writerProps(mem, int64(rgRows)), pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(mem)))
	if err != nil {
		return fmt.Errorf("parquetio: cannot write %s: %w", path, err)
	}
	closed := false
	defer func() {
		if !closed {
			fw.Close()
		}
	}()
	rb := array.NewRecordBuilder(mem, sc)
	defer rb.Release()
	for _, c := range chunks {
		if c.Len() == 0 && len(chunks) > 1 {
			continue
		}
		appendChunk(rb, c, kinds, opts.List)
		rec := rb.NewRecordBatch()
		err := fw.Write(rec)
		rec.Release()
		if err != nil {
			closed = true // Write closes the writer on failure
			return fmt.Errorf("parquetio: cannot write %s: %w", path, err)
		}
	}
	closed = true
	if err := fw.Close(); err != nil {
		return fmt.Errorf("parquetio: cannot write %s: %w", path, err)
	}
	return f.Commit()
}

// appendChunk appends c's rows to rb, whose fields are site, traj, step,
// action, reward and the state.
func appendChunk(rb *array.RecordBuilder, c *Chunk, k chunkKinds, list bool) {
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
			b.UnsafeAppend(c.State[i*w+j])
		}
	}
}

// Chunk returns t's rows as one Chunk, in the Table's order (by step, then
// site, then trajectory): sites as labels (SiteStr), or as integers
// (SiteInt) when intSites is set and every label is a decimal integer;
// trajectories as their global ordinal (TrajInt); actions as labels when
// t.Actions is not nil, integers otherwise. With [WriteChunks] it writes a
// table's rows in any order or split across files, which must read back as
// the same Table. It fails on tables with row weights, which have no
// one-row-per-transition form.
func (t *Table) Chunk(intSites bool) (*Chunk, error) {
	c := &Chunk{W: t.W, Step: []int64{}, Reward: []float64{}, State: []float64{}, TrajInt: []int64{}}
	var siteInts []int64
	if intSites {
		siteInts = make([]int64, len(t.Sites))
		for k, s := range t.Sites {
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("parquetio: site %q is not an integer", s)
			}
			siteInts[k] = v
		}
		c.SiteInt = []int64{}
	} else {
		c.SiteStr = []string{}
	}
	if t.Actions != nil {
		c.ActionStr = []string{}
	} else {
		c.ActionInt = []int64{}
	}
	for h := range t.Steps {
		st := &t.Steps[h]
		if st.Weight != nil {
			return nil, fmt.Errorf("parquetio: step %d has row weights, which have no one-row-per-transition form", h+1)
		}
		for k := range len(st.SiteStart) - 1 {
			for j := int(st.SiteStart[k]); j < int(st.SiteStart[k+1]); j++ {
				if intSites {
					c.SiteInt = append(c.SiteInt, siteInts[k])
				} else {
					c.SiteStr = append(c.SiteStr, t.Sites[k])
				}
				c.TrajInt = append(c.TrajInt, int64(st.Traj[j]))
				c.Step = append(c.Step, int64(h+1))
				if t.Actions != nil {
					c.ActionStr = append(c.ActionStr, t.Actions[st.Action[j]])
				} else {
					c.ActionInt = append(c.ActionInt, int64(st.Action[j]))
				}
				c.Reward = append(c.Reward, st.Reward[j])
				c.State = append(c.State, st.State[j*t.W:(j+1)*t.W]...)
			}
		}
	}
	return c, nil
}

// Select returns a new Chunk holding the rows of c at idx, in that order.
func (c *Chunk) Select(idx []int) *Chunk {
	out := &Chunk{Src: c.Src, W: c.W, Step: make([]int64, 0, len(idx)), Reward: make([]float64, 0, len(idx)), State: make([]float64, 0, len(idx)*c.W)}
	pickS := func(src []string) []string {
		if src == nil {
			return nil
		}
		dst := make([]string, 0, len(idx))
		for _, i := range idx {
			dst = append(dst, src[i])
		}
		return dst
	}
	pickI := func(src []int64) []int64 {
		if src == nil {
			return nil
		}
		dst := make([]int64, 0, len(idx))
		for _, i := range idx {
			dst = append(dst, src[i])
		}
		return dst
	}
	out.SiteStr, out.SiteInt = pickS(c.SiteStr), pickI(c.SiteInt)
	out.TrajStr, out.TrajInt = pickS(c.TrajStr), pickI(c.TrajInt)
	out.ActionStr, out.ActionInt = pickS(c.ActionStr), pickI(c.ActionInt)
	out.Step = pickI(c.Step)
	for _, i := range idx {
		out.Reward = append(out.Reward, c.Reward[i])
		out.State = append(out.State, c.State[i*c.W:(i+1)*c.W]...)
	}
	return out
}
