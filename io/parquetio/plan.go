package parquetio

import (
	"context"
	"fmt"
	"math"
	"os"
	"slices"
	"time"

	"github.com/apache/arrow-go/v18/arrow/memory"
)

// Plan is what one validating pass over the inputs learned, for reading
// them again step by step when they do not fit in memory: [Survey] makes
// it, [Plan.ReadSteps] reads a window of steps. Besides the counts below it
// holds the key of every trajectory (its step-1 row's traj value), sorted
// per site, so that a window numbers trajectories as Read does: 8 bytes per
// trajectory for integer ids, the label's bytes plus 8 for string ids. A
// Plan is not changed by ReadSteps, which may be called concurrently.
type Plan struct {
	// Sites holds the site labels in canonical order, exactly as Read's
	// Table.Sites would.
	Sites []string
	// Trajectories holds, per site, the number of trajectories (the rows
	// at step 1: every trajectory starts at step 1).
	Trajectories []int
	// Actions holds the sorted action labels when the action column holds
	// strings (as Table.Actions), else nil.
	Actions []string
	// A, H and W are as Read's Table would have them: A honours
	// Options.Actions and Options.ActionLabels, H honours Options.Horizon,
	// W is the width of a row's state.
	A, H, W int
	// Rows is the total number of rows of the input.
	Rows int
	// Sources lists the inputs, as Table.Sources.
	Sources []Source
	// CellRows[h-1][k] is the number of rows of site k at step h.
	CellRows [][]int
	// MaxState is the largest state value seen for an integer StateSpec
	// (-1 otherwise), from which callers infer S for tabular maps as they
	// would from Read's Table.
	MaxState float64

	opts     Options
	mem      memory.Allocator
	infos    []*fileInfo
	stamps   map[*fileInfo]fileStamp // size and modification time at the survey
	hiveInt  bool
	siteKind kind
	// tasks are the input's non-empty row groups in (file, row group)
	// order; stepLo[i]..stepHi[i] is the range of steps of task i's rows.
	tasks          []rgTask
	stepLo, stepHi []int32
	// trajs holds every site's trajectory keys, from which ReadSteps
	// numbers trajectories as Read does.
	trajs *trajIndex
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
func Survey(ctx context.Context, paths []string, opts Options) (*Plan, error) {
	return survey(ctx, paths, opts, memory.DefaultAllocator)
}

func survey(ctx context.Context, paths []string, opts Options, mem memory.Allocator) (*Plan, error) {
	cols := opts.Columns.withDefaults()
	infos, hiveInt, err := openInputs(ctx, paths, &opts, cols)
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
	b := NewBuilder(opts)
	b.survey = &surveyState{}
	var total int64
	for _, fi := range infos {
		rows := fileRows(fi.md)
		b.AddSource(Source{Path: fi.path, Size: fi.size, Fingerprint: fi.fp, Rows: rows})
		total += rows
	}
	if opts.Progress != nil {
		opts.Progress.SetTotal(total)
	}
	tasks := planRowGroups(infos)
	stepLo := make([]int32, len(tasks))
	stepHi := make([]int32, len(tasks))
	props := readerProps(mem)
	err = ordered(ctx, workers(opts.Workers), len(tasks),
		func(ctx context.Context, i int) (*Chunk, error) {
			return decodeTask(ctx, tasks[i], props, hiveInt, false, nil)
		},
		func(i int, ch *Chunk) error {
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
	cn, err := b.finishSurvey()
	if err != nil {
		return nil, err
	}
	p := &Plan{
		Sites: cn.sites, Actions: cn.actions, A: cn.A, H: cn.H, W: b.w, Rows: int(total),
		Sources: b.sources, MaxState: b.maxState,
		opts: opts, mem: mem, infos: infos, stamps: stamps, hiveInt: hiveInt, siteKind: b.siteKind,
		tasks: tasks, stepLo: stepLo, stepHi: stepHi,
	}
	K := len(cn.sites)
	p.trajs = b.survey.index(cn.siteRank, K, b.trajKind == kindStr, opts.Workers)
	p.CellRows = make([][]int, cn.H)
	for h := range p.CellRows {
		p.CellRows[h] = make([]int, K)
	}
	for id, row := range b.survey.cells {
		k := cn.siteRank[id]
		for h, n := range row {
			p.CellRows[h][k] = n
		}
	}
	p.Trajectories = make([]int, K)
	if cn.H > 0 {
		copy(p.Trajectories, p.CellRows[0])
	}
	return p, nil
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
func (p *Plan) ReadSteps(ctx context.Context, lo, hi int) (*Table, error) {
	if lo < 1 || lo > hi || hi > p.H {
		return nil, fmt.Errorf("parquetio: cannot read steps %d..%d: want 1 <= lo <= hi <= H = %d", lo, hi, p.H)
	}
	opts := p.opts
	opts.Progress = nil
	opts.Horizon = p.H
	if p.Actions != nil {
		opts.ActionLabels = p.Actions
	} else {
		opts.Actions = p.A
	}
	b := NewBuilder(opts)
	b.window, b.lo, b.hi, b.trajs = true, lo, hi, p.trajs
	b.siteKind = p.siteKind
	for _, s := range p.Sites {
		b.internSite(s)
	}
	b.fixedSites = true
	if opts.State.List {
		b.w, b.wKnown = p.W, true
	}
	for _, s := range p.Sources {
		b.AddSource(s)
	}
	rows := 0
	for h := lo; h <= hi; h++ {
		for _, n := range p.CellRows[h-1] {
			rows += n
		}
	}
	b.reserve(rows)
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
	err := ordered(ctx, workers(opts.Workers), len(tasks),
		func(ctx context.Context, i int) (*Chunk, error) {
			ch, err := decodeTask(ctx, tasks[i], props, p.hiveInt, false, nil)
			if err != nil {
				return nil, err
			}
			return ch.keepSteps(lo, hi, tasks[i].loc)
		},
		func(i int, ch *Chunk) error {
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
	return &RowError{File: path, RowGroup: -1, Row: -1, Msg: "the file changed " + when + ": read the input again", Err: ErrBadData}
}

// keepSteps drops the rows of c whose step is outside lo..hi, in place,
// recording the kept rows' offsets for messages. c must come from one row
// group (loc).
func (c *Chunk) keepSteps(lo, hi int, loc rgLoc) (*Chunk, error) {
	n := c.Len()
	keep := -1 // first row to drop
	for i, h := range c.Step {
		if h < int64(lo) || h > int64(hi) {
			keep = i
			break
		}
	}
	if keep < 0 {
		return c, nil
	}
	if n > math.MaxInt32 {
		return nil, loc.parquetErr("", "the row group has %d rows, more than a step window can select from", n)
	}
	idx := make([]int32, 0, n-1)
	for i := range keep {
		idx = append(idx, int32(i))
	}
	for i := keep + 1; i < n; i++ {
		if h := c.Step[i]; h >= int64(lo) && h <= int64(hi) {
			idx = append(idx, int32(i))
		}
	}
	c.SiteInt = pickRows(c.SiteInt, idx, 1)
	c.SiteStr = pickRows(c.SiteStr, idx, 1)
	c.TrajInt = pickRows(c.TrajInt, idx, 1)
	c.TrajStr = pickRows(c.TrajStr, idx, 1)
	c.ActionInt = pickRows(c.ActionInt, idx, 1)
	c.ActionStr = pickRows(c.ActionStr, idx, 1)
	c.Step = pickRows(c.Step, idx, 1)
	c.Reward = pickRows(c.Reward, idx, 1)
	c.State = pickRows(c.State, idx, c.W)
	if c.offs != nil {
		for j, i := range idx {
			idx[j] = c.offs[i]
		}
	}
	c.offs = slices.Clip(idx)
	return c, nil
}

// pickRows keeps the rows idx (ascending) of s, w values per row, in place.
// A nil s stays nil.
func pickRows[T any](s []T, idx []int32, w int) []T {
	if s == nil {
		return nil
	}
	if w == 1 {
		for j, i := range idx {
			s[j] = s[i]
		}
		return s[:len(idx)]
	}
	for j, i := range idx {
		copy(s[j*w:(j+1)*w], s[int(i)*w:(int(i)+1)*w])
	}
	return s[:len(idx)*w]
}

// surveyState is what a survey keeps instead of rows.
type surveyState struct {
	// cells[id][h-1] counts the rows of interned site id at step h.
	cells [][]int
	// keys[id] collects the trajectory keys of interned site id's rows at
	// step 1, for the Plan's trajectory index.
	keys []keyBuf
	// The input's first row, which a wrong phi length names.
	first    Origin
	firstRow int
	seen     bool
	// The precomputed map's block sums, checked for every number of
	// actions A the list length allows (A is known only at the end): live
	// holds the A whose blocks summed to 1 in every row so far, faults the
	// first row that did not for the others.
	phiInit bool
	live    []int
	faults  map[int]phiFault
}

type phiFault struct {
	src    Origin
	row, a int
	sum    float64
}

// add counts the rows of c, which Add has validated and appended to b's
// site, step and action slices, and truncates those slices.
func (sv *surveyState) add(b *Builder, c *Chunk) {
	n := c.Len()
	if n > 0 && !sv.seen {
		sv.seen, sv.first, sv.firstRow = true, c.Src, c.at(0)
	}
	site, step := b.site[len(b.site)-n:], b.step[len(b.step)-n:]
	for i := range n {
		k, h := int(site[i]), int(step[i])
		for k >= len(sv.cells) {
			sv.cells = append(sv.cells, nil)
		}
		row := sv.cells[k]
		if h > len(row) {
			row = append(row, make([]int, h-len(row))...)
			sv.cells[k] = row
		}
		row[h-1]++
	}
	sv.collectKeys(c, site, step)
	if b.opts.State.List {
		sv.phi(b, c)
	}
	b.site, b.step, b.action = b.site[:0], b.step[:0], b.action[:0]
}

func (sv *surveyState) phi(b *Builder, c *Chunk) {
	w, n := b.w, c.Len()
	if n == 0 || w == 0 {
		return
	}
	if !sv.phiInit {
		sv.phiInit = true
		sv.faults = map[int]phiFault{}
		D := b.opts.State.D
		for A := 1; A <= w; A++ {
			if w%A == 0 && (D <= 0 || w == A*D) {
				sv.live = append(sv.live, A)
			}
		}
	}
	for i := 0; i < n && len(sv.live) > 0; i++ {
		row := c.State[i*w : (i+1)*w]
		for j := 0; j < len(sv.live); {
			A := sv.live[j]
			if a, s, bad := phiOff(row, A); bad {
				sv.faults[A] = phiFault{src: c.Src, row: c.at(i), a: a, sum: s}
				sv.live = slices.Delete(sv.live, j, j+1)
				continue
			}
			j++
		}
	}
}

// finishSurvey derives what Build would (sites, actions, A, H) and makes
// the checks Build makes before sorting: the precomputed map's length and
// block sums.
func (b *Builder) finishSurvey() (canonical, error) {
	cn := b.canonical()
	sv := b.survey
	if b.opts.State.List && sv.seen {
		if err := b.checkPhiWidth(cn.A, func() (Origin, int) { return sv.first, sv.firstRow }); err != nil {
			return cn, err
		}
		if f, ok := sv.faults[cn.A]; ok {
			return cn, b.phiSumErr(f.src, f.row, f.a, f.sum)
		}
	}
	return cn, nil
}
