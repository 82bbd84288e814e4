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
	readers := make([]*file.Float64ColumnChunkReader, w)
	for j, c := range cols {
		cr, err := column(rg, c, t.loc)
		if err != nil {
			return false
		}
		defer cr.Close()
		r, isFloat := cr.(*file.Float64ColumnChunkReader)
		if !isFloat {
			return false
		}
		readers[j] = r
	}
	if len(bufs.cols) < w {
		bufs.cols = make([][]float64, w)
	}
	for j := range w {
		if len(bufs.cols[j]) < stateBatch {
			bufs.cols[j] = make([]float64, stateBatch)
		}
	}
	if len(bufs.rows) < stateBatch*w {
		bufs.rows = make([]float64, stateBatch*w)
	}
	if len(bufs.defs) < stateBatch {
		bufs.defs = make([]int16, stateBatch)
	}
	c := &traj.Chunk{Src: traj.Origin{File: t.loc.file, RowGroup: t.loc.rg, Row: t.loc.row0}, W: w}
	for got := 0; got < n; {
		if ctx.Err() != nil {
			return false
		}
		want := min(stateBatch, n-got)
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
		rows := bufs.rows[:want*w]
		for j := range w {
			for i, v := range bufs.cols[j][:want] {
				rows[i*w+j] = v
			}
		}
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
