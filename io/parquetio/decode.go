package parquetio

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/apache/arrow-go/v18/arrow/float16"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/grmdp/grmdp/internal/hugepage"
	"github.com/grmdp/grmdp/traj"
)

// batchLevels is the number of levels (rows, for flat columns) read per
// ReadBatch call: large enough to amortise the call, small enough that a
// worker's scratch buffers stay in cache-friendly sizes.
const batchLevels = 1 << 14

// reuse returns buf emptied when it can hold n values, else a new slice of
// capacity n.
func reuse[T any](buf []T, n int64) []T {
	if int64(cap(buf)) >= n {
		return buf[:0]
	}
	return make([]T, 0, n)
}

// maxListPresize bounds the values a list column's output is sized for up
// front from its footer (1 GiB of float64s).
const maxListPresize = 1 << 27

// capHint bounds the capacity allocated up front from a footer's row count,
// so that a corrupt footer claiming billions of rows cannot exhaust memory
// before the data runs out.
const capHint = 1 << 20

// internMax bounds the string intern table of one decoder.
const internMax = 1 << 16

// rgLoc locates a row group for messages.
type rgLoc struct {
	file string
	rg   int
	row0 int64 // index of the row group's first row in the file
}

func (l rgLoc) parquetErr(col, format string, args ...any) error {
	return &traj.RowError{File: l.file, RowGroup: l.rg, Row: -1, Column: col, Msg: fmt.Sprintf(format, args...), Err: ErrParquet}
}

func (l rgLoc) badValue(col string, i int64, format string, args ...any) error {
	return l.badValueOf(ErrBadData, col, i, format, args...)
}

// badValueOf is badValue for an error that wraps sentinel, ErrBadData or
// a sentinel that wraps it.
func (l rgLoc) badValueOf(sentinel error, col string, i int64, format string, args ...any) error {
	return &traj.RowError{File: l.file, RowGroup: l.rg, Row: l.row0 + i, Column: col, Msg: fmt.Sprintf(format, args...), Err: sentinel}
}

func (l rgLoc) null(c *colSpec, i int64) error {
	if c.nullHint {
		return l.badValueOf(traj.ErrNull, c.name, i, "null value: every row needs a value in this column; impute such rows")
	}
	return l.badValue(c.name, i, "null value: every row needs a value in this column; drop or impute such rows before solving")
}

// decoder holds one worker's scratch buffers. The buffers are reused from
// row group to row group; nothing in them outlives a call.
type decoder struct {
	defs, reps []int16
	i32        []int32
	i64        []int64
	f32        []float32
	f64        []float64
	ba         []parquet.ByteArray
	fl         []parquet.FixedLenByteArray
	tmp        []float64
	strs       map[string]string
	// missing, when not nil, marks the rows of the row group being decoded
	// that hold a null in a nullable column (colSpec.nullable).
	missing []bool
}

var decoderPool = sync.Pool{New: func() any { return &decoder{strs: map[string]string{}} }}

func scratch[T any](buf *[]T) []T {
	if len(*buf) < batchLevels {
		*buf = make([]T, batchLevels)
	}
	return (*buf)[:batchLevels]
}

// typedReader is the part of arrow-go's typed column chunk readers we use.
type typedReader[T any] interface {
	ReadBatch(batchSize int64, values []T, defLvls, repLvls []int16) (int64, int, error)
	HasNext() bool
	Err() error
}

// readFlat reads the n rows of a non-repeated column chunk. It calls emit
// with each batch's values and the index (within the row group) of the
// batch's first row. A null is an error naming its row, unless the column
// is nullable and missing is given: then the null's row is marked in
// missing and emitted with T's zero value.
func readFlat[T any](ctx context.Context, r typedReader[T], c *colSpec, n int64, loc rgLoc, vals []T, defs []int16, missing []bool, emit func(off int64, vals []T) error) error {
	var got int64
	for got < n {
		if err := ctx.Err(); err != nil {
			return err
		}
		want := min(n-got, int64(len(vals)))
		var dl []int16
		if c.maxDef > 0 {
			dl = defs[:want]
		}
		total, nv, err := r.ReadBatch(want, vals[:want], dl, nil)
		if err != nil {
			return loc.parquetErr(c.name, "cannot decode: %v", err)
		}
		if total < want {
			if err := r.Err(); err != nil {
				return loc.parquetErr(c.name, "cannot decode: %v", err)
			}
		}
		if total == 0 {
			return loc.parquetErr(c.name, "the column chunk holds %d values but the row group has %d rows", got, n)
		}
		if int64(nv) < total {
			if c.nullable && missing != nil {
				spread := make([]T, total)
				k := 0
				for i := range total {
					if dl[i] < c.maxDef {
						missing[got+i] = true
						continue
					}
					if k == nv {
						return loc.parquetErr(c.name, "the column chunk has fewer values than definition levels")
					}
					spread[i] = vals[k]
					k++
				}
				if err := emit(got, spread); err != nil {
					return err
				}
				got += total
				continue
			}
			for i := range total {
				if dl[i] < c.maxDef {
					return loc.null(c, got+i)
				}
			}
			return loc.parquetErr(c.name, "the column chunk has fewer values than definition levels")
		}
		if err := emit(got, vals[:nv]); err != nil {
			return err
		}
		got += total
	}
	return nil
}

// column opens the reader of one column chunk. The caller must Close it.
func column(rg *file.RowGroupReader, c *colSpec, loc rgLoc) (file.ColumnChunkReader, error) {
	cr, err := rg.Column(c.leaf)
	if err != nil {
		return nil, loc.parquetErr(c.name, "cannot read the column chunk: %v", err)
	}
	if cr == nil {
		return nil, loc.parquetErr(c.name, "cannot read the column chunk: corrupt column metadata")
	}
	return cr, nil
}

func physicalMismatch(c *colSpec, loc rgLoc, cr file.ColumnChunkReader) error {
	return loc.parquetErr(c.name, "the column chunk has physical type %s, the schema says %s", cr.Type(), c.typ)
}

// ints appends the n values of an integer column to dst.
func (d *decoder) ints(ctx context.Context, rg *file.RowGroupReader, c *colSpec, n int64, loc rgLoc, dst []int64) (_ []int64, err error) {
	cr, err := column(rg, c, loc)
	if err != nil {
		return nil, err
	}
	defer cr.Close()
	defs := scratch(&d.defs)
	switch c.conv {
	case convInt32, convUint32:
		r, ok := cr.(*file.Int32ColumnChunkReader)
		if !ok {
			return nil, physicalMismatch(c, loc, cr)
		}
		unsigned := c.conv == convUint32
		err = readFlat(ctx, r, c, n, loc, scratch(&d.i32), defs, d.missing, func(_ int64, vals []int32) error {
			if unsigned {
				for _, v := range vals {
					dst = append(dst, int64(uint32(v)))
				}
			} else {
				for _, v := range vals {
					dst = append(dst, int64(v))
				}
			}
			return nil
		})
	case convInt64, convUint64:
		r, ok := cr.(*file.Int64ColumnChunkReader)
		if !ok {
			return nil, physicalMismatch(c, loc, cr)
		}
		unsigned := c.conv == convUint64
		err = readFlat(ctx, r, c, n, loc, scratch(&d.i64), defs, d.missing, func(off int64, vals []int64) error {
			if unsigned {
				for i, v := range vals {
					if v < 0 {
						return loc.badValue(c.name, off+int64(i), "value %d is too large (above %d)", uint64(v), int64(^uint64(0)>>1))
					}
				}
			}
			dst = append(dst, vals...)
			return nil
		})
	default:
		if !c.conv.isDec() {
			return nil, loc.parquetErr(c.name, "internal error: column of type %s read as integers", c.typ)
		}
		err = d.decimals(ctx, cr, c, n, loc, func(off int64, i int, u decimal) error {
			v, ok := u.integer(c.scale)
			if !ok {
				return loc.badValue(c.name, off+int64(i), "decimal value %s is not a whole number (or is too large); this column needs integers", u.format(c.scale))
			}
			dst = append(dst, v)
			return nil
		})
	}
	return dst, err
}

// floats appends the n values of a numeric column to dst, as float64.
func (d *decoder) floats(ctx context.Context, rg *file.RowGroupReader, c *colSpec, n int64, loc rgLoc, dst []float64) (_ []float64, err error) {
	cr, err := column(rg, c, loc)
	if err != nil {
		return nil, err
	}
	defer cr.Close()
	defs := scratch(&d.defs)
	mismatch := func() ([]float64, error) { return nil, physicalMismatch(c, loc, cr) }
	switch c.conv {
	case convFloat64:
		r, ok := cr.(*file.Float64ColumnChunkReader)
		if !ok {
			return mismatch()
		}
		err = readFlat(ctx, r, c, n, loc, scratch(&d.f64), defs, d.missing, func(_ int64, vals []float64) error {
			dst = append(dst, vals...)
			return nil
		})
	case convFloat32:
		r, ok := cr.(*file.Float32ColumnChunkReader)
		if !ok {
			return mismatch()
		}
		err = readFlat(ctx, r, c, n, loc, scratch(&d.f32), defs, d.missing, func(_ int64, vals []float32) error {
			for _, v := range vals {
				dst = append(dst, float64(v))
			}
			return nil
		})
	case convFloat16:
		r, ok := cr.(*file.FixedLenByteArrayColumnChunkReader)
		if !ok {
			return mismatch()
		}
		err = readFlat(ctx, r, c, n, loc, scratch(&d.fl), defs, d.missing, func(off int64, vals []parquet.FixedLenByteArray) error {
			for i, v := range vals {
				if len(v) == 0 && d.missing != nil && d.missing[off+int64(i)] {
					dst = append(dst, 0)
					continue
				}
				if len(v) != 2 {
					return loc.parquetErr(c.name, "row %d: float16 value of %d bytes", loc.row0+off+int64(i), len(v))
				}
				dst = append(dst, float64(float16.FromBits(binary.LittleEndian.Uint16(v)).Float32()))
			}
			return nil
		})
	case convInt32, convUint32:
		r, ok := cr.(*file.Int32ColumnChunkReader)
		if !ok {
			return mismatch()
		}
		unsigned := c.conv == convUint32
		err = readFlat(ctx, r, c, n, loc, scratch(&d.i32), defs, d.missing, func(_ int64, vals []int32) error {
			for _, v := range vals {
				if unsigned {
					dst = append(dst, float64(uint32(v)))
				} else {
					dst = append(dst, float64(v))
				}
			}
			return nil
		})
	case convInt64, convUint64:
		r, ok := cr.(*file.Int64ColumnChunkReader)
		if !ok {
			return mismatch()
		}
		unsigned := c.conv == convUint64
		err = readFlat(ctx, r, c, n, loc, scratch(&d.i64), defs, d.missing, func(_ int64, vals []int64) error {
			for _, v := range vals {
				if unsigned {
					dst = append(dst, float64(uint64(v)))
				} else {
					dst = append(dst, float64(v))
				}
			}
			return nil
		})
	default:
		if !c.conv.isDec() {
			return nil, loc.parquetErr(c.name, "internal error: column of type %s read as numbers", c.typ)
		}
		err = d.decimals(ctx, cr, c, n, loc, func(_ int64, _ int, u decimal) error {
			dst = append(dst, u.float(c.scale))
			return nil
		})
	}
	return dst, err
}

// strings appends the n values of a string column to dst. Repeated values
// share one Go string.
func (d *decoder) strings(ctx context.Context, rg *file.RowGroupReader, c *colSpec, n int64, loc rgLoc, dst []string) (_ []string, err error) {
	cr, err := column(rg, c, loc)
	if err != nil {
		return nil, err
	}
	defer cr.Close()
	r, ok := cr.(*file.ByteArrayColumnChunkReader)
	if !ok {
		return nil, physicalMismatch(c, loc, cr)
	}
	if len(d.strs) > internMax {
		clear(d.strs)
	}
	prev := ""
	err = readFlat(ctx, r, c, n, loc, scratch(&d.ba), scratch(&d.defs), d.missing, func(_ int64, vals []parquet.ByteArray) error {
		for _, v := range vals {
			if string(v) == prev {
				dst = append(dst, prev)
				continue
			}
			s, ok := d.strs[string(v)]
			if !ok {
				s = string(v)
				if len(d.strs) < internMax {
					d.strs[s] = s
				}
			}
			prev = s
			dst = append(dst, s)
		}
		return nil
	})
	return dst, err
}

// list reads the n rows of a list<float|double> column. Every row must hold
// the same number of values w; it returns the values, n*w of them.
func (d *decoder) list(ctx context.Context, rg *file.RowGroupReader, c *colSpec, n int64, loc rgLoc) ([]float64, int, error) {
	cr, err := column(rg, c, loc)
	if err != nil {
		return nil, 0, err
	}
	defer cr.Close()
	// Once the first row gives the lists' width, the output is sized for
	// every row at once, up to what the column chunk's uncompressed size
	// can hold and never more than maxListPresize values: footers are not
	// trusted with memory (a size that lies past the cap gets the output
	// grown by appending, as without the presizing).
	var limit int64
	if md, err := rg.MetaData().ColumnChunk(c.leaf); err == nil {
		limit = min(2*md.TotalUncompressedSize()/8+1<<17, maxListPresize)
	}
	switch c.conv {
	case convFloat64:
		r, ok := cr.(*file.Float64ColumnChunkReader)
		if !ok {
			return nil, 0, physicalMismatch(c, loc, cr)
		}
		return readList(ctx, r, c, n, loc, scratch(&d.f64), scratch(&d.defs), scratch(&d.reps), limit)
	case convFloat32:
		r, ok := cr.(*file.Float32ColumnChunkReader)
		if !ok {
			return nil, 0, physicalMismatch(c, loc, cr)
		}
		return readList(ctx, r, c, n, loc, scratch(&d.f32), scratch(&d.defs), scratch(&d.reps), limit)
	}
	return nil, 0, loc.parquetErr(c.name, "internal error: list column of type %s", c.typ)
}

func readList[T float32 | float64](ctx context.Context, r typedReader[T], c *colSpec, n int64, loc rgLoc, vals []T, defs, reps []int16, limit int64) ([]float64, int, error) {
	out := make([]float64, 0, min(n, capHint))
	w := -1
	var rows int64 // rows started
	cur := 0       // length of the current row's list
	endRow := func() error {
		row := rows - 1
		if cur == 0 {
			return loc.badValue(c.name, row, "empty list: every row needs the state's values")
		}
		if w < 0 {
			w = cur
			// n rows of w values, instead of growing by doubling
			// (each growth a copy, and garbage the size of the output).
			if want := n * int64(w); want <= limit && want > int64(cap(out)) {
				grown := hugepage.MakeCap[float64](len(out), int(want))
				copy(grown, out)
				out = grown
			}
		}
		if cur != w {
			return loc.badValue(c.name, row, "list of length %d, but earlier rows have length %d", cur, w)
		}
		return nil
	}
	for {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		total, _, err := r.ReadBatch(int64(len(vals)), vals, defs, reps)
		if err != nil {
			return nil, 0, loc.parquetErr(c.name, "cannot decode: %v", err)
		}
		if total < int64(len(vals)) {
			if err := r.Err(); err != nil {
				return nil, 0, loc.parquetErr(c.name, "cannot decode: %v", err)
			}
		}
		if total == 0 {
			break
		}
		k := 0
		for i := range total {
			if reps[i] == 0 {
				if rows > 0 {
					if err := endRow(); err != nil {
						return nil, 0, err
					}
				}
				if rows == n {
					return nil, 0, loc.parquetErr(c.name, "the column chunk holds more than the row group's %d rows", n)
				}
				rows++
				cur = 0
			} else if rows == 0 {
				return nil, 0, loc.parquetErr(c.name, "corrupt repetition levels: the first value does not start a row")
			}
			def := defs[i]
			if def < c.listDef {
				if def < c.listDef-1 {
					return nil, 0, loc.null(c, rows-1)
				}
				continue // an empty list
			}
			if def < c.maxDef {
				return nil, 0, loc.badValue(c.name, rows-1, "element %d is null", cur)
			}
			out = append(out, float64(vals[k]))
			k++
			cur++
		}
	}
	if rows > 0 {
		if err := endRow(); err != nil {
			return nil, 0, err
		}
	}
	if rows != n {
		return nil, 0, loc.parquetErr(c.name, "the column chunk holds %d rows but the row group has %d", rows, n)
	}
	if w < 0 {
		w = 0
	}
	return out, w, nil
}

// rowDst, when given to decodeRowGroup, holds arrays that integer columns
// and rewards are decoded into instead of new ones, each a slice of length
// 0: their places in the placer's arrays (integer trajectory ids and
// rewards, see placer.slots; capacity the footer's row count) or a
// worker's buffers reused from row group to row group (Scan). A nil slice
// gets a new array, and so does one too small for the row group. The state
// uses state's array when it is large enough.
type rowDst struct {
	site, traj, step, action []int64
	reward, state            []float64
}

// decodeRowGroup decodes the contract columns of one row group into a
// Chunk.
// With skipState it decodes every column but the state's.
func (d *decoder) decodeRowGroup(ctx context.Context, fr *file.Reader, lay *layout, hiveInt bool, loc rgLoc, skipState bool, into *rowDst) (*traj.Chunk, error) {
	rg := fr.RowGroup(loc.rg)
	n := rg.NumRows()
	if n < 0 {
		return nil, loc.parquetErr("", "corrupt footer: the row group has %d rows", n)
	}
	hint := min(n, capHint)
	ch := &traj.Chunk{Src: traj.Origin{File: loc.file, RowGroup: loc.rg, Row: loc.row0}}
	if into == nil {
		into = &rowDst{}
	}
	ints := func(dst []int64) []int64 {
		if dst == nil {
			return make([]int64, 0, hint)
		}
		return dst[:0]
	}
	var err error
	if lay.nullable() {
		d.missing = make([]bool, n)
		defer func() { d.missing = nil }()
	}
	intOrString := func(c *colSpec, vals *[]int64, strs *[]string, dst []int64) error {
		if c.conv == convString {
			*strs, err = d.strings(ctx, rg, c, n, loc, make([]string, 0, hint))
		} else {
			*vals, err = d.ints(ctx, rg, c, n, loc, ints(dst))
		}
		return err
	}
	rewardDst := into.reward[:0]
	if into.reward == nil {
		rewardDst = make([]float64, 0, hint)
	}
	switch {
	case lay.site != nil:
		if err := intOrString(lay.site, &ch.SiteInt, &ch.SiteStr, into.site); err != nil {
			return nil, err
		}
	case hiveInt:
		v, err := strconv.ParseInt(lay.hiveSite, 10, 64)
		if err != nil {
			return nil, loc.parquetErr("", "internal error: hive site %q is not an integer", lay.hiveSite)
		}
		ch.SiteInt = make([]int64, n)
		for i := range ch.SiteInt {
			ch.SiteInt[i] = v
		}
	default:
		ch.SiteStr = make([]string, n)
		for i := range ch.SiteStr {
			ch.SiteStr[i] = lay.hiveSite
		}
	}
	if err := intOrString(lay.traj, &ch.TrajInt, &ch.TrajStr, into.traj); err != nil {
		return nil, err
	}
	if ch.Step, err = d.ints(ctx, rg, lay.step, n, loc, ints(into.step)); err != nil {
		return nil, err
	}
	if lay.shift != 0 {
		for i := range ch.Step {
			ch.Step[i] += lay.shift
		}
	}
	if err := intOrString(lay.action, &ch.ActionInt, &ch.ActionStr, into.action); err != nil {
		return nil, err
	}
	if ch.Reward, err = d.floats(ctx, rg, lay.reward, n, loc, rewardDst); err != nil {
		return nil, err
	}
	if !skipState {
		if err := d.decodeState(ctx, rg, lay.state, n, loc, ch, into.state); err != nil {
			return nil, err
		}
	}
	if d.missing != nil && slices.Contains(d.missing, true) {
		ch.Missing = d.missing
	}
	return ch, nil
}

// decodeState fills ch.State and ch.W from the state columns.
// Its array is a new one, or buf's when buf is given and large enough.
func (d *decoder) decodeState(ctx context.Context, rg *file.RowGroupReader, cols []*colSpec, n int64, loc rgLoc, ch *traj.Chunk, buf []float64) error {
	var err error
	switch {
	case len(cols) == 0:
		ch.W = 0
	case cols[0].list:
		ch.State, ch.W, err = d.list(ctx, rg, cols[0], n, loc)
	case len(cols) == 1:
		ch.W = 1
		ch.State, err = d.floats(ctx, rg, cols[0], n, loc, reuse(buf, min(n, capHint)))
	default:
		w := len(cols)
		ch.W = w
		for j, c := range cols {
			d.tmp, err = d.floats(ctx, rg, c, n, loc, reuse(d.tmp, min(n, capHint)))
			if err != nil {
				return err
			}
			if j == 0 {
				m := int64(len(d.tmp)) * int64(w)
				ch.State = reuse(buf, m)[:m]
			}
			for i, v := range d.tmp {
				ch.State[i*w+j] = v
			}
		}
	}
	return err
}
