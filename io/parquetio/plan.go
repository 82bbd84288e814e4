package parquetio

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/grmdp/grmdp/internal/workers"
	"github.com/grmdp/grmdp/traj"
)

// Plan is what one validating pass over the inputs learned, for reading
// them again step by step when they do not fit in memory: [Survey] makes
// it, [Plan.ReadSteps] reads a window of steps. Its [traj.Summary] holds
// the counts and every trajectory's key; the Plan adds where the rows are.
// A Plan is not changed by ReadSteps, which may be called concurrently.
type Plan struct {
	traj.Summary

	opts    traj.Options
	mem     memory.Allocator
	infos   []*fileInfo
	stamps  map[*fileInfo]fileStamp // size and modification time at the survey
	hiveInt bool
	// tasks are the input's non-empty row groups in (file, row group)
	// order; stepLo[i]..stepHi[i] is the range of steps of task i's rows.
	tasks          []rgTask
	stepLo, stepHi []int32
}

type fileStamp struct {
	size int64
	mod  time.Time
}

// Survey reads every row of the inputs once, validating every value as
// [Read] does (same errors, naming the same file, row group, row and
// column), and keeps no rows: memory is bounded by the row groups in
// flight, the counts per (site, step) and the trajectories' keys (see
// [Plan]), not by the number of rows. It returns the Plan for
// [Plan.ReadSteps].
//
// Survey detects every error Read detects except two that need the rows of
// whole trajectories: duplicate (site, traj, step) rows and gaps inside an
// episode. ReadSteps reports those, for the steps of its window, with
// Read's message. (The precomputed map's checks that Read makes once A is
// known, phi's length and each block's sum, Survey makes at the end of its
// pass, with Read's message and row.) Options.Progress receives the rows as
// they are validated.
func Survey(ctx context.Context, paths []string, opts traj.Options) (*Plan, error) {
	return survey(ctx, paths, opts, memory.DefaultAllocator)
}

func survey(ctx context.Context, paths []string, opts traj.Options, mem memory.Allocator) (*Plan, error) {
	if opts.Nulls != traj.NullsError {
		return nil, fmt.Errorf("parquetio: null policy %s needs the whole input in memory, which Survey's out-of-core read does not hold: read the input with Read, or drop the rows with NULLs before reading", opts.Nulls)
	}
	cols := opts.Columns.WithDefaults()
	infos, hiveInt, err := openInputs(ctx, paths, &opts, cols)
	if err != nil {
		return nil, err
	}
	zeroStep, err := firstStep(ctx, infos, &opts, readerProps(mem))
	if err != nil {
		return nil, err
	}
	stamps := make(map[*fileInfo]fileStamp, len(infos))
	for _, fi := range infos {
		st, err := os.Stat(fi.path)
		if err != nil {
			return nil, ioErr(fi.path, err)
		}
		if st.Size() != fi.size {
			return nil, changedErr(fi.path, "while it was being read")
		}
		stamps[fi] = fileStamp{size: st.Size(), mod: st.ModTime()}
	}
	b := traj.NewSurveyBuilder(opts)
	var total int64
	for _, fi := range infos {
		rows := fileRows(fi.md)
		b.AddSource(traj.Source{Path: fi.path, Size: fi.size, Fingerprint: fi.fp, Rows: rows})
		total += rows
	}
	if opts.Progress != nil {
		opts.Progress.SetTotal(total)
	}
	tasks := planRowGroups(infos)
	stepLo := make([]int32, len(tasks))
	stepHi := make([]int32, len(tasks))
	props := readerProps(mem)
	err = ordered(ctx, workers.Or(opts.Workers), len(tasks),
		func(ctx context.Context, i int) (*traj.Chunk, error) {
			return decodeTask(ctx, tasks[i], props, hiveInt, false, nil)
		},
		func(i int, ch *traj.Chunk) error {
			if err := b.Add(ch); err != nil {
				return err
			}
			// Add checked every step to lie in 1..MaxInt16.
			lo, hi := int64(math.MaxInt32), int64(0)
			for _, h := range ch.Step {
				lo, hi = min(lo, h), max(hi, h)
			}
			stepLo[i], stepHi[i] = int32(lo), int32(hi)
			if opts.Progress != nil {
				opts.Progress.Add(int64(ch.Len()))
			}
			return nil
		}, nil)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if total == 0 {
		return nil, noRows(infos)
	}
	sum, err := b.Summarize()
	if err != nil {
		return nil, err
	}
	sum.Rows = int(total)
	sum.ZeroStepFile = zeroStep
	return &Plan{Summary: *sum,
		opts: opts, mem: mem, infos: infos, stamps: stamps, hiveInt: hiveInt,
		tasks: tasks, stepLo: stepLo, stepHi: stepHi,
	}, nil
}

// RowGroups returns the number of row groups of the input that hold rows
// (row groups without rows are never decoded).
func (p *Plan) RowGroups() int { return len(p.tasks) }

// RowGroupsFor returns the number of row groups ReadSteps(lo, hi) decodes:
// those holding a row at a step in lo..hi.
func (p *Plan) RowGroupsFor(lo, hi int) int {
	n := 0
	for i := range p.tasks {
		if p.meets(i, lo, hi) {
			n++
		}
	}
	return n
}

// meets says whether task i's steps meet lo..hi.
func (p *Plan) meets(i, lo, hi int) bool {
	return int(p.stepLo[i]) <= hi && int(p.stepHi[i]) >= lo
}

// ReadSteps returns a Table holding only the rows whose step is in lo..hi
// (1 <= lo <= hi <= H). It decodes only the row groups whose steps (as the
// survey saw them) meet lo..hi, in parallel as [Read] does, and drops the
// other rows inside them.
//
// The Table has the Plan's Sites (all of them, in the Plan's order, even
// those without rows in the window), Actions, A, H, W, Sources and
// Trajectories (the whole input's counts); Rows counts the window's rows.
// Steps outside lo..hi hold no rows (SiteStart all zeros). Within the
// window the Table is exactly what Read's Table holds for those steps: the
// same rows in the same order with the same values and trajectory ordinals
// (Step.Traj: the index of the row's trajectory among all the input's
// trajectories in (site, trajectory key) order, looked up in the survey's
// keys), and the same Next links from step h to h+1 for lo <= h < hi; rows
// at step hi have Next = -1.
//
// A row whose trajectory has no row at step 1 is a gap, which the windows
// holding both that trajectory's first row and the step before it report.
// A window that starts at that first row (lo > 1) reports no error and
// gives the trajectory's rows Traj = -1 (Read would fail on such input).
//
// Duplicate rows at steps lo..hi, and gaps between steps lo..hi (a row at
// step h, lo < h <= hi, whose trajectory has no row at h-1), are reported
// as Read reports them, naming the offending row's file, row group and row.
// A file changed since the survey (its size or modification time) is an
// error wrapping [ErrBadData]. ReadSteps reports no progress.
func (p *Plan) ReadSteps(ctx context.Context, lo, hi int) (*traj.Table, error) {
	if lo < 1 || lo > hi || hi > p.H {
		return nil, fmt.Errorf("parquetio: cannot read steps %d..%d: want 1 <= lo <= hi <= H = %d", lo, hi, p.H)
	}
	opts := p.opts
	b := traj.NewWindowBuilder(opts, &p.Summary, lo, hi)
	var tasks []rgTask
	checked := map[*fileInfo]bool{}
	for i, t := range p.tasks {
		if !p.meets(i, lo, hi) {
			continue
		}
		tasks = append(tasks, t)
		if !checked[t.fi] {
			checked[t.fi] = true
			if err := p.unchanged(t.fi); err != nil {
				return nil, err
			}
		}
	}
	props := readerProps(p.mem)
	err := ordered(ctx, workers.Or(opts.Workers), len(tasks),
		func(ctx context.Context, i int) (*traj.Chunk, error) {
			ch, err := decodeTask(ctx, tasks[i], props, p.hiveInt, false, nil)
			if err != nil {
				return nil, err
			}
			if n := ch.Len(); n > math.MaxInt32 {
				return nil, tasks[i].loc.parquetErr("", "the row group has %d rows, more than a step window can select from", n)
			}
			ch.KeepSteps(lo, hi)
			return ch, nil
		},
		func(i int, ch *traj.Chunk) error {
			if ch.Len() == 0 {
				return nil
			}
			return b.Add(ch)
		}, nil)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t, err := b.Build()
	if err != nil {
		return nil, err
	}
	t.Trajectories = slices.Clone(p.Trajectories)
	return t, nil
}

// unchanged checks that fi has the size and modification time the survey
// saw: the Plan's footers and step ranges describe that content.
func (p *Plan) unchanged(fi *fileInfo) error {
	st, err := os.Stat(fi.path)
	if err != nil {
		return ioErr(fi.path, err)
	}
	if was := p.stamps[fi]; st.Size() != was.size || !st.ModTime().Equal(was.mod) {
		return changedErr(fi.path, "since it was surveyed")
	}
	return nil
}

func changedErr(path, when string) error {
	return &traj.RowError{File: path, RowGroup: -1, Row: -1, Msg: "the file changed " + when + ": read the input again", Err: ErrBadData}
}
