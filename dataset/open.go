package dataset

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/internal/timing"
	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// Data is trajectory data opened once: its rows held in memory with their
// feature map and per-(site, step) statistics, or surveyed to be read one
// pair of steps at a time (out of core). Its methods work the same way
// either way, except those that need every row at once, which return
// ErrInMemory out of core.
type Data struct {
	opts  Options
	paths []string
	limit Limit

	// In memory. decide, for a policy evaluated through another map than
	// its own (Options.UsePolicyThrough), holds the table's rows with the
	// policy's state columns.
	table    *traj.Table
	decide   *traj.Table
	fmap     features.Map
	stats    *solve.Stats
	warnings []string

	// Out of core.
	plan   *parquetio.Plan
	blocks features.Blocks
}

// Open opens the data at paths (Parquet files, directories or globs). It
// reads them into memory, or surveys them to be solved out of core: with
// o.OutOfCore, or when they would not fit in o.MaxMemory and nothing
// needs them in memory (a note then says so). Data that fit nowhere are
// refused with ErrTooLarge.
func Open(ctx context.Context, paths []string, o Options) (*Data, error) {
	if len(paths) == 0 {
		return nil, optionErr("paths", "", "no data given: name one or more Parquet files, directories or globs")
	}
	var err error
	if o.Map, err = o.Map.WithDefaultState(); err != nil {
		return nil, &OptionError{Option: "Map.StateColumns", Err: err}
	}
	if err := o.resolveState(paths); err != nil {
		return nil, err
	}
	if err := o.Columns.Check(o.Map.StateColumns); err != nil {
		return nil, err
	}
	if err := o.samePolicyMap(); err != nil {
		return nil, err
	}
	limit, err := ParseLimit(o.MaxMemory)
	if err != nil {
		return nil, err
	}
	why := o.whyInMemory()
	if o.OutOfCore {
		if why != "" {
			return nil, optionErr("OutOfCore", "", "%s", why)
		}
		return survey(ctx, paths, o, limit)
	}
	if why == "" {
		tooLarge := checkMemory(limit, &o, paths)
		if errors.Is(tooLarge, ErrTooLarge) {
			d, err := survey(ctx, paths, o, limit)
			if errors.Is(err, ErrTooLarge) {
				// Not even one pair of steps fits: the first refusal
				// stands.
				return nil, tooLarge
			}
			if err != nil {
				return nil, err
			}
			var tl *TooLargeError
			errors.As(tooLarge, &tl)
			o.note(Note{Kind: OutOfCore, TooLarge: tl})
			return d, nil
		}
	}
	return load(ctx, paths, o, limit)
}

// whyInMemory says why the data cannot be read out of core, or "".
func (o *Options) whyInMemory() string {
	switch {
	case o.rowsOnly:
		return o.InMemory
	case o.Map.Kind == features.Precomputed:
		return "the precomputed map's block structure is found from every row at once"
	case features.Unresolved(o.Map.Bins):
		return "quantile bins are computed from every row at once: give the cut points instead"
	case o.InMemory != "":
		return o.InMemory
	case o.policyMap != nil:
		return "a policy evaluated through another feature map than its own decides on rows held in memory"
	case o.Disclosure.Active():
		return "disclosure control applies to statistics held in memory"
	}
	return ""
}

// resolveState names the action-block map's state columns s1, s2, ...
// found in the data when o does not.
func (o *Options) resolveState(paths []string) error {
	if o.Map.Kind != features.ActionBlock || o.Map.StateColumns != nil {
		return nil
	}
	cols, err := parquetio.PrefixedColumns(paths, "s")
	if err != nil {
		return err
	}
	if len(cols) == 0 {
		return optionErr("Map.StateColumns", "", "%s: no state columns s1, s2, ... found for the action-block map: name them", paths[0])
	}
	o.Map.StateColumns = cols
	return nil
}

// detectFirstStep resolves traj.StepsDetect before the data are read. An
// error here is left for the read to report, in its order.
func (o *Options) detectFirstStep(ctx context.Context, paths []string) {
	if o.FirstStep != traj.StepsDetect {
		return
	}
	fs, zero, err := parquetio.DetectFirstStep(ctx, paths, o.ReadOptions(nil))
	if err != nil {
		return
	}
	o.FirstStep, o.zeroStepFile = fs, zero
}

// prepNotes notes how the rows were prepared: steps read as numbered from
// 0, and the rows a null policy removed, per site.
func (o *Options) prepNotes(zeroStepFile string, counts []traj.NullCount) {
	if zeroStepFile != "" {
		o.note(Note{Kind: ZeroSteps, File: zeroStepFile})
	}
	for _, n := range counts {
		o.note(Note{Kind: NullsRemoved, Nulls: o.Nulls, Removed: n})
	}
}

// load reads paths into memory and builds the per-(site, step)
// statistics.
func load(ctx context.Context, paths []string, o Options, limit Limit) (*Data, error) {
	setReadingHeadroom()
	if err := checkMemory(limit, &o, paths); err != nil {
		return nil, err
	}
	if o.CheckActions {
		if err := parquetio.CheckActions(ctx, paths, o.ReadOptions(nil)); err != nil {
			return nil, err
		}
	}
	o.detectFirstStep(ctx, paths)
	bar := o.progress("reading")
	t, err := parquetio.Read(ctx, paths, o.ReadOptions(bar))
	bar.Finish()
	if err != nil {
		return nil, err
	}
	var decide *traj.Table
	if o.policyMap != nil {
		if t, decide, err = o.splitStates(t); err != nil {
			return nil, err
		}
	}
	o.prepNotes(cmp.Or(o.zeroStepFile, t.ZeroStepFile), t.Nulls)
	if t.Actions != nil && o.Actions > 0 && o.Actions != len(t.Actions) {
		return nil, optionErr("Actions", fmt.Sprint(o.Actions), "the action column holds %d string labels %v; a number of actions applies to integer actions", len(t.Actions), t.Actions)
	}
	m, err := mapOf(&o, t)
	if err != nil {
		return nil, err
	}
	// The statistics' size follows from the map before its blocks (of d
	// entries) are built; a precomputed map's blocks come from the data,
	// whose width bounds d.
	need := parquetio.EstimateMemory(int64(t.Rows), t.W, m.Kind == features.Precomputed)
	if m.Kind != features.Precomputed {
		if err := checkStatsMemory(limit, paths, need, len(t.Sites), t.H, packedSize(m), m.Dim()); err != nil {
			return nil, err
		}
	}
	blocks := solve.BlocksFor(t, &m)
	if m.Kind == features.Precomputed {
		l := solve.NewLayout(blocks)
		if err := checkStatsMemory(limit, paths, need, len(t.Sites), t.H, l.Size(), m.Dim()); err != nil {
			return nil, err
		}
	}
	stop := timing.Start(ctx, "statistics")
	statsOf := t
	if o.window != nil {
		statsOf = o.window(t)
	}
	st, err := solve.NewStatsDisclosed(ctx, statsOf, m, blocks, o.Workers, o.Disclosure)
	stop()
	if err != nil {
		return nil, err
	}
	d := &Data{opts: o, paths: paths, limit: limit, table: t, fmap: m, stats: st, decide: decide}
	if o.window == nil {
		d.warnings = warnings(&o, t, m)
	}
	return d, nil
}

// mapOf completes the feature map from the table: A, S, p, d, and the
// cut points of quantile bins.
func mapOf(o *Options, t *traj.Table) (features.Map, error) {
	sp := o.Map
	states := 0
	if sp.NeedsStates() {
		for h := range t.Steps {
			for _, v := range t.Steps[h].State {
				states = max(states, int(v)+1)
			}
		}
	}
	if sp.Kind == features.Binned || sp.Kind == features.SoftBinned {
		var err error
		if sp.Bins, err = resolveBins(sp.Kind, sp.Bins, t); err != nil {
			return features.Map{}, err
		}
	}
	return sp.Map(t.A, t.W, states), nil
}

// resolveBins computes quantile cut points (COL:qK) from every row of t:
// all sites and steps, each row once ([features.QuantileCuts]). State
// column j of t is bins[j]'s column. Bins with cut points (given, or read
// from a policy) are kept as they are.
func resolveBins(k features.Kind, bins []features.Bins, t *traj.Table) ([]features.Bins, error) {
	out := make([]features.Bins, len(bins))
	var col []float64
	for j, b := range bins {
		out[j] = b
		if b.Cuts != nil {
			continue
		}
		col = col[:0]
		for h := range t.Steps {
			st := t.Steps[h].State
			for i := j; i < len(st); i += t.W {
				col = append(col, st[i])
			}
		}
		// K quantiles interpolate between order statistics, so K above the
		// column's distinct values gives up to K-1 cut points the data do
		// not separate: refused before any is computed.
		slices.Sort(col)
		if n := distinctSorted(col); b.Quantiles > n {
			return nil, &badInputError{&OptionError{Option: "Map.Bins", Value: describePaths(sourcePaths(t)),
				Err: fmt.Errorf("bins %s: column %s has %d distinct values, so at most %d quantile bins (%s:q%d): ask for fewer or give cut points", b, b.Column, n, n, b.Column, n)}}
		}
		out[j].Cuts = features.QuantileCuts(col, b.Quantiles)
		if out[j].Cuts == nil {
			out[j].Cuts = []float64{}
		}
	}
	if err := features.CheckBins(k, out); err != nil {
		msg := strings.TrimPrefix(err.Error(), "features: ")
		for _, b := range out {
			if b.Quantiles > 0 && strings.Contains(msg, "bins of "+b.Column+":") {
				msg += fmt.Sprintf(": the column's %d-quantiles coincide (too few distinct values); give cut points instead", b.Quantiles)
				break
			}
		}
		return nil, &badInputError{&OptionError{Option: "Map.Bins", Value: describePaths(sourcePaths(t)), Err: errors.New(msg)}}
	}
	return out, nil
}

// sourcePaths lists the files t was read from.
func sourcePaths(t *traj.Table) []string {
	var files []string
	for _, src := range t.Sources {
		files = append(files, src.Path)
	}
	return files
}

// distinctSorted returns the number of distinct values of sorted x.
func distinctSorted(x []float64) int {
	n := 0
	for i, v := range x {
		if i == 0 || v != x[i-1] {
			n++
		}
	}
	return n
}

// survey validates every row once without keeping them and plans the
// out-of-core rounds. It refuses, with ErrTooLarge, data of which even one
// pair of steps would not fit in the memory limit.
func survey(ctx context.Context, paths []string, o Options, limit Limit) (*Data, error) {
	defer timing.Start(ctx, "out of core: survey")()
	plan, need, err := surveyPlan(ctx, paths, &o, limit)
	if err != nil {
		return nil, err
	}
	m := o.Map.Map(plan.A, plan.W, int(plan.MaxState)+1)
	if err := checkStatsMemory(limit, paths, need, len(plan.Sites), plan.H, packedSize(m), m.Dim()); err != nil {
		return nil, err
	}
	return &Data{opts: o, paths: paths, limit: limit, plan: plan, fmap: m, blocks: m.Blocks()}, nil
}

// surveyPlan validates every row once without keeping them
// (parquetio.Survey) and returns the plan and the memory that one pair of
// adjacent steps needs.
func surveyPlan(ctx context.Context, paths []string, o *Options, limit Limit) (*parquetio.Plan, int64, error) {
	setReadingHeadroom()
	if o.Nulls != traj.NullsError {
		return nil, 0, &OptionError{Option: "Nulls", Value: o.Nulls.String(), Err: ErrNullsInMemory}
	}
	o.detectFirstStep(ctx, paths)
	bar := o.progress("surveying")
	plan, err := parquetio.Survey(ctx, paths, o.ReadOptions(bar))
	bar.Finish()
	if err != nil {
		return nil, 0, err
	}
	// The note on 0-based steps waits until every row has been read.
	o.zeroStepFile = cmp.Or(o.zeroStepFile, plan.ZeroStepFile)
	if plan.Actions != nil && o.Actions > 0 && o.Actions != len(plan.Actions) {
		return nil, 0, optionErr("Actions", fmt.Sprint(o.Actions), "the action column holds %d string labels %v; a number of actions applies to integer actions", len(plan.Actions), plan.Actions)
	}
	// The largest window: two adjacent steps.
	window := 0
	for h := range plan.CellRows {
		n := 0
		for u := h; u < min(h+2, len(plan.CellRows)); u++ {
			for _, r := range plan.CellRows[u] {
				n += r
			}
		}
		window = max(window, n)
	}
	need := parquetio.EstimateMemoryHeldTwice(int64(window), plan.W, o.Map.Kind == features.Precomputed)
	if limit.Bytes > 0 && need > limit.Bytes {
		return nil, 0, &TooLargeError{What: fmt.Sprintf("%s: even one pair of steps (%d rows) needs about %s of memory", describePaths(paths), window, FormatSize(need)),
			Limit: limit.Name, Remedy: RaiseLimit}
	}
	return plan, need, nil
}

// InMemory reports whether the rows are held in memory.
func (d *Data) InMemory() bool { return d.table != nil }

// Sites are the data's sites, in the order of the statistics.
func (d *Data) Sites() []string {
	if d.table != nil {
		return d.table.Sites
	}
	return d.plan.Sites
}

// Map is the feature map, completed from the data.
func (d *Data) Map() features.Map { return d.fmap }

// Warnings are about how the data meet the feature map (in memory only).
func (d *Data) Warnings() []string { return d.warnings }

// Table returns the rows, or nil out of core.
func (d *Data) Table() *traj.Table { return d.table }

// Stats returns the per-(site, step) statistics, or nil out of core.
func (d *Data) Stats() *solve.Stats { return d.stats }

// Nulls counts the rows and episodes the null policy removed, per site
// (in memory only).
func (d *Data) Nulls() []traj.NullCount {
	if d.table == nil {
		return nil
	}
	return d.table.Nulls
}

// Held returns nil when the rows are in memory, and otherwise an error
// wrapping ErrInMemory that says that need needs them there.
func (d *Data) Held(need string) error {
	if d.table != nil {
		return nil
	}
	return &InMemoryError{Need: need}
}

// ReadAll tells data opened out of core that every row has been read
// without error (through Plan): it notes what the survey found (steps
// numbered from 0), as Open notes it in memory. The solves call it
// themselves.
func (d *Data) ReadAll() {
	d.opts.prepNotes(d.opts.zeroStepFile, nil)
}

// Scan decodes the columns that data opened under o would read, and
// discards them: the floor a solve's time is measured against. It returns
// the number of rows decoded.
func Scan(ctx context.Context, paths []string, o Options) (int64, error) {
	if len(paths) == 0 {
		return 0, optionErr("paths", "", "no data given: name one or more Parquet files, directories or globs")
	}
	if err := o.resolveState(paths); err != nil {
		return 0, err
	}
	return parquetio.Scan(ctx, paths, o.ReadOptions(nil))
}

// samePolicyMap drops o.policyMap when Map names the policy's own map (the
// same kind, state columns, bins and, for a tabular map, number of
// states): the policy is then evaluated through its own map. It refuses a
// precomputed map on either side, whose one list column is no state of
// another map's.
func (o *Options) samePolicyMap() error {
	pm := o.policyMap
	if pm == nil {
		return nil
	}
	sp := o.Map
	if sp.Kind == pm.Kind && slices.Equal(sp.StateColumns, pm.StateColumns) && sameBins(sp.Bins, pm.Bins) && (sp.Kind != features.Tabular || sp.S == 0 || sp.S == pm.S) {
		o.Map.S = pm.S
		o.policyMap = nil
		return nil
	}
	if sp.Kind == features.Precomputed || pm.Kind == features.Precomputed {
		return optionErr("Map.Kind", sp.Kind.String(), "a policy is evaluated through another feature map than its own (%s) only when neither is precomputed", pm.Kind)
	}
	return nil
}

// sameBins reports whether a and b are the same bins: the same columns,
// quantiles and cut points.
func sameBins(a, b []features.Bins) bool {
	return slices.EqualFunc(a, b, func(x, y features.Bins) bool {
		return x.Column == y.Column && x.Quantiles == y.Quantiles && slices.Equal(x.Cuts, y.Cuts)
	})
}

// unionColumns returns the state columns read for a policy evaluated
// through another map: Map's, then those of the policy's map that Map does
// not read, with the positions of the policy's columns among them.
func (o *Options) unionColumns() (cols []string, policy []int) {
	cols = slices.Clone(o.Map.StateColumns)
	for _, c := range o.policyMap.StateColumns {
		i := slices.Index(cols, c)
		if i < 0 {
			i = len(cols)
			cols = append(cols, c)
		}
		policy = append(policy, i)
	}
	return cols, policy
}

// unionSpec is the reader's state description for a policy evaluated
// through another map: every column of both maps, checked only for finite
// values; each map's own checks run on its columns once they are read
// ([splitStates]).
func (o *Options) unionSpec() traj.StateSpec {
	cols, _ := o.unionColumns()
	return traj.StateSpec{Columns: cols}
}

// splitStates splits t, read with [Options.unionSpec], into the rows with
// the evaluation map's state columns (the table the statistics are formed
// from) and the same rows with the policy's map's state columns (the
// states it decides on), checking each against its map as the reader
// would.
func (o *Options) splitStates(t *traj.Table) (eval, policy *traj.Table, err error) {
	_, pidx := o.unionColumns()
	eidx := make([]int, len(o.Map.StateColumns))
	for j := range eidx {
		eidx[j] = j
	}
	pm := o.policyMap
	pspec := (&Options{Map: features.Spec{Kind: pm.Kind, StateColumns: pm.StateColumns, S: pm.S}}).stateSpec()
	espec := (&Options{Map: o.Map}).stateSpec()
	eval, policy = narrowStates(t, eidx), narrowStates(t, pidx)
	if err := checkStates(eval, espec, "the evaluation's "+o.Map.Kind.String()+" map"); err != nil {
		return nil, nil, err
	}
	if err := checkStates(policy, pspec, "the policy's "+pm.Kind.String()+" map"); err != nil {
		return nil, nil, err
	}
	return eval, policy, nil
}

// narrowStates returns t's rows with the state columns at positions idx
// of each row, in that order; the rows' other fields are t's own. When idx
// names every column in order, it is t itself, copied nowhere.
func narrowStates(t *traj.Table, idx []int) *traj.Table {
	if len(idx) == t.W && slices.IsSorted(idx) && (len(idx) == 0 || idx[len(idx)-1] == t.W-1) {
		return t
	}
	n := *t
	n.W = len(idx)
	n.Steps = make([]traj.Step, len(t.Steps))
	for h := range t.Steps {
		s := t.Steps[h]
		st := make([]float64, s.Len()*n.W)
		for j := 0; j < s.Len(); j++ {
			row := s.State[j*t.W : (j+1)*t.W]
			for x, c := range idx {
				st[j*n.W+x] = row[c]
			}
		}
		s.State = st
		n.Steps[h] = s
	}
	return &n
}

// checkStates checks t's states against sp, the checks the reader makes
// of a map's own state columns (integer states below sp.Max; nonnegative
// states, not all zero), naming the map (what) in the error.
func checkStates(t *traj.Table, sp traj.StateSpec, what string) error {
	for h := range t.Steps {
		s := &t.Steps[h]
		for j := 0; j < s.Len(); j++ {
			row := s.State[j*t.W : (j+1)*t.W]
			sum := 0.0
			for x, v := range row {
				var bad string
				switch {
				case sp.Integer && (v != math.Trunc(v) || v < 0):
					bad = "is not an integer state 0..S-1"
				case sp.Integer && sp.Max > 0 && v >= float64(sp.Max):
					bad = fmt.Sprintf("is out of range 0..%d", sp.Max-1)
				case sp.NonzeroSum && v < 0:
					bad = "is negative: the action-block map needs nonnegative states"
				}
				if bad != "" {
					return badInputf("%s: column %s at site %s, step %d: state %g %s", what, sp.Columns[x], t.Sites[s.Site(j)], h+1, v, bad)
				}
				sum += v
			}
			if sp.NonzeroSum && sum == 0 {
				return badInputf("%s: a state is all zero in %v at site %s, step %d: the action-block map needs a nonzero state", what, sp.Columns, t.Sites[s.Site(j)], h+1)
			}
		}
	}
	return nil
}
