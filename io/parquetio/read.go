package parquetio

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/metadata"
	"github.com/grmdp/grmdp/internal/timing"
	"github.com/grmdp/grmdp/internal/workers"
	"github.com/grmdp/grmdp/traj"
)

// Read reads the trajectory contract from Parquet files, directories and
// globs, validates every value and returns the Table. See the package
// documentation for the contract, the order in which inputs are read and the
// errors it returns.
func Read(ctx context.Context, paths []string, opts traj.Options) (*traj.Table, error) {
	return readWith(ctx, paths, opts, memory.DefaultAllocator)
}

// fileInfo is one input file, opened and checked.
type fileInfo struct {
	input
	size int64
	fp   string
	md   *metadata.FileMetaData
	lay  *layout
}

func fileErr(path, format string, args ...any) error {
	return &traj.RowError{File: path, RowGroup: -1, Row: -1, Msg: fmt.Sprintf(format, args...), Err: ErrParquet}
}

var (
	magic  = []byte("PAR1")
	magicE = []byte("PARE")
)

// openFooter reads and parses a file's footer and computes its fingerprint.
// It never panics: arrow-go panics on some files, and those panics become
// errors that wrap ErrParquet.
func openFooter(path string) (size int64, fp string, md *metadata.FileMetaData, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fileErr(path, "cannot read the parquet footer: %v", r)
		}
	}()
	// Stat before opening: opening a named pipe would block.
	st, err := os.Stat(path)
	if err != nil {
		return 0, "", nil, ioErr(path, err)
	}
	if st.IsDir() {
		return 0, "", nil, fileErr(path, "is a directory, not a parquet file")
	}
	if !st.Mode().IsRegular() {
		return 0, "", nil, fileErr(path, "is not a regular file (%v)", st.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, "", nil, ioErr(path, err)
	}
	defer f.Close()
	size = st.Size()
	if size == 0 {
		return 0, "", nil, fileErr(path, "is empty (0 bytes), not a parquet file")
	}
	if size < 12 {
		return 0, "", nil, fileErr(path, "is too small (%d bytes) to be a parquet file", size)
	}
	var head [4]byte
	var tail [8]byte
	if _, err := f.ReadAt(head[:], 0); err != nil {
		return 0, "", nil, ioErr(path, err)
	}
	if _, err := f.ReadAt(tail[:], size-8); err != nil {
		return 0, "", nil, ioErr(path, err)
	}
	if !bytes.Equal(head[:], magic) {
		return 0, "", nil, fileErr(path, "is not a parquet file: it does not start with the PAR1 magic bytes")
	}
	if bytes.Equal(tail[4:], magicE) {
		return 0, "", nil, fileErr(path, "is an encrypted parquet file, which grmdp cannot read")
	}
	if !bytes.Equal(tail[4:], magic) {
		return 0, "", nil, fileErr(path, "is truncated or not a parquet file: it does not end with the PAR1 magic bytes")
	}
	flen := int64(binary.LittleEndian.Uint32(tail[:4]))
	if flen == 0 || flen > size-12 {
		return 0, "", nil, fileErr(path, "is truncated or corrupt: its footer length %d does not fit in its %d bytes", flen, size)
	}
	footer := make([]byte, flen)
	if _, err := f.ReadAt(footer, size-8-flen); err != nil && !errors.Is(err, io.EOF) {
		return 0, "", nil, ioErr(path, err)
	}
	h := sha256.New()
	h.Write([]byte(strconv.FormatInt(size, 10)))
	h.Write(footer)
	fp = hex.EncodeToString(h.Sum(nil))
	md, err = metadata.NewFileMetaData(footer, nil)
	if err != nil {
		return 0, "", nil, fileErr(path, "cannot read the parquet footer: %v", err)
	}
	md.SetSourceFileSize(size)
	if md.IsSetEncryptionAlgorithm() {
		return 0, "", nil, fileErr(path, "is an encrypted parquet file, which grmdp cannot read")
	}
	// Computed lazily and cached by arrow-go; compute it now, before row
	// groups are read concurrently.
	md.WriterVersion()
	for i := range md.NumRowGroups() {
		if n := md.RowGroup(i).NumRows(); n < 0 {
			return 0, "", nil, fileErr(path, "corrupt footer: row group %d has %d rows", i, n)
		}
	}
	return size, fp, md, nil
}

// openInputs expands paths and opens every file's footer (in parallel),
// then checks each file's schema against the contract in file order.
func openInputs(ctx context.Context, paths []string, opts *traj.Options, cols traj.Columns) ([]*fileInfo, bool, error) {
	ins, err := expandPaths(paths, cols.Site)
	if err != nil {
		return nil, false, err
	}
	if len(ins) == 0 {
		return nil, false, fmt.Errorf("parquetio: no parquet files in %v: %w", paths, ErrNoData)
	}
	infos := make([]*fileInfo, len(ins))
	err = ordered(ctx, workers.Or(opts.Workers), len(ins),
		func(ctx context.Context, i int) (*fileInfo, error) {
			fi := &fileInfo{input: ins[i]}
			var err error
			fi.size, fi.fp, fi.md, err = openFooter(fi.path)
			return fi, err
		},
		func(i int, fi *fileInfo) error {
			infos[i] = fi
			return nil
		}, nil)
	if err != nil {
		return nil, false, err
	}
	for _, fi := range infos {
		if fi.lay, err = checkSchema(fi, opts, cols); err != nil {
			return nil, false, err
		}
	}
	// Hive sites are integers when every one of them is.
	var hive []input
	for _, fi := range infos {
		if fi.lay.site == nil {
			hive = append(hive, fi.input)
		}
	}
	hiveInt := hiveInts(hive)
	if err := sameKinds(infos, cols, hiveInt); err != nil {
		return nil, false, err
	}
	return infos, hiveInt, nil
}

// sameKinds checks that the site, traj and action columns are strings in
// every file or integers in every file, naming the two files that disagree.
func sameKinds(infos []*fileInfo, cols traj.Columns, hiveInt bool) error {
	kindName := map[bool]string{true: "string", false: "integer"}
	roles := []struct {
		name string
		col  func(*layout) *colSpec
	}{
		{cols.Site, func(l *layout) *colSpec { return l.site }},
		{cols.Traj, func(l *layout) *colSpec { return l.traj }},
		{cols.Action, func(l *layout) *colSpec { return l.action }},
	}
	for _, r := range roles {
		var first *fileInfo
		var firstStr bool
		for _, fi := range infos {
			c := r.col(fi.lay)
			isStr := !hiveInt
			if c != nil {
				isStr = c.conv == convString
			}
			if first == nil {
				first, firstStr = fi, isStr
				continue
			}
			if isStr != firstStr {
				return &traj.RowError{File: fi.path, RowGroup: -1, Row: -1, Column: r.name,
					Msg: fmt.Sprintf("is %s here but %s in %s: the files' schemas must agree", kindName[isStr], kindName[firstStr], first.path), Err: ErrSchema}
			}
		}
	}
	return nil
}

// ioErr describes an operating-system error on path without repeating the
// path, keeping the cause for errors.Is.
func ioErr(path string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return fmt.Errorf("%s: cannot read: %w", path, err)
}

func checkSchema(fi *fileInfo, opts *traj.Options, cols traj.Columns) (lay *layout, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fileErr(fi.path, "cannot read the parquet schema: %v", r)
		}
	}()
	return resolveLayout(fi.md.Schema, fi.path, opts, cols, fi.hive, fi.hasHive)
}

// fileRows sums the row counts of a file's row groups, the rows Read
// decodes (a footer's own total can disagree with them).
func fileRows(md *metadata.FileMetaData) int64 {
	var n int64
	for rg := range md.NumRowGroups() {
		n += md.RowGroup(rg).NumRows()
	}
	return n
}

// taskOffsets returns the row at which each task's rows start when the
// tasks' rows are laid end to end, from the footers' row counts, and after
// them the number of rows: task i has offs[i+1]-offs[i] rows.
func taskOffsets(tasks []rgTask) []int64 {
	offs := make([]int64, len(tasks)+1)
	for i, t := range tasks {
		offs[i+1] = offs[i] + t.fi.md.RowGroup(t.loc.rg).NumRows()
	}
	return offs
}

// rgTask is one row group to decode.
type rgTask struct {
	fi  *fileInfo
	loc rgLoc
}

func planRowGroups(infos []*fileInfo) []rgTask {
	var tasks []rgTask
	for _, fi := range infos {
		var row0 int64
		for rg := range fi.md.NumRowGroups() {
			n := fi.md.RowGroup(rg).NumRows()
			if n > 0 {
				tasks = append(tasks, rgTask{fi: fi, loc: rgLoc{file: fi.path, rg: rg, row0: row0}})
			}
			row0 += n
		}
	}
	return tasks
}

func readerProps(mem memory.Allocator) *parquet.ReaderProperties {
	props := parquet.NewReaderProperties(mem)
	// Stream each column chunk through a buffer instead of reading it whole:
	// memory per worker stays bounded by the buffer and one page.
	props.BufferedStreamEnabled = true
	props.BufferSize = 1 << 20
	return props
}

// openReader opens a file for reading row groups with a parsed footer.
func openReader(fi *fileInfo, props *parquet.ReaderProperties) (*file.Reader, error) {
	f, err := os.Open(fi.path)
	if err != nil {
		return nil, ioErr(fi.path, err)
	}
	fr, err := file.NewParquetReader(f, file.WithMetadata(fi.md), file.WithReadProps(props))
	if err != nil {
		f.Close()
		return nil, fileErr(fi.path, "cannot open: %v", err)
	}
	return fr, nil
}

// decodeTask decodes one row group, turning panics into errors.
// With skipState it leaves the state columns out (see decodeStates).
// With into, integer trajectory ids and rewards are decoded into its arrays.
func decodeTask(ctx context.Context, t rgTask, props *parquet.ReaderProperties, hiveInt, skipState bool, into *rowDst) (*traj.Chunk, error) {
	return withDecoder(t, props, func(fr *file.Reader, d *decoder) (*traj.Chunk, error) {
		return d.decodeRowGroup(ctx, fr, t.fi.lay, hiveInt, t.loc, skipState, into)
	})
}

// decodeStates decodes the state columns of one row group into a Chunk
// holding only State and W, turning panics into errors.
// Its State is buf's array when buf is large enough.
func decodeStates(ctx context.Context, t rgTask, props *parquet.ReaderProperties, buf []float64) (*traj.Chunk, error) {
	return withDecoder(t, props, func(fr *file.Reader, d *decoder) (*traj.Chunk, error) {
		rg := fr.RowGroup(t.loc.rg)
		ch := &traj.Chunk{Src: traj.Origin{File: t.loc.file, RowGroup: t.loc.rg, Row: t.loc.row0}}
		if err := d.decodeState(ctx, rg, t.fi.lay.state, rg.NumRows(), t.loc, ch, buf); err != nil {
			return nil, err
		}
		return ch, nil
	})
}

// withDecoder opens t's file and runs decode with a pooled decoder, turning
// a panic in arrow-go into an error naming the row group.
func withDecoder(t rgTask, props *parquet.ReaderProperties, decode func(*file.Reader, *decoder) (*traj.Chunk, error)) (ch *traj.Chunk, err error) {
	defer func() {
		if r := recover(); r != nil {
			ch, err = nil, t.loc.parquetErr("", "cannot decode: %v", r)
		}
	}()
	fr, err := openReader(t.fi, props)
	if err != nil {
		return nil, err
	}
	defer fr.Close()
	d := decoderPool.Get().(*decoder)
	defer decoderPool.Put(d)
	return decode(fr, d)
}

func readWith(ctx context.Context, paths []string, opts traj.Options, mem memory.Allocator) (*traj.Table, error) {
	cols := opts.Columns.WithDefaults()
	stopOpen := timing.Start(ctx, "read: footers")
	infos, hiveInt, err := openInputs(ctx, paths, &opts, cols)
	stopOpen()
	if err != nil {
		return nil, err
	}
	props := readerProps(mem)
	zeroStep, err := firstStep(ctx, infos, &opts, props)
	if err != nil {
		return nil, err
	}
	if opts.Nulls != traj.NullsError {
		t, err := readDroppingNulls(ctx, infos, hiveInt, opts, props)
		if t != nil {
			t.ZeroStepFile = zeroStep
		}
		return t, err
	}
	t, err := readTable(ctx, infos, hiveInt, opts, props)
	if t != nil {
		t.ZeroStepFile = zeroStep
	}
	return t, err
}

// readDroppingNulls reads under a null policy other than NullsError, in
// two passes: the first decodes every row group and marks the episodes'
// first NULLs (traj.NullCuts.Mark: an episode's rows may lie in several
// row groups), the second decodes them again and adds to the Builder, in
// input order, the rows the policy keeps. Memory stays that of a one-pass
// read; decoding takes twice as long.
func readDroppingNulls(ctx context.Context, infos []*fileInfo, hiveInt bool, opts traj.Options, props *parquet.ReaderProperties) (*traj.Table, error) {
	b := traj.NewBuilder(opts)
	var total int64
	for _, fi := range infos {
		rows := fileRows(fi.md)
		b.AddSource(traj.Source{Path: fi.path, Size: fi.size, Fingerprint: fi.fp, Rows: rows})
		total += rows
	}
	if total == 0 {
		return nil, noRows(infos)
	}
	if opts.Progress != nil {
		opts.Progress.SetTotal(2 * total)
	}
	stamps, err := stampFiles(infos)
	if err != nil {
		return nil, err
	}
	tasks := planRowGroups(infos)
	cuts := traj.NewNullCuts(opts.Nulls)
	decode := func(ctx context.Context, i int) (*traj.Chunk, error) {
		return decodeTask(ctx, tasks[i], props, hiveInt, false, nil)
	}
	err = ordered(ctx, workers.Or(opts.Workers), len(tasks), decode,
		func(i int, ch *traj.Chunk) error {
			cuts.Mark(ch)
			if opts.Progress != nil {
				opts.Progress.Add(int64(ch.Len()))
			}
			return nil
		}, nil)
	if err := cancelled(ctx, err); err != nil {
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	if err := checkStamps(stamps); err != nil {
		return nil, err
	}
	// Footers can lie: trust their row counts only up to a generous number
	// of rows per byte (as readTable).
	var bytes int64
	for _, fi := range infos {
		bytes += fi.size
	}
	b.Reserve(int(min(total, 8*bytes)))
	kept := 0
	err = ordered(ctx, workers.Or(opts.Workers), len(tasks), decode,
		func(i int, ch *traj.Chunk) error {
			if opts.Progress != nil {
				opts.Progress.Add(int64(ch.Len()))
			}
			if ch = cuts.Apply(ch); ch == nil {
				return nil
			}
			kept += ch.Len()
			return b.Add(ch)
		}, nil)
	if err := cancelled(ctx, err); err != nil {
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	if err := checkStamps(stamps); err != nil {
		return nil, err
	}
	if kept == 0 {
		return nil, fmt.Errorf("parquetio: %w: null policy %s dropped every row of the input", ErrNoData, opts.Nulls)
	}
	t, err := b.Build()
	if err != nil {
		return nil, err
	}
	t.Nulls = cuts.Counts()
	return t, nil
}

// readTable reads infos into a Table: in two passes (readPlaced) when the
// footers give each row group's place among the input's rows, in one pass
// adding every row group to a traj.Builder otherwise.
func readTable(ctx context.Context, infos []*fileInfo, hiveInt bool, opts traj.Options, props *parquet.ReaderProperties) (*traj.Table, error) {
	var total, bytes int64
	for _, fi := range infos {
		total += fileRows(fi.md)
		bytes += fi.size
	}
	tasks := planRowGroups(infos)
	offs := taskOffsets(tasks)
	// Footers can lie; trust their row counts only up to a generous number
	// of rows per byte of input.
	if rows := offs[len(tasks)]; opts.OnePass || rows != total || rows > 8*bytes || rows >= math.MaxInt32 {
		return readOnePass(ctx, infos, tasks, hiveInt, opts, props, int(min(total, 8*bytes)))
	}
	if total == 0 {
		return nil, noRows(infos)
	}
	return readPlaced(ctx, infos, tasks, offs, hiveInt, opts, props)
}

// sources returns the provenance of infos.
func sources(infos []*fileInfo) []traj.Source {
	src := make([]traj.Source, len(infos))
	for i, fi := range infos {
		src[i] = traj.Source{Path: fi.path, Size: fi.size, Fingerprint: fi.fp, Rows: fileRows(fi.md)}
	}
	return src
}

// readOnePass adds every row group to a traj.Builder, in order, with its
// states; reserve is a hint of the number of rows.
func readOnePass(ctx context.Context, infos []*fileInfo, tasks []rgTask, hiveInt bool, opts traj.Options, props *parquet.ReaderProperties, reserve int) (*traj.Table, error) {
	b := traj.NewBuilder(opts)
	var total int64
	for _, s := range sources(infos) {
		b.AddSource(s)
		total += s.Rows
	}
	if opts.Progress != nil {
		opts.Progress.SetTotal(total)
	}
	b.Reserve(reserve)
	stopFirst := timing.Start(ctx, "read: first pass")
	err := ordered(ctx, workers.Or(opts.Workers), len(tasks),
		func(ctx context.Context, i int) (*traj.Chunk, error) {
			return decodeTask(ctx, tasks[i], props, hiveInt, false, nil)
		},
		func(i int, ch *traj.Chunk) error {
			if err := b.Add(ch); err != nil {
				return err
			}
			if opts.Progress != nil {
				opts.Progress.Add(int64(ch.Len()))
			}
			return nil
		}, nil)
	stopFirst()
	if err := cancelled(ctx, err); err != nil {
		return nil, err
	}
	if err != nil {
		return nil, err
	}
	if total == 0 {
		return nil, noRows(infos)
	}
	defer timing.Start(ctx, "read: build")()
	return b.Build()
}

// firstPass is the outcome of readPlaced's first pass: its error (nil if
// none), at row group failed, a decode error if decodeFailed.
type firstPass struct {
	err          error
	failed       int
	decodeFailed bool
}

// readPlaced reads in two passes: each row group's rows have a known place
// in the placer's arrays (offs, from the footers), so workers check and
// write them there in parallel (placer.place) and only what needs other row
// groups stays serial (placer.addPlaced). With a state column the first
// pass skips the states, and a second one (readStates) decodes them after
// traj.NewTable and writes each row's straight to its place in the Table.
func readPlaced(ctx context.Context, infos []*fileInfo, tasks []rgTask, offs []int64, hiveInt bool, opts traj.Options, props *parquet.ReaderProperties) (*traj.Table, error) {
	total := offs[len(tasks)]
	statesLater := opts.State.Width() > 0 || opts.State.List
	var stamps []stamp
	if statesLater {
		var err error
		if stamps, err = stampFiles(infos); err != nil {
			return nil, err
		}
	}
	if opts.Progress != nil {
		if statesLater {
			opts.Progress.SetTotal(2 * total)
		} else {
			opts.Progress.SetTotal(total)
		}
	}
	p := newPlacer(opts, int(total), statesLater)
	p.sources = sources(infos)
	stopFirst := timing.Start(ctx, "read: first pass")
	first := placeRowGroups(ctx, p, tasks, offs, hiveInt, props)
	stopFirst()
	if err := cancelled(ctx, first.err); err != nil {
		return nil, err
	}
	if !statesLater {
		if first.err != nil {
			return nil, first.err
		}
		defer timing.Start(ctx, "read: build")()
		t, _, err := p.table()
		return t, err
	}
	return readStates(ctx, p, tasks, offs, props, stamps, first)
}

// placeRowGroups is readPlaced's first pass: it decodes every row group
// but its states (when they come later), straight into the rows' places,
// checks and places them in parallel, and completes each serially and in
// order.
func placeRowGroups(ctx context.Context, p *placer, tasks []rgTask, offs []int64, hiveInt bool, props *parquet.ReaderProperties) firstPass {
	type decoded struct {
		ch  *traj.Chunk
		pl  placed
		err error // the decode's
	}
	progress := p.opts.Progress
	first := firstPass{failed: -1}
	first.err = ordered(ctx, workers.Or(p.opts.Workers), len(tasks),
		func(ctx context.Context, i int) (decoded, error) {
			lo, hi := offs[i], offs[i+1]
			into := &rowDst{}
			into.traj, into.reward = p.slots(int(lo), int(hi))
			ch, err := decodeTask(ctx, tasks[i], props, hiveInt, p.statesLater, into)
			if err != nil {
				return decoded{err: err}, nil
			}
			if want := hi - lo; int64(ch.Len()) != want || int64(len(ch.Reward)) != want {
				return decoded{err: tasks[i].loc.parquetErr("", "decoded %d rows but the row group has %d", ch.Len(), want)}, nil
			}
			pl := p.place(ch, int(lo))
			// place copied these; addPlaced needs only the ids and labels.
			ch.Reward, ch.ActionInt = nil, nil
			if ch.TrajStr == nil {
				ch.TrajInt = nil
			}
			return decoded{ch: ch, pl: pl}, nil
		},
		func(i int, d decoded) error {
			err := d.err
			if err != nil {
				first.decodeFailed = true
			} else {
				err = p.addPlaced(d.ch, int(offs[i]), d.pl)
			}
			if err != nil {
				first.failed = i
				return err
			}
			if progress != nil {
				progress.Add(int64(d.ch.Len()))
			}
			return nil
		}, nil)
	return first
}

// cancelled returns, when ctx is done, the pipeline's error err (the first
// in order, as before the cancellation), or else ctx's; nil otherwise.
func cancelled(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		if err != nil {
			return err
		}
		return cerr
	}
	return nil
}

// readStates is the second pass of readPlaced with the states later: it
// builds the Table (unless the first pass failed) and decodes the state
// columns, checks them and writes each row's state to its place in the
// Table. It reports the error a single pass would have: the first row
// group's, and within a row group, a decode error in an earlier column
// before the states', then the states' decode error, then the checks in
// traj.Builder.Add's column order, with the states' last; the Table's own
// errors (NewTable's) come only when no row group has one.
func readStates(ctx context.Context, p *placer, tasks []rgTask, offs []int64, props *parquet.ReaderProperties, stamps []stamp, first firstPass) (*traj.Table, error) {
	s := &statePass{p: p, tasks: tasks, offs: offs, props: props, first: first}
	if first.err == nil {
		stopBuild := timing.Start(ctx, "read: build")
		all := p.state // the Table's, once NewTable has taken it
		s.t, s.places, s.errBuild = p.table()
		stopBuild()
		if s.errBuild == nil {
			s.all = all
		}
		// Both passes must see the same content. (When the first pass
		// failed, only its error matters, as in a single pass.)
		if err := checkStamps(stamps); err != nil {
			return nil, err
		}
	}
	if p.opts.State.List && len(tasks) > 0 {
		s.listWidth(ctx)
	}
	stopSecond := timing.Start(ctx, "read: second pass")
	err := s.run(ctx)
	stopSecond()
	if err := cancelled(ctx, err); err != nil {
		return nil, err
	}
	switch {
	case err != nil:
		return nil, err
	case first.err != nil:
		return nil, first.err
	case s.errWidth != nil:
		return nil, s.errWidth
	case s.phiErr != nil:
		return nil, s.phiErr
	case s.errBuild != nil:
		return nil, s.errBuild
	}
	if err := checkStamps(stamps); err != nil {
		return nil, err
	}
	return s.t, nil
}

// statePass is readStates' second pass over the row groups.
type statePass struct {
	p      *placer
	tasks  []rgTask
	offs   []int64
	props  *parquet.ReaderProperties
	first  firstPass
	t      *traj.Table
	places []int32   // from traj.NewTable
	all    []float64 // the Table's states; nil to check only
	// The list checks: the width against A (errWidth) and then every
	// row's sums (the first bad row's error, phiErr, with phiA actions),
	// which rank below every row group's error; the errors of NewTable
	// (errBuild) come last.
	errWidth, phiErr, errBuild error
	phiA                       int
	// firstCh is the first row group's states when listWidth decoded them.
	firstCh *traj.Chunk

	// The decoded states are copied out by the worker that decoded them,
	// so their arrays go straight back to bufs for the next row group.
	// Several double columns are read in lockstep batches, without a
	// chunk of the row group's states (placeStatesBatched), unless that
	// finds something amiss.
	mu        sync.Mutex
	bufs      [][]float64
	batchBufs []*stateBufs
}

// listWidth decodes the first row group's states, whose list length is the
// input's (as in traj.Builder.Add), checks it against A and makes the
// Table's state arrays.
func (s *statePass) listWidth(ctx context.Context) {
	p := s.p
	s.all = nil // NewTable knew no width
	c, err := decodeStates(ctx, s.tasks[0], s.props, nil)
	if err != nil {
		return
	}
	s.firstCh, p.w = c, c.W
	if s.first.err != nil {
		return
	}
	A := p.numActions()
	if s.errWidth = p.checkListWidth(A); s.errWidth == nil {
		s.phiA = A
		if s.t != nil {
			s.all = p.listStates(s.t)
		}
	}
}

// run decodes, checks and places the states of every row group up to the
// first pass's failed one, and returns the error a single pass would.
func (s *statePass) run(ctx context.Context) error {
	type decoded struct {
		err, phi error
		decode   bool
	}
	last := len(s.tasks) - 1
	if s.first.err != nil {
		last = s.first.failed
	}
	progress := s.p.opts.Progress
	return ordered(ctx, workers.Or(s.p.opts.Workers), last+1,
		func(ctx context.Context, i int) (decoded, error) {
			err, phi, decode := s.place(ctx, i)
			return decoded{err: err, phi: phi, decode: decode}, nil
		},
		func(i int, d decoded) error {
			if d.err != nil {
				if i == s.first.failed && (s.first.decodeFailed || !d.decode) {
					return s.first.err
				}
				return d.err
			}
			if s.phiErr == nil {
				s.phiErr = d.phi
			}
			if progress != nil {
				progress.Add(s.offs[i+1] - s.offs[i])
			}
			return nil
		}, nil)
}

// place decodes, checks and places the states of row group i: in lockstep
// batches when it can, from a chunk of the row group's states otherwise.
// decode says that err is a decode error.
func (s *statePass) place(ctx context.Context, i int) (err, phi error, decode bool) {
	p, t := s.p, s.tasks[i]
	n, off := int(s.offs[i+1]-s.offs[i]), int(s.offs[i])
	if s.all != nil && !p.opts.State.List && batchedStates(t.fi.lay) {
		s.mu.Lock()
		sb := &stateBufs{}
		if k := len(s.batchBufs); k > 0 {
			sb, s.batchBufs = s.batchBufs[k-1], s.batchBufs[:k-1]
		}
		s.mu.Unlock()
		ok := placeStatesBatched(ctx, p, t, s.props, n, off, s.places, s.all, sb)
		s.mu.Lock()
		s.batchBufs = append(s.batchBufs, sb)
		s.mu.Unlock()
		if ok {
			return nil, nil, false
		}
	}
	var ch *traj.Chunk
	if i == 0 && s.firstCh != nil {
		ch, s.firstCh = s.firstCh, nil // only this call reads firstCh
	} else {
		var buf []float64
		s.mu.Lock()
		if k := len(s.bufs); k > 0 {
			buf, s.bufs = s.bufs[k-1], s.bufs[:k-1]
		}
		s.mu.Unlock()
		var err error
		if ch, err = decodeStates(ctx, t, s.props, buf); err != nil {
			return err, nil, true
		}
	}
	err, phi = p.placeStates(ch, n, off, s.places, s.all, s.phiA)
	if !p.opts.State.List { // list decoding allocates its own
		s.mu.Lock()
		s.bufs = append(s.bufs, ch.State)
		s.mu.Unlock()
	}
	return err, phi, false
}

// stamp is what a file looked like when a read began.
type stamp struct {
	path string
	size int64
	mod  time.Time
}

func stampFiles(infos []*fileInfo) ([]stamp, error) {
	st := make([]stamp, len(infos))
	for i, fi := range infos {
		s, err := os.Stat(fi.path)
		if err != nil {
			return nil, ioErr(fi.path, err)
		}
		if s.Size() != fi.size {
			return nil, changedErr(fi.path, "while it was read")
		}
		st[i] = stamp{fi.path, s.Size(), s.ModTime()}
	}
	return st, nil
}

// checkStamps reports a file that changed since stampFiles: a read in two
// passes must see the same content twice.
func checkStamps(st []stamp) error {
	for _, s := range st {
		now, err := os.Stat(s.path)
		if err != nil {
			return ioErr(s.path, err)
		}
		if now.Size() != s.size || !now.ModTime().Equal(s.mod) {
			return changedErr(s.path, "while it was read")
		}
	}
	return nil
}

// noRows is the error for inputs whose files hold no rows.
func noRows(infos []*fileInfo) error {
	names := make([]string, len(infos))
	for i, fi := range infos {
		names[i] = fi.path
	}
	return fmt.Errorf("parquetio: %s: %w: the files have no rows; check the export or the paths given", strings.Join(names, ", "), ErrNoData)
}
