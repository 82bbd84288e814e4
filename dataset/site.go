package dataset

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/federate"
	"github.com/grmdp/grmdp/io/msgio"
	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/io/policyio"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// Site is a site's part of a federated job's current round.
type Site struct {
	Job   *federate.Job
	State *federate.State
	// Name is the site's name, as the job lists it.
	Name string
	// Cache, when not "", keeps the site's rows in this directory after
	// the first read, so that a later round of the same job reads only its
	// two steps from it, as long as no data file changed; the message is
	// the same bits either way.
	Cache string
	// Eval and Policy are the open evaluation of a finished job and its
	// policy: the round is then the evaluation's.
	Eval   *federate.EvalState
	Policy *solve.Policy
}

// OpenSite returns site name's part of the current round of the job in
// the directory dir, keeping its rows in cache (as [Site].Cache): the job
// and its state and, once the job is finished, its open evaluation and
// the policy it evaluates, whose bytes must be those the evaluation was
// opened with.
func OpenSite(dir, name, cache string) (Site, error) {
	j, st, err := federate.Load(dir)
	if err != nil {
		return Site{}, err
	}
	site := Site{Job: j, State: st, Name: name, Cache: cache}
	if !st.Done(j) {
		return site, nil
	}
	e, err := federate.LoadEval(dir, j)
	if err != nil {
		return Site{}, err
	}
	if e == nil || e.Done(j) {
		return Site{}, fmt.Errorf("federate: job %s is finished (all %d rounds folded) and no evaluation is open: nothing to send (open one with grmdp federate eval --job %s --policy P)", j.ID, j.Rounds(), dir)
	}
	path, err := federate.EvalPolicyPath(dir, e)
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return Site{}, err
	} else if err != nil {
		return Site{}, badInputf("%w", err)
	}
	if site.Policy, err = policyio.Read(path); err != nil {
		return Site{}, err
	}
	site.Eval = e
	return site, nil
}

// Disclosure returns the thresholds the site applies: dc's, each raised
// to the job's unless the site stated it (countStated, rowsStated), and
// an [OptionError] ("Disclosure.MinCount", "Disclosure.MinRows") for a
// stated one below the job's: a site may be stricter than the job, never
// looser.
func (s Site) Disclosure(dc solve.Disclosure, countStated, rowsStated bool) (solve.Disclosure, error) {
	j := s.Job.Disclosure
	for _, x := range []struct {
		option string
		v      *int
		job    int
		stated bool
	}{{"Disclosure.MinCount", &dc.MinCount, j.MinCount, countStated}, {"Disclosure.MinRows", &dc.MinRows, j.MinRows, rowsStated}} {
		if x.stated && *x.v < x.job {
			return dc, optionErr(x.option, strconv.Itoa(*x.v), "below the job's %d: a site may be stricter than the job, never looser", x.job)
		}
		*x.v = max(*x.v, x.job)
	}
	return dc, nil
}

// SiteMessage reads a site's data at paths as Open reads them (the same
// validation; o's map, horizon, actions and columns are taken from the
// job) and computes its message for the job's round. Every row is read,
// but the statistics are formed only for the two steps the round needs
// (federate.RoundSteps).
func SiteMessage(ctx context.Context, paths []string, o Options, s Site) (*federate.Message, error) {
	msg, err := siteMessage(ctx, paths, o, s)
	return msg, ruleError(err, s.Job)
}

// ruleError returns err as a *federate.RuleError when it is the site's
// data breaking one of job j's rules (a NULL, a step 0, text actions the
// job does not list), and err otherwise.
func ruleError(err error, j *federate.Job) error {
	var oe *OptionError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, federate.ErrLabelsNeeded), errors.As(err, &oe) && oe.Option == "Actions":
		return &federate.RuleError{Rule: "action-labels", Err: federate.ErrLabelsNeeded}
	case errors.Is(err, traj.ErrNull):
		return &federate.RuleError{Rule: "nulls", Err: err}
	case j.Rules.ActionLabels != nil && strings.Contains(err.Error(), "unknown action label"):
		msg := strings.Replace(err.Error(), "the policy's actions are", "the job's action labels are", 1)
		return &federate.RuleError{Rule: "action-labels", Err: errors.New(msg)}
	case errors.Is(err, traj.ErrStepZero):
		return &federate.RuleError{Rule: "first-step", Err: err}
	}
	return err
}

func siteMessage(ctx context.Context, paths []string, o Options, s Site) (*federate.Message, error) {
	j := s.Job
	o.Map = features.Spec{Kind: j.Map.Kind, StateColumns: j.Map.StateColumns, Bins: j.Map.Bins}
	if j.Map.Kind == features.Tabular {
		o.Map.S = j.Map.S
	}
	o.Columns, o.Horizon, o.Actions = traj.Columns(j.Columns), j.H, j.Map.A
	if err := jobRules(&o, j); err != nil {
		return nil, err
	}
	if j.ShapeOpen() {
		return siteShape(ctx, paths, o, s)
	}
	d, stepRows, err := siteData(ctx, paths, o, s)
	if err != nil {
		return nil, err
	}
	numeric := false
	if files := Files(paths); len(files) > 0 {
		if numeric, err = msgio.IntegerColumn(files[0], j.Columns.Site); err != nil {
			return nil, err
		}
	}
	in := federate.SiteInput{Stats: d.stats, Site: s.Name, Numeric: numeric, Sources: sourcesOf(d.table), StepRows: stepRows}
	if s.Eval != nil {
		return federate.EvalMessage(ctx, j, s.State, s.Eval, s.Policy, in)
	}
	return federate.SiteMessage(ctx, j, s.State, in)
}

// jobRules sets o's rules for reading the rows to the job's: every site
// reads under the same rules, none of its own.
func jobRules(o *Options, j *federate.Job) error {
	var err error
	if o.FirstStep, err = j.Rules.Steps(); err != nil {
		return err
	}
	if o.Nulls, err = j.Rules.NullPolicy(); err != nil {
		return err
	}
	o.ActionLabels = j.Rules.ActionLabels
	return nil
}

// siteShape reads a site's data under the job's rules, with the sizes the
// shape round asks left to the data, and returns the site's shape message:
// its largest step, action and state, as the central solve finds them
// from every row.
func siteShape(ctx context.Context, paths []string, o Options, s Site) (*federate.Message, error) {
	if len(paths) == 0 {
		return nil, optionErr("paths", "", "no data given: name one or more Parquet files, directories or globs")
	}
	if err := o.resolveState(paths); err != nil {
		return nil, err
	}
	limit, err := ParseLimit(o.MaxMemory)
	if err != nil {
		return nil, err
	}
	setReadingHeadroom()
	if err := checkMemory(limit, &o, paths); err != nil {
		return nil, err
	}
	o.detectFirstStep(ctx, paths)
	bar := o.progress("reading")
	t, err := parquetio.Read(ctx, paths, o.ReadOptions(bar))
	bar.Finish()
	if err != nil {
		return nil, err
	}
	o.prepNotes(o.zeroStepFile, t.Nulls)
	sz := federate.Sizes{H: t.H, A: t.A}
	if o.Map.Kind == features.Tabular {
		for h := range t.Steps {
			for _, v := range t.Steps[h].State {
				sz.S = max(sz.S, int(v)+1)
			}
		}
	}
	in := federate.ShapeInput{Site: s.Name, DataSites: t.Sites, Sources: sourcesOf(t), Sizes: sz, Labelled: t.Actions != nil}
	return federate.ShapeMessage(s.Job, s.State, in)
}

// sourcesOf returns t's data files without their directories.
func sourcesOf(t *traj.Table) []traj.Source {
	var sources []traj.Source
	for _, src := range t.Sources {
		src.Path = filepath.Base(src.Path)
		sources = append(sources, src)
	}
	return sources
}

// siteData reads a site's data for the job's current round, from the
// site's cache when it can, and returns them with the number of rows at
// each step of the whole data.
func siteData(ctx context.Context, paths []string, o Options, s Site) (*Data, []int, error) {
	j, st := s.Job, s.State
	if len(paths) == 0 {
		return nil, nil, optionErr("paths", "", "no data given: name one or more Parquet files, directories or globs")
	}
	limit, err := ParseLimit(o.MaxMemory)
	if err != nil {
		return nil, nil, err
	}
	if st.Done(j) {
		return withStepRows(load(ctx, paths, o, limit))
	}
	lo, hi := federate.RoundSteps(j, st.Round)
	o.window = func(t *traj.Table) *traj.Table { return t.Window(lo, hi) }
	files := Files(paths)
	if s.Cache == "" || !rowFreeMap(&o) || len(files) == 0 {
		return withStepRows(load(ctx, paths, o, limit)) // without files, its error names the missing data
	}
	key, err := federate.NewCacheKey(j.ID, s.Name, files)
	if err != nil {
		return nil, nil, &OptionError{Option: "Cache", Err: err}
	}
	t, stepRows, err := federate.ReadCache(s.Cache, key, lo, hi)
	switch {
	case err == nil:
		d, err := cached(ctx, o, t)
		return d, stepRows, err
	case !errors.Is(err, federate.ErrCacheMiss):
		return nil, nil, &OptionError{Option: "Cache", Value: s.Cache, Err: err}
	}
	d, err := load(ctx, paths, o, limit)
	if err != nil {
		return nil, nil, err
	}
	if err := federate.WriteCache(s.Cache, key, d.table); err != nil {
		return nil, nil, &OptionError{Option: "Cache", Value: s.Cache, Err: err}
	}
	return withStepRows(d, nil)
}

// withStepRows returns d with the number of rows at each step of its
// table, which holds every step.
func withStepRows(d *Data, err error) (*Data, []int, error) {
	if err != nil {
		return nil, nil, err
	}
	rows := make([]int, d.table.H)
	for h := range rows {
		rows[h] = d.table.Steps[h].Len()
	}
	return d, rows, nil
}

// cached completes a round's data from the rows of its steps read from
// the site's cache, as load completes them from the Parquet.
func cached(ctx context.Context, o Options, t *traj.Table) (*Data, error) {
	m, err := mapOf(&o, t)
	if err != nil {
		return nil, err
	}
	st, err := solve.NewStatsDisclosed(ctx, t, m, solve.BlocksFor(t, &m), o.Workers, o.Disclosure)
	if err != nil {
		return nil, err
	}
	return &Data{opts: o, table: t, fmap: m, stats: st}, nil
}

// rowFreeMap reports whether o's feature map is fixed without the rows
// (mapOf and BlocksFor read none of them), so that two steps of rows give
// the map every step would.
func rowFreeMap(o *Options) bool {
	switch o.Map.Kind {
	case features.Tabular:
		return o.Map.S > 0
	case features.Indicator, features.ActionBlock:
		return true
	case features.Binned, features.SoftBinned:
		return !features.Unresolved(o.Map.Bins)
	}
	return false
}

// Files lists the files the paths name: each file itself, the files of a
// directory tree, and the matches of a glob. Errors are left to the
// reader.
func Files(paths []string) []string {
	var files []string
	for _, p := range paths {
		files = append(files, expand(p)...)
	}
	return files
}

func expand(arg string) []string {
	if fi, err := os.Stat(arg); err == nil {
		if !fi.IsDir() {
			return []string{arg}
		}
		var files []string
		filepath.WalkDir(arg, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				files = append(files, p)
			}
			return nil
		})
		return files
	}
	m, _ := filepath.Glob(arg)
	var files []string
	for _, p := range m {
		files = append(files, expand(p)...)
	}
	return files
}
