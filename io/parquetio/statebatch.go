package parquetio

import (
	"context"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/grmdp/grmdp/traj"
)

// stateBatch is the number of rows the second pass decodes at a time when
// it reads the state columns in lockstep (placeStatesBatched).
const stateBatch = 1 << 16

// batchedStates reports whether the second pass can read the state columns
// of lay in lockstep batches: two or more flat double columns. (One column
// is decoded straight into its chunk already.)
func batchedStates(lay *layout) bool {
	if len(lay.state) < 2 {
		return false
	}
	for _, c := range lay.state {
		if c.list || c.conv != convFloat64 {
			return false
		}
	}
	return true
}

// stateBufs are one worker's buffers for placeStatesBatched.
type stateBufs struct {
	cols [][]float64 // per column, one batch
	rows []float64   // one batch of rows, interleaved
	defs []int16
}

// placeStatesBatched is the second pass's decode and placeStates for one
// row group whose state columns batchedStates accepts, without a chunk of
// the whole row group's states: it reads stateBatch rows of every column at
// a time, checks them as placeStates does and writes each row to its place
// in all. It returns false when anything is amiss (a decode error, a null,
// a row count that differs from n, a value the checks reject): nothing is
// reported then, and the caller takes the general path, which decodes the
// row group again and reports the error the single pass would. Rows it
// wrote before are written again there.
func placeStatesBatched(ctx context.Context, p *placer, t rgTask, props *parquet.ReaderProperties, n, off int, places []int32, all []float64, bufs *stateBufs) (ok bool) {
	defer func() {
		if r := recover(); r != nil {
			ok = false
		}
	}()
	fr, err := openReader(t.fi, props)
	if err != nil {
		return false
	}
	defer fr.Close()
	rg := fr.RowGroup(t.loc.rg)
	if rg.NumRows() != int64(n) {
		return false
	}
	cols := t.fi.lay.state
	w := len(cols)
	if w != p.w {
		return false
	}
	readers, closeReaders, opened := floatStateReaders(rg, cols, t.loc)
	if !opened {
		return false
	}
	defer closeReaders()
	bufs.grow(w)
	c := &traj.Chunk{Src: traj.Origin{File: t.loc.file, RowGroup: t.loc.rg, Row: t.loc.row0}, W: w}
	for got := 0; got < n; {
		if ctx.Err() != nil {
			return false
		}
		want := min(stateBatch, n-got)
		if !readStateBatch(readers, cols, bufs, want) {
			return false
		}
		rows := bufs.interleave(w, want)
		// The checks of placeStates, on this batch's rows; an error is
		// left to the general path.
		c.State = rows
		c.Src.Row = t.loc.row0 + int64(got)
		if err := p.states(c, want); err != nil {
			return false
		}
		scatterRows(all, rows, places[off+got:off+got+want], w)
		got += want
	}
	for _, r := range readers {
		if r.HasNext() {
			return false // more values than rows: the general path says so
		}
	}
	return true
}

// floatStateReaders opens the column chunk of each of cols in rg, all of
// them double columns, and gives a function that closes them (last opened
// first). It returns false, with every chunk it opened closed, when one
// cannot be opened or is not of doubles (or opening one panics).
func floatStateReaders(rg *file.RowGroupReader, cols []*colSpec, loc rgLoc) (readers []*file.Float64ColumnChunkReader, closeAll func(), ok bool) {
	var opened []file.ColumnChunkReader
	closeOpened := func() {
		for i := len(opened) - 1; i >= 0; i-- {
			opened[i].Close()
		}
	}
	defer func() {
		if !ok {
			closeOpened()
		}
	}()
	readers = make([]*file.Float64ColumnChunkReader, len(cols))
	for j, c := range cols {
		cr, err := column(rg, c, loc)
		if err != nil {
			return nil, nil, false
		}
		opened = append(opened, cr)
		r, isFloat := cr.(*file.Float64ColumnChunkReader)
		if !isFloat {
			return nil, nil, false
		}
		readers[j] = r
	}
	return readers, closeOpened, true
}

// grow makes b hold one batch of w columns.
func (b *stateBufs) grow(w int) {
	if len(b.cols) < w {
		b.cols = make([][]float64, w)
	}
	for j := range w {
		if len(b.cols[j]) < stateBatch {
			b.cols[j] = make([]float64, stateBatch)
		}
	}
	if len(b.rows) < stateBatch*w {
		b.rows = make([]float64, stateBatch*w)
	}
	if len(b.defs) < stateBatch {
		b.defs = make([]int16, stateBatch)
	}
}

// readStateBatch reads the next want values of each column (readers[j]
// reading cols[j]) into bufs.cols. It returns false on a decode error, a
// column that ends early, or a null.
func readStateBatch(readers []*file.Float64ColumnChunkReader, cols []*colSpec, bufs *stateBufs, want int) bool {
	for j, r := range readers {
		vals := bufs.cols[j][:want]
		var defs []int16
		if cols[j].maxDef > 0 {
			defs = bufs.defs[:want]
		}
		for read := 0; read < want; {
			var dl []int16
			if defs != nil {
				dl = defs[read:]
			}
			total, nv, err := r.ReadBatch(int64(want-read), vals[read:], dl, nil)
			if err != nil || total == 0 || int64(nv) != total {
				return false
			}
			read += int(total)
		}
	}
	return true
}

// interleave gives the batch's first want rows of w columns in b.cols as
// rows, interleaved, in b.rows.
func (b *stateBufs) interleave(w, want int) []float64 {
	rows := b.rows[:want*w]
	for j := range w {
		for i, v := range b.cols[j][:want] {
			rows[i*w+j] = v
		}
	}
	return rows
}
