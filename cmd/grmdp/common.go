package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"
	"github.com/urfave/cli/v2/altsrc"
	"golang.org/x/term"

	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/internal/timing"
	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// withConfig lets every flag of cmd be set from a YAML file given with
// --config, so a batch job is one reviewed file. Flags on the command line
// win over the file; one file can serve every command (readConfig).
func withConfig(cmd *cli.Command) *cli.Command {
	var flags []cli.Flag
	// Required flags are checked after the config file is read, so that the
	// file can set them too.
	var required []string
	for _, f := range cmd.Flags {
		if r, ok := f.(cli.RequiredFlag); ok && r.IsRequired() {
			required = append(required, f.Names()[0])
			if sf, ok := f.(*cli.StringFlag); ok {
				sf.Required = false
			}
		}
		switch f := f.(type) {
		case *cli.StringFlag:
			flags = append(flags, altsrc.NewStringFlag(f))
		case *cli.Float64Flag:
			flags = append(flags, altsrc.NewFloat64Flag(f))
		case *cli.IntFlag:
			flags = append(flags, altsrc.NewIntFlag(f))
		case *cli.Uint64Flag:
			flags = append(flags, altsrc.NewUint64Flag(f))
		case *cli.BoolFlag:
			flags = append(flags, altsrc.NewBoolFlag(f))
		case *cli.StringSliceFlag:
			flags = append(flags, altsrc.NewStringSliceFlag(f))
		default:
			flags = append(flags, f)
		}
	}
	flags = append(flags, &cli.StringFlag{Name: "config", Usage: "read flag values from this YAML `FILE` (command-line flags win)"})
	cmd.Flags = flags
	cmd.Before = func(c *cli.Context) error {
		if path := c.String("config"); path != "" {
			if err := applyConfig(c, path, flags); err != nil {
				return err
			}
		}
		for _, name := range required {
			if c.String(name) == "" {
				return usagef("--%s is required (on the command line or in --config)", name)
			}
		}
		if err := checkOutputsNotInputs(c); err != nil {
			return err
		}
		noteSkippedFiles(dataArgs(c), c.App.ErrWriter)
		applyMaxMemory(c)
		return nil
	}
	return cmd
}

// Flags that name files a command reads, and files it writes.
var (
	inputFlags  = []string{"policy", "similarity", "clusters", "model", "config"}
	outputFlags = []string{"output", "model-out"}
)

// checkOutputsNotInputs refuses a command line whose output file is one of
// its inputs (DATA, --policy, --clusters, ...): writing it would replace
// the input, and inputs are never modified. It compares files, not names,
// so links and other spellings of a path are caught too.
func checkOutputsNotInputs(c *cli.Context) error {
	var outs []os.FileInfo
	var outNames []string
	for _, f := range outputFlags {
		if v := c.String(f); v != "" {
			if fi, err := os.Stat(v); err == nil && fi.Mode().IsRegular() {
				outs, outNames = append(outs, fi), append(outNames, "--"+f+" "+v)
			}
		}
	}
	if len(outs) == 0 {
		return nil
	}
	check := func(what, path string) error {
		fi, err := os.Stat(path)
		if err != nil || !fi.Mode().IsRegular() {
			return nil
		}
		for i, o := range outs {
			if os.SameFile(o, fi) {
				return usagef("%s is also an input (%s): inputs are never modified; write the output to a new file", outNames[i], what)
			}
		}
		return nil
	}
	for _, f := range inputFlags {
		if v := c.String(f); v != "" {
			if err := check("--"+f, v); err != nil {
				return err
			}
		}
	}
	for _, arg := range dataArgs(c) {
		for _, p := range expandArg(arg) {
			if err := check("DATA "+p, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// expandArg lists the files a DATA argument names: itself, the files of a
// directory tree, or the matches of a glob. Errors are left to the reader.
func expandArg(arg string) []string {
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
		files = append(files, expandArg(p)...)
	}
	return files
}

// settingsUsed records every flag's value as the command saw it.
func settingsUsed(c *cli.Context) map[string]string {
	out := map[string]string{"command": c.Command.Name}
	for _, f := range c.Command.Flags {
		name := f.Names()[0]
		if name == "help" {
			continue
		}
		v := c.Value(name)
		switch v := v.(type) {
		case cli.StringSlice:
			out[name] = strings.Join(v.Value(), ",")
		default:
			out[name] = fmt.Sprint(v)
		}
	}
	out["args"] = strings.Join(dataArgs(c), " ")
	return out
}

// notPolicySettings are the flags that cannot change a policy: where it is
// written, how many workers compute it, the memory limit, whether the data
// are read out of core, the form of stdout, the --config file (its values
// are recorded as the flags they set) and the reports written beside it
// (--c-path, compare's --model). A policy leaves them out, so that the same
// solve gives the same bytes under any other name and any --workers.
var notPolicySettings = []string{"output", "workers", "max-memory", "out-of-core", "json", "config", "c-path", "model"}

// policySettings is settingsUsed without notPolicySettings: every setting
// that can change the policy, as a policy records it.
func policySettings(c *cli.Context) map[string]string {
	out := settingsUsed(c)
	for _, k := range notPolicySettings {
		delete(out, k)
	}
	return out
}

// detectFirstStep resolves --first-step detect before the data are read,
// noting on stderr when the steps are read as numbered from 0, so that the
// note comes (once) before any error of the read, in memory or out of core.
// An error here is left for the read to report, in its order.
func detectFirstStep(ctx context.Context, o *dataOptions, paths []string) {
	if o.FirstStep != traj.StepsDetect {
		return
	}
	fs, zero, err := parquetio.DetectFirstStep(ctx, paths, o.readOptions(nil))
	if err != nil {
		return
	}
	o.FirstStep, o.zeroStepFile = fs, zero
}

// prepNotes prints the notes on how the rows were prepared: steps read as
// numbered from 0, and the rows a null policy removed, per site.
func prepNotes(w io.Writer, zeroStepFile string, nulls traj.NullPolicy, counts []traj.NullCount) {
	if zeroStepFile != "" {
		fmt.Fprintf(w, "grmdp: note: steps start at 0 in %s; read as 1..H (set --first-step to silence)\n", zeroStepFile)
	}
	for _, n := range counts {
		verb := "dropped"
		if nulls == traj.NullsTruncate {
			verb = "truncated"
		}
		fmt.Fprintf(w, "grmdp: note: --nulls %s: site %s: %d rows removed from %d episodes with a NULL (%d %s before the NULL, %d dropped whole)\n",
			nulls, n.Site, n.Rows, n.Episodes, n.Truncated, verb, n.Episodes-n.Truncated)
	}
}

// maxHorizon is the largest step the reader accepts (traj.Builder).
const maxHorizon = 1<<15 - 1

// dataOptions is what dataFlags say.
type dataOptions struct {
	// heldTwice says that the command holds the rows twice (grmdp
	// prepare's writer copies each step): its memory check uses
	// parquetio.EstimateMemoryHeldTwice.
	heldTwice bool
	Kind      features.Kind
	State     []string
	// Bins are the binned maps' cut points (quantile bins unresolved until
	// the data are read).
	Bins      []features.Bins
	Columns   traj.Columns
	Horizon   int
	Actions   int
	NumStates int
	Workers   int
	// ActionLabels and PolicyActions describe a policy's action set (eval):
	// with PolicyActions the data's action column is checked against it
	// (labels, or integers 0..Actions-1) before anything else is read.
	ActionLabels  []string
	PolicyActions bool
	// OutOfCore is --out-of-core (the commands that solve).
	OutOfCore bool
	// MaxMemory is --max-memory as given ("" for the default).
	MaxMemory string
	// Disclosure is the disclosure control the statistics are formed
	// under (solve --min-count, --min-rows; federate site).
	Disclosure solve.Disclosure
	// FirstStep and Nulls are --first-step and --nulls.
	FirstStep traj.FirstStep
	Nulls     traj.NullPolicy
	// zeroStepFile names the file in which detectFirstStep found step 0,
	// noted once the data are read.
	zeroStepFile string
	// window, when set, gives the part of the table whose statistics are
	// formed (a federated site's round needs two steps of them; see
	// siteData); the data warnings are then not computed.
	window func(*traj.Table) *traj.Table
}

// memoryLimit returns the --max-memory limit of o.
func (o dataOptions) memoryLimit() (memLimit, error) {
	return parseMemoryLimit(o.MaxMemory)
}

// stateSpec turns the options into the reader's state description.
func (o dataOptions) stateSpec() traj.StateSpec {
	sp := traj.StateSpec{Columns: o.State}
	switch o.Kind {
	case features.Tabular:
		sp.Integer, sp.Max = true, o.NumStates
	case features.Indicator:
		sp.Integer, sp.Max = true, 3
	case features.ActionBlock:
		sp.NonzeroSum = true
	case features.Precomputed:
		sp.List = true
	}
	return sp
}

func (o dataOptions) readOptions(progress traj.Progress) traj.Options {
	return traj.Options{Columns: o.Columns, State: o.stateSpec(), Horizon: o.Horizon, Actions: o.Actions, ActionLabels: o.ActionLabels,
		Workers: o.Workers, Progress: progress, FirstStep: o.FirstStep, Nulls: o.Nulls}
}

// dataset is a table read from Parquet with its feature map and statistics.
type dataset struct {
	Table *traj.Table
	Map   features.Map
	Stats *solve.Stats
	// Warnings are about how the data meet the map (dataWarnings).
	Warnings []string
}

// resolveState names the action-block map's state columns s1, s2, ...
// found in the data when --state did not.
func (o *dataOptions) resolveState(paths []string) error {
	if o.Kind != features.ActionBlock || o.State != nil {
		return nil
	}
	cols, err := parquetio.PrefixedColumns(paths, "s")
	if err != nil {
		return err
	}
	if len(cols) == 0 {
		return badInputf("%s: no state columns s1, s2, ... found for the action-block map: name them with --state", paths[0])
	}
	o.State = cols
	return nil
}

// loadData reads paths and builds the per-(site, step) statistics.
// A progress bar goes to stderr when it is a terminal.
func loadData(ctx context.Context, o dataOptions, paths []string, stderr io.Writer) (*dataset, error) {
	if len(paths) == 0 {
		return nil, usagef("no DATA given: name one or more Parquet files, directories or globs")
	}
	if err := o.resolveState(paths); err != nil {
		return nil, err
	}
	limit, err := o.memoryLimit()
	if err != nil {
		return nil, err
	}
	setReadingHeadroom()
	if err := checkMemory(limit, o, paths); err != nil {
		return nil, err
	}
	if o.PolicyActions {
		if err := parquetio.CheckActions(ctx, paths, o.readOptions(nil)); err != nil {
			return nil, err
		}
	}
	detectFirstStep(ctx, &o, paths)
	bar := newBar(stderr, "reading")
	t, err := parquetio.Read(ctx, paths, o.readOptions(bar))
	bar.finish()
	if err != nil {
		return nil, err
	}
	prepNotes(stderr, cmp.Or(o.zeroStepFile, t.ZeroStepFile), o.Nulls, t.Nulls)
	if t.Actions != nil && o.Actions > 0 && o.Actions != len(t.Actions) {
		return nil, usagef("--actions %d: the action column holds %d string labels %v; --actions applies to integer actions", o.Actions, len(t.Actions), t.Actions)
	}
	m, err := mapFor(o, t)
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
	ds := &dataset{Table: t, Map: m, Stats: st}
	if o.window == nil {
		ds.Warnings = dataWarnings(o, ds)
	}
	return ds, nil
}

// mapFor completes the feature map from the table: A, S, p, d.
func mapFor(o dataOptions, t *traj.Table) (features.Map, error) {
	m := features.Map{Kind: o.Kind, A: t.A, StateColumns: o.State}
	switch o.Kind {
	case features.Tabular:
		m.S = o.NumStates
		if m.S == 0 {
			for h := range t.Steps {
				for _, v := range t.Steps[h].State {
					m.S = max(m.S, int(v)+1)
				}
			}
		}
	case features.ActionBlock:
		m.P = t.W
	case features.Precomputed:
		m.D = t.W / t.A
	case features.Binned, features.SoftBinned:
		var err error
		if m.Bins, err = resolveBins(o.Kind, o.Bins, t); err != nil {
			return m, err
		}
	}
	return m, nil
}

// bar is a progress bar on a terminal's stderr, silent otherwise.
type bar struct{ pb *progressbar.ProgressBar }

func newBar(w io.Writer, what string) *bar {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return &bar{}
	}
	return &bar{pb: progressbar.NewOptions64(-1, progressbar.OptionSetWriter(w), progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(), progressbar.OptionThrottle(100_000_000), progressbar.OptionClearOnFinish())}
}

func (b *bar) SetTotal(n int64) {
	if b.pb != nil {
		b.pb.ChangeMax64(n)
	}
}

func (b *bar) Add(n int64) {
	if b.pb != nil {
		_ = b.pb.Add64(n)
	}
}

func (b *bar) finish() {
	if b.pb != nil {
		_ = b.pb.Finish()
	}
}

// sortedKeys returns the keys of m in sorted order.
func sortedKeys[M ~map[string]V, V any](m M) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// policyDataFlags are the data flags of solve that commands reading a
// policy (apply, eval) also accept, so one batch script can pass the same
// flags to every command. The policy decides them; a value that
// contradicts the policy is a usage error (checkAgainstPolicy).
func policyDataFlags(have map[string]bool) []cli.Flag {
	var out []cli.Flag
	for _, f := range []cli.Flag{
		&cli.StringFlag{Name: "features", Usage: "feature map (taken from the policy; checked against it when given)"},
		&cli.StringFlag{Name: "state", Usage: "state `COLS` (taken from the policy; checked against it when given)"},
		binsFlag("binned maps' cut points (taken from the policy; checked against it when given)"),
		&cli.IntFlag{Name: "horizon", Usage: "horizon H (taken from the policy; checked against it when given)"},
		&cli.IntFlag{Name: "actions", Usage: "number of actions A (taken from the policy; checked against it when given)"},
		&cli.IntFlag{Name: "num-states", Usage: "tabular states S (taken from the policy; checked against it when given)"},
		&cli.StringFlag{Name: "site-col", Value: "site", Usage: "site column"},
		&cli.StringFlag{Name: "traj-col", Value: "traj", Usage: "trajectory column"},
		&cli.StringFlag{Name: "reward-col", Value: "reward", Usage: "reward column"},
	} {
		if !have[f.Names()[0]] {
			out = append(out, f)
		}
	}
	for _, f := range prepFlags() {
		if !have[f.Names()[0]] {
			out = append(out, f)
		}
	}
	return out
}

// flagNames lists the names of flags.
func flagNames(flags []cli.Flag) map[string]bool {
	have := map[string]bool{}
	for _, f := range flags {
		have[f.Names()[0]] = true
	}
	return have
}

// policyData is what policyDataFlags say: values the policy decides,
// zero when not given.
type policyData struct {
	Features, State            string
	Horizon, Actions, NumState int
	// Bins are the --bins flags as given.
	Bins []string
}

func parsePolicyData(c *cli.Context) policyData {
	return policyData{Features: c.String("features"), State: c.String("state"),
		Horizon: c.Int("horizon"), Actions: c.Int("actions"), NumState: c.Int("num-states"), Bins: binsValues(c)}
}

// checkAgainstPolicy refuses data flags that contradict the policy.
func checkAgainstPolicy(d policyData, p *solve.Policy) error {
	if f := d.Features; f != "" && f != p.Map.Kind.String() {
		return usagef("--features %s: the policy was learned with the %s map", f, p.Map.Kind)
	}
	if st := d.State; st != "" && st != strings.Join(p.Map.StateColumns, ",") {
		return usagef("--state %s: the policy reads the state columns %s", st, strings.Join(p.Map.StateColumns, ","))
	}
	if err := checkBinsAgainstPolicy(d.Bins, p.Map); err != nil {
		return err
	}
	for _, x := range []struct {
		name      string
		got, want int
	}{{"horizon", d.Horizon, p.H}, {"actions", d.Actions, p.A}, {"num-states", d.NumState, p.Map.S}} {
		if v := x.got; v != 0 && v != x.want {
			return usagef("--%s %d: the policy has %d", x.name, v, x.want)
		}
	}
	return nil
}
