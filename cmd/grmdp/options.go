package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/grmdp/grmdp/dataset"
	"github.com/grmdp/grmdp/eval"
	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/internal/flagfile"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// Flags come in option groups, one per concern: each group is a small
// struct holding what its flags say and declares those flags in one place,
// each bound to the field it sets (Destination), so that the command line
// and a --config file (which sets flags by name) land in the same fields.
// A group whose values need checking or converting once every flag is set
// has a check step, which returns usage errors. A command offers only the
// groups it uses, and its options struct is the groups' values plus its
// own flags (an own group), so that every flag a command accepts sets a
// field of its options (TestEveryFlagCounts).

// optionGroup is one concern's flags, bound to the group's fields.
type optionGroup interface {
	flags() []cli.Flag
}

// checker is an option group with a check step: it validates what the
// flags set and derives the fields they do not set directly.
type checker interface {
	check(c *cli.Command) error
}

// own is a command's own flags and, unless fn is nil, the step that checks
// them and reads the command's arguments into its options.
type own struct {
	fl []cli.Flag
	fn func(c *cli.Command) error
}

func (g own) flags() []cli.Flag { return g.fl }

func (g own) check(c *cli.Command) error {
	if g.fn == nil {
		return nil
	}
	return g.fn(c)
}

// leaf completes cmd: its flags are the groups' flags, and its action
// checks the command's outputs (checkOutputs) and every group of *o, in
// order, then calls run with the options. The action runs after a
// --config file (withConfig) had its say, so a required flag may come
// from the file.
func leaf[O any](cmd *cli.Command, o *O, groups []optionGroup, run func(ctx context.Context, o O, stdout, stderr io.Writer) error) *cli.Command {
	for _, g := range groups {
		cmd.Flags = append(cmd.Flags, g.flags()...)
	}
	cmd.Action = func(ctx context.Context, c *cli.Command) error {
		if err := checkOutputs(c); err != nil {
			return err
		}
		for _, g := range groups {
			if g, ok := g.(checker); ok {
				if err := g.check(c); err != nil {
					return err
				}
			}
		}
		if p, ok := ctx.Value(parseOnlyKey{}).(*any); ok {
			*p = *o
			return nil
		}
		return run(ctx, *o, c.Root().Writer, c.Root().ErrWriter)
	}
	return cmd
}

// from is a group without flags that sets *dst to what get reads once
// every flag is set: from(&o.Paths, dataArgs), from(&o.Recorded,
// policySettings).
func from[T any](dst *T, get func(*cli.Command) T) optionGroup {
	return own{fn: func(c *cli.Command) error {
		*dst = get(c)
		return nil
	}}
}

// argsGiven are the command's arguments as given (no --config data setting).
func argsGiven(c *cli.Command) []string { return c.Args().Slice() }

// parseOnlyKey marks a context under which a command parses its options,
// stores them in the *any the key holds and returns without running: how
// a test sees what each flag sets.
type parseOnlyKey struct{}

// outputGroup is -o/--output, required: the file or directory a command writes.
type outputGroup struct {
	Path  string
	usage string
}

func (g *outputGroup) flags() []cli.Flag {
	return []cli.Flag{&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: g.usage, Required: true, Destination: &g.Path}}
}

// jsonGroup is --json, stdout as JSON for scripts.
type jsonGroup struct {
	JSON  bool
	usage string
}

func (g *jsonGroup) flags() []cli.Flag {
	return []cli.Flag{&cli.BoolFlag{Name: "json", Usage: cmp.Or(g.usage, "print JSON for scripts"), Destination: &g.JSON}}
}

// workersGroup is --workers, the goroutines a command computes with
// (0: all cores). Results never depend on it.
type workersGroup struct {
	Workers int
	usage   string
}

func (g *workersGroup) flags() []cli.Flag {
	return []cli.Flag{&cli.IntFlag{Name: "workers", Usage: cmp.Or(g.usage, "parallel workers (default: all cores); results do not depend on it"), Destination: &g.Workers}}
}

func (g *workersGroup) check(*cli.Command) error {
	if g.Workers < 0 {
		return usagef("--workers must not be negative, got %d", g.Workers)
	}
	return nil
}

// memoryGroup is --max-memory, the limit of a command that holds data.
type memoryGroup struct {
	// Value is the flag as given ("" for the default) and Limit what it
	// says.
	Value string
	Limit dataset.Limit
}

func (g *memoryGroup) flags() []cli.Flag {
	return []cli.Flag{&cli.StringFlag{Name: "max-memory", Usage: "refuse inputs estimated (from their Parquet footers) to need more than `SIZE` of memory, " +
		"e.g. 8GiB, 500MB; 0 means no limit (default: 80% of physical memory)", Destination: &g.Value}}
}

// check reads the limit and makes it the runtime's soft memory limit
// (dataset.SetMemoryLimit).
func (g *memoryGroup) check(*cli.Command) (err error) {
	if g.Limit, err = dataset.ParseLimit(g.Value); err != nil {
		return dataErr(err)
	}
	dataset.SetMemoryLimit(g.Limit.Bytes)
	return nil
}

// rowGroupsGroup is --row-group-rows, the row groups of a Parquet file a
// command writes.
type rowGroupsGroup struct {
	Rows  int
	usage string
}

func (g *rowGroupsGroup) flags() []cli.Flag {
	return []cli.Flag{&cli.IntFlag{Name: "row-group-rows", Usage: g.usage, Destination: &g.Rows}}
}

func (g *rowGroupsGroup) check(*cli.Command) error {
	if g.Rows < 0 {
		return usagef("--row-group-rows must not be negative")
	}
	return nil
}

// mapFlags declares the flags of a feature map and its sizes, --features,
// --state, --bins, --horizon, --actions and --num-states, with the help
// texts usage (in that order), bound to the fields given (--features
// defaulting to def); --bins is read with binsValues.
func mapFlags(kind, state *string, horizon, actions, numStates *int, def string, usage [6]string) []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "features", Value: def, Usage: usage[0], Destination: kind},
		&cli.StringFlag{Name: "state", Usage: usage[1], Destination: state},
		&cli.StringSliceFlag{Name: "bins", Usage: usage[2]},
		&cli.IntFlag{Name: "horizon", Usage: usage[3], Destination: horizon},
		&cli.IntFlag{Name: "actions", Usage: usage[4], Destination: actions},
		&cli.IntFlag{Name: "num-states", Usage: usage[5], Destination: numStates},
	}
}

// mapGroup is the feature map and the sizes the data may leave open:
// --features, --state, --bins, --horizon, --actions, --num-states.
type mapGroup struct {
	// Spec is the map; its StateColumns are nil for the map's default, and
	// its quantile bins are unresolved until the data are read.
	Spec             features.Spec
	Horizon, Actions int
	// kind and state are --features and --state as given.
	kind, state string
}

func (g *mapGroup) flags() []cli.Flag {
	return mapFlags(&g.kind, &g.state, &g.Horizon, &g.Actions, &g.Spec.S, "action-block", [6]string{
		"feature map: tabular, action-block, indicator, precomputed, binned or soft-binned",
		"state `COLS`, comma separated (default: state for tabular and indicator, s1..sp for action-block, phi for precomputed, the --bins columns for binned and soft-binned)",
		binsUsage,
		"horizon H (default: the largest step)",
		"number of actions A (default: largest action + 1, or the number of labels)",
		"number of tabular states S (default: largest state + 1)",
	})
}

func (g *mapGroup) check(c *cli.Command) error { return g.read(binsValues(c)) }

// read reads the map's kind, its state columns and the --bins specs bins
// into Spec (features.ParseSpec); its errors name the flags.
func (g *mapGroup) read(bins []string) error {
	state, err := flagfile.SplitList(g.state)
	if err != nil {
		return usagef("--state %v", err)
	}
	switch sp, err := features.ParseSpec(g.kind, state, bins); {
	case errors.Is(err, features.ErrUnusedBins):
		return usagef("--bins is for --features binned or soft-binned, not %s", g.kind)
	case errors.Is(err, features.ErrMissingBins):
		return usagef("--features %s needs --bins COL:c1,c2,... or COL:qK for each state column", g.kind)
	case errors.Is(err, features.ErrEmptyColumn):
		return usagef("--state %q has an empty column name", g.state)
	case err != nil:
		return dataErr(err)
	default:
		sp.S = g.Spec.S
		g.Spec = sp
	}
	return nil
}

const binsUsage = "binned and soft-binned maps: cut `COL:c1,c2,...` (ascending cut points; a value equal to one falls in the bin below) " +
	"or COL:qK (K quantile bins from every row of every site); repeat for each column"

// binsValues returns the --bins values, each "COL:..." spec whole: a list
// flag's values are split at commas (--action-labels A,B,C), so a piece
// without a colon continues the spec before it.
func binsValues(c *cli.Command) []string {
	var out []string
	for _, v := range c.StringSlice("bins") {
		if strings.Contains(v, ":") || len(out) == 0 {
			out = append(out, v)
		} else {
			out[len(out)-1] += "," + v
		}
	}
	return out
}

// evaluationMap is the feature map --features, --state, --bins and
// --num-states name for the evaluation, read as solve reads them: the
// policy's own map decides, this one evaluates
// (dataset.Options.UsePolicyThrough).
func evaluationMap(d dataset.Declared) (features.Spec, error) {
	m := mapGroup{kind: d.Features, state: d.State, Spec: features.Spec{S: d.NumStates}}
	if err := m.read(d.Bins); err != nil {
		return features.Spec{}, err
	}
	if err := m.Spec.Check(); err != nil {
		return features.Spec{}, dataErr(err)
	}
	return m.Spec.WithDefaultState()
}

// columnsGroup names the columns of the trajectory contract, --site-col
// and the like. With fromPolicy (apply, eval), a flag not given takes the
// column the policy was learned with ("" in Columns), names lists the
// columns the command reads (nil: all five) and usage overrides a flag's
// help text.
type columnsGroup struct {
	Columns    traj.Columns
	fromPolicy bool
	names      []string
	usage      map[string]string
}

// columns are the columns' flags, each bound to its field of c.
func (c *columnsGroup) columns() map[string]*string {
	cs := &c.Columns
	return map[string]*string{"site": &cs.Site, "traj": &cs.Traj, "step": &cs.Step, "action": &cs.Action, "reward": &cs.Reward}
}

func (g *columnsGroup) flags() []cli.Flag {
	if g.names == nil {
		g.names = []string{"site", "traj", "step", "action", "reward"}
	}
	dst, suffix := g.columns(), map[bool]string{true: " (default: the policy's)"}[g.fromPolicy]
	var fl []cli.Flag
	for _, n := range g.names {
		usage := cmp.Or(g.usage[n], strings.Replace(n, "traj", "trajectory", 1)+" column"+suffix)
		fl = append(fl, &cli.StringFlag{Name: n + "-col", Value: n, Usage: usage, Destination: dst[n]})
	}
	return fl
}

func (g *columnsGroup) check(c *cli.Command) error {
	dst := g.columns()
	for _, n := range g.names {
		switch {
		case g.fromPolicy && !c.IsSet(n+"-col"):
			*dst[n] = ""
		case !g.fromPolicy && *dst[n] == "":
			return usagef("--%s-col is empty", n)
		}
	}
	return nil
}

// prepGroup is how the rows read are prepared: the steps' numbering and
// what to do with NULLs.
type prepGroup struct {
	FirstStep traj.FirstStep
	Nulls     traj.NullPolicy
	// nullsUsage, when set, is --nulls's help for a command that keeps
	// every row.
	nullsUsage string
	// firstStep and nulls are the flags as given.
	firstStep, nulls string
}

func (g *prepGroup) flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "first-step", Value: "detect", Usage: "steps are numbered from `0|1` (default: detect, 0 when the smallest step is 0)", Destination: &g.firstStep},
		&cli.StringFlag{Name: "nulls", Value: "error", Destination: &g.nulls, Usage: cmp.Or(g.nullsUsage,
			"a NULL in the action, reward or a state column: `error|truncate|drop-episode` (truncate ends its episode before the row)")},
	}
}

func (g *prepGroup) check(*cli.Command) error {
	var err error
	if g.FirstStep, err = traj.ParseFirstStep(g.firstStep); err != nil {
		return usagef("--first-step: %v", err)
	}
	if g.Nulls, err = traj.ParseNullPolicy(g.nulls); err != nil {
		return usagef("--nulls: %v", err)
	}
	return nil
}

// dataGroup is how to read the trajectory contract: the map, the columns
// and the rules that prepare the rows. Its check (dataset.Options.Check)
// completes the map's default state columns.
type dataGroup struct {
	Map     mapGroup
	Columns columnsGroup
	Prep    prepGroup
}

func (g *dataGroup) flags() []cli.Flag {
	return append(append(g.Map.flags(), g.Columns.flags()...), g.Prep.flags()...)
}

func (g *dataGroup) check(c *cli.Command) error {
	if err := g.Map.check(c); err != nil {
		return err
	}
	if err := g.Prep.check(c); err != nil {
		return err
	}
	if err := g.Columns.check(c); err != nil {
		return err
	}
	o := g.options()
	if err := o.Check(); err != nil {
		return dataErr(err)
	}
	g.Map.Spec, _ = o.Map.WithDefaultState()
	return nil
}

// options returns what g says as the data's options.
func (g *dataGroup) options() dataset.Options {
	return dataset.Options{Map: g.Map.Spec, Columns: g.Columns.Columns, Horizon: g.Map.Horizon, Actions: g.Map.Actions,
		FirstStep: g.Prep.FirstStep, Nulls: g.Prep.Nulls}
}

// solverGroup is Algorithm 1's settings and its baselines'. With auto
// set (solve, compare, validate), --c, --lambda and --stationary may be
// auto: AutoC, AutoLambda and AutoStationary say so, and Settings hold
// the defaults the candidates start from.
type solverGroup struct {
	Settings                          solve.Settings
	auto                              bool
	AutoC, AutoLambda, AutoStationary bool
	// lambda, c and fallback are the flags as given; stationary is
	// --stationary's value, made by flags.
	lambda, c, fallback string
	stationary          *stationaryValue
}

// stationaryValue is --stationary: a switch (--stationary,
// --stationary=false) or, where settings are chosen, --stationary=auto.
// Its text is that of a boolean switch, or "auto".
type stationaryValue struct{ on, auto bool }

func (v *stationaryValue) String() string {
	if v == nil {
		return "false"
	}
	if v.auto {
		return "auto"
	}
	return strconv.FormatBool(v.on)
}

func (v *stationaryValue) Set(s string) error {
	if s == "auto" {
		v.on, v.auto = false, true
		return nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("want true, false or auto, got %q", s)
	}
	v.on, v.auto = b, false
	return nil
}

// Get returns the text of the value (flag.Getter).
func (v *stationaryValue) Get() any { return v.String() }

// IsBoolFlag lets --stationary stand alone, as a switch.
func (v *stationaryValue) IsBoolFlag() bool { return true }

func (g *solverGroup) flags() []cli.Flag {
	cUsage, lambdaUsage := "penalty constant c in beta = c d H sqrt(zeta)", "ridge parameter lambda (> 0)"
	stUsage := "assert that transitions and rewards do not depend on the step: pool every step's transitions in each regression"
	if g.auto {
		stUsage += "; or --stationary=auto (with --c auto): chosen with c, with and without pooling"
		cUsage += ", or auto: chosen among a path of c (--c-path; by default 5e-4 down to 5e-10 by decades, then 0) and the behaviour fallback by the held-out lower limit of the basic interval of the minimum over sites' values (a ranking score), among the candidates whose held-out worst site beats the fallback's (--folds folds by trajectory within sites)"
		lambdaUsage += ", or auto (with --c auto): chosen among 0.1, 1 and 10"
	}
	s := &g.Settings
	g.stationary = &stationaryValue{}
	var stationary cli.Flag = &cli.BoolFlag{Name: "stationary", Usage: stUsage, Destination: &g.stationary.on}
	if g.auto {
		stationary = &cli.GenericFlag{Name: "stationary", Value: g.stationary, Usage: stUsage}
	}
	return []cli.Flag{
		&cli.StringFlag{Name: "lambda", Value: "1", Usage: lambdaUsage, Destination: &g.lambda},
		&cli.StringFlag{Name: "c", Value: "5e-4", Usage: cUsage, Destination: &g.c},
		&cli.Float64Flag{Name: "xi", Value: 0.05, Usage: "confidence parameter xi in (0,1)", Destination: &s.Xi},
		&cli.Float64Flag{Name: "beta", Usage: "use this beta directly instead of c and xi", Destination: &s.Beta},
		&cli.StringFlag{Name: "fallback", Value: "behaviour", Usage: "rule for decisions without evidence: behaviour (the data's most frequent action) or lowest (the paper's)", Destination: &g.fallback},
		stationary,
	}
}

func (g *solverGroup) check(c *cli.Command) error {
	s := &g.Settings
	var err error
	if s.Lambda, g.AutoLambda, err = g.number("lambda", g.lambda, solve.DefaultSettings.Lambda); err != nil {
		return err
	}
	if s.C, g.AutoC, err = g.number("c", g.c, solve.DefaultSettings.C); err != nil {
		return err
	}
	st := cmp.Or(g.stationary, &stationaryValue{})
	s.BetaSet, s.Fallback, s.Stationary, g.AutoStationary = c.IsSet("beta"), solve.Fallback(g.fallback), st.on, st.auto
	switch {
	case g.AutoLambda && !g.AutoC:
		return usagef("--lambda auto is chosen with c: give --c auto too")
	case g.AutoC && s.BetaSet:
		return usagef("--c auto chooses beta from c: do not give --beta")
	case g.AutoStationary && !g.AutoC:
		return usagef("--stationary=auto is chosen with c: give --c auto too")
	case s.Stationary && g.auto && slices.Contains(c.Args().Slice(), "auto"):
		return usagef("--stationary is a switch: write --stationary=auto to choose step pooling with --c auto")
	}
	return dataErr(s.Check())
}

// selection is the choice of settings --c auto asks for (with the
// candidates of lambda and of step pooling --lambda auto and
// --stationary=auto add), on folds seeded by seed; nil without --c auto.
func (g *solverGroup) selection(folds int, seed uint64) *dataset.SelectOptions {
	if !g.AutoC {
		return nil
	}
	so := &dataset.SelectOptions{Folds: folds, Seed: seed}
	if g.AutoLambda {
		so.Lambdas = dataset.DefaultLambdaGrid(g.Settings.Lambda)
	}
	if g.AutoStationary {
		so.Stationary = []bool{false, true}
	}
	return so
}

// number reads the value v of flag name: a number, or (for a command that
// chooses it) auto, which leaves def.
func (g *solverGroup) number(name, v string, def float64) (float64, bool, error) {
	v = strings.TrimSpace(v)
	if v == "auto" {
		if !g.auto {
			return def, false, usagef("--%s auto is for solve, compare and validate: give a number", name)
		}
		return def, true, nil
	}
	x, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0, false, usagef("--%s must be a number%s, got %q", name, map[bool]string{true: " or auto", false: ""}[g.auto], v)
	}
	return x, false, nil
}

// clusterGroup is a cluster file: --clusters (its Path, "" for none), and
// how to cut a similarity file into clusters. use says what the file is
// for; sites names the sites --allow-singletons keeps.
type clusterGroup struct {
	Clusters   dataset.EvalClusters
	use, sites string
}

func (g *clusterGroup) flags() []cli.Flag {
	o := &g.Clusters
	return []cli.Flag{
		&cli.StringFlag{Name: "clusters", Usage: cmp.Or(g.use, "cluster `FILE` (assignment, similarity matrix or edge list) for --method cluster"), Destination: &o.Path},
		&cli.Float64Flag{Name: "threshold", Usage: "with a similarity --clusters file: connected components of similarity >= T", Destination: &o.Options.Threshold},
		&cli.IntFlag{Name: "num-clusters", Usage: "with a similarity --clusters file: average-linkage clusters, cut at M", Destination: &o.Options.M},
		&cli.BoolFlag{Name: "allow-singletons", Usage: "keep " + cmp.Or(g.sites, "data sites") + " missing from the cluster file as clusters of their own", Destination: &o.AllowSingletons},
	}
}

func (g *clusterGroup) check(c *cli.Command) error {
	g.Clusters.Options.HasThreshold = c.IsSet("threshold")
	return nil
}

// disclosureGroup is disclosure control, with its defaults (0 for a
// central solve, 5 and 10 at a hospital in a federated job).
type disclosureGroup struct {
	Disclosure solve.Disclosure
	// CountSet and RowsSet say that --min-count and --min-rows were
	// given (a federated site keeps the job's stricter value otherwise).
	CountSet, RowsSet bool
	minCount, minRows int
}

func (g *disclosureGroup) flags() []cli.Flag {
	dc := &g.Disclosure
	return []cli.Flag{
		&cli.IntFlag{Name: "min-count", Value: g.minCount, Destination: &dc.MinCount, Usage: "suppress a feature counted at fewer than `K` rows of a (site, step), as if never observed (its Gram row and column and right-hand side entry zeroed)"},
		&cli.IntFlag{Name: "min-rows", Value: g.minRows, Destination: &dc.MinRows, Usage: "a site with fewer than `N` rows at a step contributes nothing to that step"},
	}
}

func (g *disclosureGroup) check(c *cli.Command) error {
	g.CountSet, g.RowsSet = c.IsSet("min-count"), c.IsSet("min-rows")
	return dataErr(g.Disclosure.Check())
}

// outOfCoreGroup is --out-of-core, for the commands that solve.
type outOfCoreGroup struct {
	OutOfCore bool
}

func (g *outOfCoreGroup) flags() []cli.Flag {
	return []cli.Flag{&cli.BoolFlag{Name: "out-of-core", Destination: &g.OutOfCore, Usage: "read the data one pair of steps at a time instead of holding them in memory " +
		"(automatic when they would not fit in --max-memory); after grmdp prepare each round reads only its own row groups"}}
}

// policyDataGroup is the map and sizes a policy decides, for the commands
// that read data with a policy (apply, eval): they take them from the
// policy, and a value given is checked against it (dataset.Declared.Check),
// so that one batch script can pass the same flags to every command.
type policyDataGroup struct {
	Declared dataset.Declared
	// through says that --features names a map to evaluate through (eval).
	through bool
}

func (g *policyDataGroup) flags() []cli.Flag {
	const taken, checked = " (taken from the policy; checked against it when given)", " (without --features: checked against the policy's)"
	usage := [6]string{"feature map" + taken, "state `COLS`" + taken, "binned maps' cut points" + taken,
		"horizon H" + taken, "number of actions A" + taken, "tabular states S" + taken}
	if g.through {
		usage[0] = "feature map to evaluate through (default: the policy's own; the policy's map still makes its decisions)"
		usage[1] = "state `COLS` of the --features map" + checked
		usage[2] = "cut points of a binned --features map, as solve takes them" + checked
		usage[5] = "tabular states S of a tabular --features map" + checked
	}
	d := &g.Declared
	return mapFlags(&d.Features, &d.State, &d.Horizon, &d.Actions, &d.NumStates, "", usage)
}

func (g *policyDataGroup) check(c *cli.Command) error {
	g.Declared.Bins = binsValues(c)
	return nil
}

// returnRangeGroup is the range of an episode's total reward, which sets
// the scale of an evaluation's bounds and intervals (eval, and the
// commands that evaluate).
type returnRangeGroup struct {
	ReturnRange eval.Range
	// value is the flag as given.
	value string
}

func (g *returnRangeGroup) flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "return-range", Destination: &g.value, Usage: "the range `LO,HI` of an episode's total reward (e.g. 0,1 for a 0/1 outcome): " +
			"bounds, intervals and \"identified\" use it (default: 0,H)"},
	}
}

func (g *returnRangeGroup) check(*cli.Command) (err error) {
	if g.ReturnRange, err = eval.ParseRange(g.value); err != nil {
		return usagef("--return-range%s", strings.TrimPrefix(err.Error(), "eval: return range"))
	}
	return nil
}
