package parquetio

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"

	"github.com/grmdp/grmdp/internal/workers"
	"github.com/grmdp/grmdp/io/fileio"
	"github.com/grmdp/grmdp/traj"
)

// Names of the columns Annotate adds.
const (
	ColRecommendedAction = "recommended_action"
	ColRecommendedQ      = "recommended_q"
	ColEvidence          = "evidence"
)

// annotateFunc computes the recommendation for a batch of rows: given each
// row's step and state (w values per row), it fills action (the index of
// the recommended action), q (its Qhat) and evidence (false when no data
// backs the decision). All slices have one entry per row (state has w).
type annotateFunc func(steps []int64, state []float64, w int, action []int32, q []float64, evidence []bool) error

// Annotate copies the rows of the Parquet inputs (files, directories,
// globs, in the order Read uses) to one output file at out, adding three
// columns: recommended_action (int32, or the label string when labels is not
// nil), recommended_q (double) and evidence (bool). Every input column is
// kept unchanged, and rows keep their order; when the site column comes from
// Hive-style folders (site=X/), a site column is added as well.
//
// Only the step column (opts.Columns.Step) and the state columns
// (opts.State) are decoded and validated, as Read does: nulls, types,
// NaN/Inf and the state spec's bounds are errors naming file, row group, row
// and column. The inputs' schemas must agree.
//
// Under a null policy (opts.Nulls other than NullsError) a NULL in a
// (non-list) state column is no error: a first pass over the site, traj
// (opts.Columns), step and state columns finds each episode's first NULL,
// and the row holding it, with the rows its episode loses under the policy
// (the later rows for NullsTruncate, every row for NullsDropEpisode), is
// written with a NULL recommended_action and recommended_q, evidence false
// and the reason in a fourth column, recommendation_note (NULL on the
// other rows). fn sees only the scored rows, whose states are validated.
//
// Row groups are processed in parallel (opts.Workers), each in one call of
// fn, so fn may be called concurrently from several goroutines and must be
// safe for that; results are written in input order whatever the
// scheduling. Memory is bounded by a few row groups per worker. The output
// is written atomically and may not be one of the inputs.
func Annotate(ctx context.Context, paths []string, out string, opts traj.Options, labels []string, fn func(steps []int64, state []float64, w int, action []int32, q []float64, evidence []bool) error) error {
	return annotate(ctx, paths, out, opts, labels, fn, memory.DefaultAllocator)
}

// annotateFile is one input of Annotate.
type annotateFile struct {
	fileInfo
	step *colSpec
	// site and traj name the episodes under a null policy (site nil when
	// the file takes its site from the path).
	site, traj *colSpec
	shift      int64 // added to every step (traj.FirstStep.Shift)
	state      []*colSpec
	schema     *arrow.Schema
}

func annotate(ctx context.Context, paths []string, out string, opts traj.Options, labels []string, fn annotateFunc, mem memory.Allocator) error {
	cols := opts.Columns.WithDefaults()
	props := readerProps(mem)
	files, err := openAnnotateFiles(ctx, paths, out, &opts, cols, props, mem)
	if err != nil {
		return err
	}
	job := &annotateJob{opts: &opts, labels: labels, fn: fn, props: props, mem: mem}
	if err := job.setSchema(files, cols); err != nil {
		return err
	}
	total := job.setTasks(files)
	if job.nulls() {
		if err := job.findCuts(ctx); err != nil {
			return err
		}
	}
	if opts.Progress != nil {
		opts.Progress.SetTotal(total)
	}
	return job.writeTo(ctx, out, cols)
}

// openAnnotateFiles opens the input files (not the output) and resolves
// their first step, which every file then shifts its steps by.
func openAnnotateFiles(ctx context.Context, paths []string, out string, opts *traj.Options, cols traj.Columns,
	props *parquet.ReaderProperties, mem memory.Allocator) ([]*annotateFile, error) {
	ins, err := expandPaths(paths, cols.Site)
	if err != nil {
		return nil, err
	}
	if len(ins) == 0 {
		return nil, fmt.Errorf("parquetio: no parquet files in %v: %w", paths, ErrNoData)
	}
	if err := notAnInput(out, ins); err != nil {
		return nil, err
	}
	files := make([]*annotateFile, len(ins))
	err = ordered(ctx, workers.Or(opts.Workers), len(ins),
		func(ctx context.Context, i int) (*annotateFile, error) {
			return openAnnotateFile(ins[i], opts, cols, props, mem)
		},
		func(i int, af *annotateFile) error {
			files[i] = af
			return nil
		}, nil)
	if err != nil {
		return nil, err
	}
	srcs := make([]stepSource, len(files))
	for i, af := range files {
		srcs[i] = stepSource{&af.fileInfo, af.step}
	}
	shift, _, err := resolveFirstStep(ctx, srcs, opts, props)
	if err != nil {
		return nil, err
	}
	for _, af := range files {
		af.shift = shift
	}
	return files, nil
}

// annotateJob is one Annotate run: what it reads with, what it writes, and
// the row groups to annotate.
type annotateJob struct {
	opts   *traj.Options
	labels []string
	fn     annotateFunc
	props  *parquet.ReaderProperties
	mem    memory.Allocator

	outSchema        *arrow.Schema
	addHive, hiveInt bool // add the hive site column; as int64
	tasks            []rgTask
	byInfo           map[*fileInfo]*annotateFile
	// cuts holds each episode's first NULL in a state column, under a
	// null policy.
	cuts map[annotateEpisode]nullCut
}

// nulls reports whether rows with NULL states are kept unscored (a null
// policy) rather than refused.
func (j *annotateJob) nulls() bool { return j.opts.Nulls != traj.NullsError }

// setSchema sets the output schema. The inputs must agree; the output adds
// the hive site (when every file takes its site from the path) and the
// three result columns.
func (j *annotateJob) setSchema(files []*annotateFile, cols traj.Columns) error {
	inSchema := files[0].schema
	for _, af := range files[1:] {
		if err := sameSchema(files[0].path, inSchema, af.path, af.schema); err != nil {
			return err
		}
	}
	j.addHive = true
	var hive []input
	for _, af := range files {
		if !af.hasHive || len(inSchema.FieldIndices(cols.Site)) > 0 {
			j.addHive = false
			break
		}
		hive = append(hive, af.input)
	}
	j.hiveInt = j.addHive && hiveInts(hive)
	fields := inSchema.Fields()
	if j.addHive {
		t := arrow.DataType(arrow.BinaryTypes.String)
		if j.hiveInt {
			t = arrow.PrimitiveTypes.Int64
		}
		fields = append(fields, arrow.Field{Name: cols.Site, Type: t})
	}
	actionType := arrow.DataType(arrow.PrimitiveTypes.Int32)
	if j.labels != nil {
		actionType = arrow.BinaryTypes.String
	}
	fields = append(fields,
		arrow.Field{Name: ColRecommendedAction, Type: actionType, Nullable: j.nulls()},
		arrow.Field{Name: ColRecommendedQ, Type: arrow.PrimitiveTypes.Float64, Nullable: j.nulls()},
		arrow.Field{Name: ColEvidence, Type: arrow.FixedWidthTypes.Boolean},
	)
	added := []string{ColRecommendedAction, ColRecommendedQ, ColEvidence}
	if j.nulls() {
		fields = append(fields, arrow.Field{Name: ColRecommendationNote, Type: arrow.BinaryTypes.String, Nullable: true})
		added = append(added, ColRecommendationNote)
	}
	for _, name := range added {
		if len(inSchema.FieldIndices(name)) > 0 {
			return &traj.RowError{File: files[0].path, RowGroup: -1, Row: -1, Column: name,
				Msg: "the input already has this column, which the output adds: drop or rename it first", Err: ErrSchema}
		}
	}
	j.outSchema = arrow.NewSchema(fields, nil)
	return nil
}

// setTasks lists the files' nonempty row groups, in order, and returns the
// files' total number of rows.
func (j *annotateJob) setTasks(files []*annotateFile) (total int64) {
	for _, af := range files {
		total += fileRows(af.md)
		var row0 int64
		for rg := range af.md.NumRowGroups() {
			n := af.md.RowGroup(rg).NumRows()
			if n > 0 {
				j.tasks = append(j.tasks, rgTask{fi: &af.fileInfo, loc: rgLoc{file: af.path, rg: rg, row0: row0}})
			}
			row0 += n
		}
	}
	j.byInfo = map[*fileInfo]*annotateFile{}
	for _, af := range files {
		j.byInfo[&af.fileInfo] = af
	}
	return total
}

// writeTo annotates every row group and writes them, in order, to out,
// which appears only once complete.
func (j *annotateJob) writeTo(ctx context.Context, out string, cols traj.Columns) error {
	f, err := fileio.CreateAtomic(out)
	if err != nil {
		return err
	}
	defer f.Abort()
	fw, err := pqarrow.NewFileWriter(j.outSchema, f, writerProps(j.mem, 1<<40, append(dictionary(cols), ColRecommendedAction)),
		pqarrow.NewArrowWriterProperties(pqarrow.WithAllocator(j.mem), pqarrow.WithStoreSchema()))
	if err != nil {
		return fmt.Errorf("parquetio: cannot write %s: %w", out, err)
	}
	closed := false
	defer func() {
		if !closed {
			fw.Close()
		}
	}()
	if err := j.stream(ctx, fw, out); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	closed = true
	if err := fw.Close(); err != nil {
		return fmt.Errorf("parquetio: cannot write %s: %w", out, err)
	}
	return f.Commit()
}

// stream annotates the row groups on the workers and writes their records
// to fw in row group order.
func (j *annotateJob) stream(ctx context.Context, fw *pqarrow.FileWriter, out string) error {
	width := -1 // the list state's width, once seen
	return ordered(ctx, workers.Or(j.opts.Workers), len(j.tasks),
		func(ctx context.Context, i int) (*annotated, error) {
			t := j.tasks[i]
			return j.annotateRowGroup(ctx, j.byInfo[t.fi], t.loc)
		},
		func(i int, a *annotated) error {
			defer a.release()
			return j.write(fw, out, a, &width)
		},
		func(a *annotated) {
			if a != nil {
				a.release()
			}
		})
}

// write writes one annotated row group, checking that a list state keeps
// the width (*width, -1 until seen) of the row groups before it.
func (j *annotateJob) write(fw *pqarrow.FileWriter, out string, a *annotated, width *int) error {
	if j.opts.State.List && a.rows > 0 {
		if *width >= 0 && a.w != *width {
			return &traj.RowError{File: a.loc.file, RowGroup: a.loc.rg, Row: a.loc.row0, Column: j.opts.State.Columns[0],
				Msg: fmt.Sprintf("list of length %d, but earlier rows have length %d", a.w, *width), Err: ErrBadData}
		}
		*width = a.w
	}
	for _, rec := range a.recs {
		if err := fw.Write(rec); err != nil {
			return fmt.Errorf("parquetio: cannot write %s: %w", out, err)
		}
	}
	if j.opts.Progress != nil {
		j.opts.Progress.Add(a.rows)
	}
	return nil
}

// notAnInput refuses an output path that is one of the inputs.
func notAnInput(out string, ins []input) error {
	ost, err := os.Stat(out)
	if err != nil {
		return nil // a new file
	}
	for _, in := range ins {
		if st, err := os.Stat(in.path); err == nil && os.SameFile(ost, st) {
			return fmt.Errorf("parquetio: the output %s is also an input: write the annotated rows to a new file", out)
		}
	}
	return nil
}

func openAnnotateFile(in input, opts *traj.Options, cols traj.Columns, props *parquet.ReaderProperties, mem memory.Allocator) (af *annotateFile, err error) {
	af = &annotateFile{fileInfo: fileInfo{input: in}}
	af.size, af.fp, af.md, err = openFooter(in.path)
	if err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			af, err = nil, fileErr(in.path, "cannot read the parquet schema: %v", r)
		}
	}()
	sc := af.md.Schema
	if af.step, err = resolveColumn(sc, in.path, cols.Step, wantInt, false); err != nil {
		return nil, err
	}
	if af.state, err = resolveState(sc, in.path, opts.State); err != nil {
		return nil, err
	}
	if opts.Nulls != traj.NullsError {
		for _, c := range af.state {
			c.nullHint, c.nullable = !c.list, !c.list
		}
		if af.site, err = resolveColumn(sc, in.path, cols.Site, wantIntOrString, in.hasHive); err != nil {
			return nil, err
		}
		if af.traj, err = resolveColumn(sc, in.path, cols.Traj, wantIntOrString, false); err != nil {
			return nil, err
		}
	}
	af.schema, err = pqarrow.FromParquet(sc, &pqarrow.ArrowReadProperties{}, af.md.KeyValueMetadata())
	if err != nil {
		return nil, fileErr(in.path, "cannot convert the parquet schema to arrow: %v", err)
	}
	return af, nil
}

// sameSchema reports how two inputs' schemas differ, naming both files.
func sameSchema(fileA string, a *arrow.Schema, fileB string, b *arrow.Schema) error {
	diff := func(col, msg string) error {
		return &traj.RowError{File: fileB, RowGroup: -1, Row: -1, Column: col, Msg: msg, Err: ErrSchema}
	}
	for i, fb := range b.Fields() {
		if i >= a.NumFields() {
			return diff(fb.Name, fmt.Sprintf("not in %s: the inputs' schemas must agree", fileA))
		}
		fa := a.Field(i)
		if fa.Name != fb.Name {
			return diff(fb.Name, fmt.Sprintf("is column %d here but %s has %q there: the inputs' schemas must agree", i, fileA, fa.Name))
		}
		if !arrow.TypeEqual(fa.Type, fb.Type) || fa.Nullable != fb.Nullable {
			return diff(fb.Name, fmt.Sprintf("has type %s here but %s in %s: the inputs' schemas must agree", fieldType(fb), fieldType(fa), fileA))
		}
	}
	if a.NumFields() > b.NumFields() {
		return diff(a.Field(b.NumFields()).Name, fmt.Sprintf("missing here but present in %s: the inputs' schemas must agree", fileA))
	}
	return nil
}

func fieldType(f arrow.Field) string {
	if f.Nullable {
		return f.Type.String() + " (nullable)"
	}
	return f.Type.String()
}

// annotated is one row group's output.
type annotated struct {
	loc  rgLoc
	recs []arrow.RecordBatch
	rows int64
	w    int
}

func (a *annotated) release() {
	for _, r := range a.recs {
		r.Release()
	}
	a.recs = nil
}

func (j *annotateJob) annotateRowGroup(ctx context.Context, af *annotateFile, loc rgLoc) (a *annotated, err error) {
	opts, labels, fn := j.opts, j.labels, j.fn
	res := &annotated{loc: loc}
	defer func() {
		if r := recover(); r != nil {
			err = loc.parquetErr("", "cannot decode: %v", r)
		}
		if err != nil {
			res.release()
			a = nil
		}
	}()
	fr, err := openReader(&af.fileInfo, j.props)
	if err != nil {
		return nil, err
	}
	defer fr.Close()

	rg := fr.RowGroup(loc.rg)
	n := rg.NumRows()
	var notes []string
	if j.nulls() {
		d := decoderPool.Get().(*decoder)
		steps, err := d.ints(ctx, rg, af.step, n, loc, make([]int64, 0, min(n, capHint)))
		if err == nil {
			for i := range steps {
				steps[i] += af.shift
			}
			notes, err = j.notes(ctx, d, rg, n, af, loc, steps)
		}
		decoderPool.Put(d)
		if err != nil {
			return nil, err
		}
	}
	keep := scoredRows(notes)
	if keep == nil {
		notes = nil // every row is scored and checked as without a null policy
	}
	ch, err := decodeStepsAndState(ctx, rg, n, af, loc, opts, notes)
	if err != nil {
		return nil, err
	}
	res.w = ch.W
	res.rows = n
	var rec *recommendation
	if keep != nil {
		rec, err = recommendSome(ch, n, keep, notes, loc, labels, fn, opts)
	} else {
		rec, err = recommend(ch, n, loc, labels, fn)
	}
	if err != nil {
		return nil, err
	}
	// Copy every column through Arrow and append the new ones.
	if err := copyExtended(ctx, fr, af, res, rec, labels, j.outSchema, j.addHive, j.hiveInt, j.mem); err != nil {
		return nil, err
	}
	return res, nil
}

// scoredRows returns the indices of the rows without a note, or nil when
// every row is scored.
func scoredRows(notes []string) []int {
	var keep []int
	unscored := false
	for i, n := range notes {
		if n == "" {
			keep = append(keep, i)
		} else {
			unscored = true
		}
	}
	if !unscored {
		return nil
	}
	if keep == nil {
		keep = []int{}
	}
	return keep
}

// recommendSome is recommend for the rows keep of the chunk (n rows):
// their states are checked and scored, and the other rows get no
// recommendation (valid false), no evidence and their note.
func recommendSome(ch *traj.Chunk, n int64, keep []int, notes []string, loc rgLoc, labels []string, fn annotateFunc, opts *traj.Options) (*recommendation, error) {
	w := ch.W
	sub := &traj.Chunk{Src: ch.Src, W: w, Step: make([]int64, len(keep)), Reward: make([]float64, len(keep)), State: make([]float64, len(keep)*w)}
	for j, i := range keep {
		sub.Step[j] = ch.Step[i]
		copy(sub.State[j*w:(j+1)*w], ch.State[i*w:(i+1)*w])
	}
	if err := traj.NewBuilder(*opts).CheckState(sub); err != nil {
		// Name the row of the row group, not of the scored rows.
		var re *traj.RowError
		if errors.As(err, &re) {
			if j := re.Row - ch.Src.Row; j >= 0 && j < int64(len(keep)) {
				re.Row = ch.Src.Row + int64(keep[j])
			}
		}
		return nil, err
	}
	part, err := recommend(sub, int64(len(keep)), loc, labels, fn)
	if err != nil {
		return nil, err
	}
	rec := &recommendation{action: make([]int32, n), q: make([]float64, n), evidence: make([]bool, n), valid: make([]bool, n), notes: notes}
	for j, i := range keep {
		rec.action[i], rec.q[i], rec.evidence[i], rec.valid[i] = part.action[j], part.q[j], part.evidence[j], true
	}
	return rec, nil
}

// decodeStepsAndState decodes and validates the step and state columns of
// row group rg (n rows), as Read does, into a chunk with only Step, State
// and W set (and Reward, for consistent lengths).
//
// Under a null policy, notes says which rows are not scored: a NULL state
// reads as 0 there, and the state is checked by recommendSome, on the
// scored rows only.
func decodeStepsAndState(ctx context.Context, rg *file.RowGroupReader, n int64, af *annotateFile, loc rgLoc, opts *traj.Options, notes []string) (*traj.Chunk, error) {
	d := decoderPool.Get().(*decoder)
	defer decoderPool.Put(d)
	steps, err := d.ints(ctx, rg, af.step, n, loc, make([]int64, 0, min(n, capHint)))
	if err != nil {
		return nil, err
	}
	for i := range steps {
		steps[i] += af.shift
	}
	for i, h := range steps {
		if notes != nil && notes[i] != "" {
			continue
		}
		if h < 1 {
			return nil, loc.badValueOf(traj.StepBelowErr(opts.FirstStep, h), af.step.name, int64(i), "%s", traj.StepBelowMsg(opts.FirstStep, h))
		}
		if opts.Horizon > 0 && h > int64(opts.Horizon) {
			return nil, loc.badValue(af.step.name, int64(i), "%s", traj.StepBeyondMsg(opts.FirstStep, h, opts.Horizon))
		}
	}
	ch := &traj.Chunk{Src: traj.Origin{File: loc.file, RowGroup: loc.rg, Row: loc.row0}, Step: steps}
	if notes != nil {
		d.missing = make([]bool, n)
	}
	err = d.decodeState(ctx, rg, af.state, n, loc, ch, nil)
	d.missing = nil
	if err != nil {
		return nil, err
	}
	if notes != nil {
		return ch, nil
	}
	// CheckState needs a chunk of consistent lengths; only State and W matter.
	ch.Reward = make([]float64, len(steps))
	if err := traj.NewBuilder(*opts).CheckState(ch); err != nil {
		return nil, err
	}
	return ch, nil
}

// recommendation is fn's answer for every row of a row group.
type recommendation struct {
	action   []int32
	q        []float64
	evidence []bool
	// valid marks the rows with a recommendation (nil: every row); notes
	// says why the others have none (nil without a null policy).
	valid []bool
	notes []string
}

// recommend calls fn on the chunk's rows (n of them) and checks that every
// recommended action is a valid index (into labels, when there are labels).
func recommend(ch *traj.Chunk, n int64, loc rgLoc, labels []string, fn annotateFunc) (*recommendation, error) {
	rec := &recommendation{action: make([]int32, n), q: make([]float64, n), evidence: make([]bool, n)}
	if err := fn(ch.Step, ch.State, ch.W, rec.action, rec.q, rec.evidence); err != nil {
		return nil, fmt.Errorf("%s: row group %d: %w", loc.file, loc.rg, err)
	}
	for i, v := range rec.action {
		if v < 0 || (labels != nil && int(v) >= len(labels)) {
			want := "a nonnegative action index"
			if labels != nil {
				want = fmt.Sprintf("an index into the %d action labels", len(labels))
			}
			return nil, fmt.Errorf("parquetio: %s: row group %d, row %d: recommended action %d, want %s", loc.file, loc.rg, loc.row0+int64(i), v, want)
		}
	}
	return rec, nil
}

// copyExtended reads the row group's records through Arrow and appends to
// res.recs each one extended with the hive site and the recommendation's
// columns.
func copyExtended(ctx context.Context, fr *file.Reader, af *annotateFile, res *annotated, rec *recommendation, labels []string,
	outSchema *arrow.Schema, addHive, hiveInt bool, mem memory.Allocator) error {
	loc := res.loc
	n := int64(len(rec.action))
	ar, err := pqarrow.NewFileReader(fr, pqarrow.ArrowReadProperties{}, mem)
	if err != nil {
		return loc.parquetErr("", "cannot read: %v", err)
	}
	rr, err := ar.GetRecordReader(ctx, nil, []int{loc.rg})
	if err != nil {
		return loc.parquetErr("", "cannot read: %v", err)
	}
	defer rr.Release()
	var off int64
	for rr.Next() {
		batch := rr.RecordBatch()
		m := batch.NumRows()
		if off+m > n {
			return loc.parquetErr("", "the row group holds more than its %d rows", n)
		}
		out, err := extend(batch, outSchema, addHive, hiveInt, af.hive, labels, rec.slice(off, off+m), mem)
		if err != nil {
			return loc.parquetErr("", "%v", err)
		}
		res.recs = append(res.recs, out)
		off += m
	}
	if err := rr.Err(); err != nil {
		return loc.parquetErr("", "cannot decode: %v", err)
	}
	if off != n {
		return loc.parquetErr("", "read %d of the row group's %d rows", off, n)
	}
	return nil
}

// extend returns rec's columns plus the hive site (when addHive) and the
// three result columns, as a record of schema sc.
func extend(rec arrow.RecordBatch, sc *arrow.Schema, addHive, hiveInt bool, hive string, labels []string,
	r *recommendation, mem memory.Allocator) (arrow.RecordBatch, error) {
	action, q, evidence := r.action, r.q, r.evidence
	m := int(rec.NumRows())
	var extra []arrow.Array
	defer func() {
		for _, a := range extra {
			a.Release()
		}
	}()
	if addHive {
		if hiveInt {
			v, err := strconv.ParseInt(hive, 10, 64)
			if err != nil {
				return nil, err
			}
			b := array.NewInt64Builder(mem)
			for range m {
				b.Append(v)
			}
			extra = append(extra, b.NewArray())
			b.Release()
		} else {
			b := array.NewStringBuilder(mem)
			for range m {
				b.Append(hive)
			}
			extra = append(extra, b.NewArray())
			b.Release()
		}
	}
	if labels != nil {
		b := array.NewStringBuilder(mem)
		for i, v := range action {
			if r.valid != nil && !r.valid[i] {
				b.AppendNull()
				continue
			}
			b.Append(labels[v])
		}
		extra = append(extra, b.NewArray())
		b.Release()
	} else {
		b := array.NewInt32Builder(mem)
		b.AppendValues(action, r.valid)
		extra = append(extra, b.NewArray())
		b.Release()
	}
	qb := array.NewFloat64Builder(mem)
	qb.AppendValues(q, r.valid)
	extra = append(extra, qb.NewArray())
	qb.Release()
	eb := array.NewBooleanBuilder(mem)
	eb.AppendValues(evidence, nil)
	extra = append(extra, eb.NewArray())
	eb.Release()
	if len(sc.FieldIndices(ColRecommendationNote)) > 0 {
		nb := array.NewStringBuilder(mem)
		for i := range action {
			if r.notes == nil || r.notes[i] == "" {
				nb.AppendNull()
			} else {
				nb.Append(r.notes[i])
			}
		}
		extra = append(extra, nb.NewArray())
		nb.Release()
	}

	cols := append(append([]arrow.Array{}, rec.Columns()...), extra...)
	if len(cols) != sc.NumFields() {
		return nil, fmt.Errorf("the record has %d columns, the output schema %d", len(cols), sc.NumFields())
	}
	for i, c := range cols {
		if !arrow.TypeEqual(c.DataType(), sc.Field(i).Type) {
			return nil, fmt.Errorf("column %q has type %s, the output schema says %s", sc.Field(i).Name, c.DataType(), sc.Field(i).Type)
		}
	}
	return array.NewRecordBatch(sc, cols, int64(m)), nil
}

// slice returns rows [i, j) of r.
func (r *recommendation) slice(i, j int64) *recommendation {
	out := &recommendation{action: r.action[i:j], q: r.q[i:j], evidence: r.evidence[i:j]}
	if r.valid != nil {
		out.valid = r.valid[i:j]
	}
	if r.notes != nil {
		out.notes = r.notes[i:j]
	}
	return out
}
