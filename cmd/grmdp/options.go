package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/grmdp/grmdp/cluster"
	"github.com/grmdp/grmdp/dataset"
	"github.com/grmdp/grmdp/eval"
	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// Flags come in option groups, one per concern: each group is a small
// struct holding what its flags say, declares those flags in one place and
// reads them in one parse step that returns usage errors. A command offers
// only the groups it uses, and its options struct is the groups' values
// plus its own flags (an own group), so that every flag a command accepts
// sets a field of its options (TestEveryFlagCounts).

// optionGroup is one concern's flags and the step that reads them.
type optionGroup interface {
	flags() []cli.Flag
	parse(c *cli.Context) error
}

// own is a command's own flags and the step that reads them and the
// command's arguments into its options.
type own struct {
	fl []cli.Flag
	fn func(c *cli.Context) error
}

func (g own) flags() []cli.Flag          { return g.fl }
func (g own) parse(c *cli.Context) error { return g.fn(c) }

// leaf completes cmd: its flags are the groups' flags, and its action
// parses every group into *o, in order, then calls run with the options.
// A required flag is checked by the action, after a --config file
// (withConfig) had its say, and missing it is a usage error.
func leaf[O any](cmd *cli.Command, o *O, groups []optionGroup, run func(ctx context.Context, o O, stdout, stderr io.Writer) error) *cli.Command {
	var required []string
	for _, g := range groups {
		for _, f := range g.flags() {
			switch f := f.(type) {
			case *cli.StringFlag:
				if f.Required {
					f.Required, required = false, append(required, f.Name)
				}
			case *cli.StringSliceFlag:
				if f.Required {
					f.Required, required = false, append(required, f.Name)
				}
			}
			cmd.Flags = append(cmd.Flags, f)
		}
	}
	cmd.Action = func(c *cli.Context) error {
		for _, name := range required {
			if !c.IsSet(name) {
				if hasFlag(c.Command, "config") {
					return usagef("--%s is required (on the command line or in --config)", name)
				}
				return usagef("--%s is required", name)
			}
		}
		for _, g := range groups {
			if err := g.parse(c); err != nil {
				return err
			}
		}
		if p, ok := c.Context.Value(parseOnlyKey{}).(*any); ok {
			*p = *o
			return nil
		}
		return run(c.Context, *o, c.App.Writer, c.App.ErrWriter)
	}
	return cmd
}

// parseOnlyKey marks a context under which a command parses its options,
// stores them in the *any the key holds and returns without running: how
// a test sees what each flag sets.
type parseOnlyKey struct{}

// outputGroup is -o/--output, the file or directory a command writes.
type outputGroup struct {
	Path     string
	usage    string
	required bool
}

func (g *outputGroup) flags() []cli.Flag {
	return []cli.Flag{&cli.StringFlag{Name: "output", Aliases: []string{"o"}, Usage: g.usage, Required: g.required}}
}

func (g *outputGroup) parse(c *cli.Context) error {
	g.Path = c.String("output")
	return nil
}

// jsonGroup is --json, stdout as JSON for scripts.
type jsonGroup struct {
	JSON  bool
	usage string
}

func (g *jsonGroup) flags() []cli.Flag {
	return []cli.Flag{&cli.BoolFlag{Name: "json", Usage: cmp.Or(g.usage, "print JSON for scripts")}}
}

func (g *jsonGroup) parse(c *cli.Context) error {
	g.JSON = c.Bool("json")
	return nil
}

// workersGroup is --workers, the goroutines a command computes with
// (0: all cores). Results never depend on it.
type workersGroup struct {
	Workers int
	usage   string
}

func (g *workersGroup) flags() []cli.Flag {
	return []cli.Flag{&cli.IntFlag{Name: "workers", Usage: cmp.Or(g.usage, "parallel workers (default: all cores); results do not depend on it")}}
}

func (g *workersGroup) parse(c *cli.Context) error {
	if g.Workers = c.Int("workers"); g.Workers < 0 {
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
		"e.g. 8GiB, 500MB; 0 means no limit (default: 80% of physical memory)"}}
}

func (g *memoryGroup) parse(c *cli.Context) (err error) {
	g.Value = c.String("max-memory")
	g.Limit, err = dataset.ParseLimit(g.Value)
	return dataErr(err)
}

// rowGroupsGroup is --row-group-rows, the row groups of a Parquet file a
// command writes.
type rowGroupsGroup struct {
	Rows  int
	usage string
}

func (g *rowGroupsGroup) flags() []cli.Flag {
	return []cli.Flag{&cli.IntFlag{Name: "row-group-rows", Usage: g.usage}}
}

func (g *rowGroupsGroup) parse(c *cli.Context) error {
	if g.Rows = c.Int("row-group-rows"); g.Rows < 0 {
		return usagef("--row-group-rows must not be negative")
	}
	return nil
}

// mapGroup is the feature map and the sizes the data may leave open:
// --features, --state, --bins, --horizon, --actions, --num-states.
type mapGroup struct {
	Kind features.Kind
	// State are the state columns as given (nil: the map's default).
	State []string
	// Bins are the binned maps' cut points (quantile bins unresolved until
	// the data are read).
	Bins                       []features.Bins
	Horizon, Actions, NumState int
}

func (g *mapGroup) flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "features", Value: "action-block", Usage: "feature map: tabular, action-block, indicator, precomputed, binned or soft-binned"},
		&cli.StringFlag{Name: "state", Usage: "state `COLS`, comma separated (default: state for tabular and indicator, s1..sp for action-block, phi for precomputed, the --bins columns for binned and soft-binned)"},
		binsFlag(binsUsage),
		&cli.IntFlag{Name: "horizon", Usage: "horizon H (default: the largest step)"},
		&cli.IntFlag{Name: "actions", Usage: "number of actions A (default: largest action + 1, or the number of labels)"},
		&cli.IntFlag{Name: "num-states", Usage: "number of tabular states S (default: largest state + 1)"},
	}
}

func (g *mapGroup) parse(c *cli.Context) error {
	k, err := features.ParseKind(c.String("features"))
	if err != nil {
		return usagef("--features: %v", strings.TrimPrefix(err.Error(), "features: "))
	}
	g.Kind, g.State = k, nil
	if s := c.String("state"); s != "" {
		cols, err := splitList(s)
		if err != nil {
			return usagef("--state %v", err)
		}
		for _, col := range cols {
			if col == "" {
				return usagef("--state %q has an empty column name", s)
			}
			g.State = append(g.State, col)
		}
	}
	if g.Bins, g.State, err = parseBinsFlag(c, k, g.State); err != nil {
		return err
	}
	g.Horizon, g.Actions, g.NumState = c.Int("horizon"), c.Int("actions"), c.Int("num-states")
	for _, f := range []struct {
		name string
		v    int
	}{{"horizon", g.Horizon}, {"actions", g.Actions}, {"num-states", g.NumState}} {
		if f.v < 0 {
			return usagef("--%s must not be negative", f.name)
		}
	}
	if g.Horizon > maxHorizon {
		return usagef("--horizon %d is above the largest step grmdp reads, %d", g.Horizon, maxHorizon)
	}
	if g.Actions > traj.MaxActions {
		return usagef("--actions %d is above the most actions grmdp reads, %d", g.Actions, traj.MaxActions)
	}
	return nil
}

// columnsGroup names the columns of the trajectory contract.
type columnsGroup struct {
	Columns traj.Columns
}

func (g *columnsGroup) flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "site-col", Value: "site", Usage: "site column"},
		&cli.StringFlag{Name: "traj-col", Value: "traj", Usage: "trajectory column"},
		&cli.StringFlag{Name: "step-col", Value: "step", Usage: "step column"},
		&cli.StringFlag{Name: "action-col", Value: "action", Usage: "action column"},
		&cli.StringFlag{Name: "reward-col", Value: "reward", Usage: "reward column"},
	}
}

func (g *columnsGroup) parse(c *cli.Context) error {
	g.Columns = traj.Columns{Site: c.String("site-col"), Traj: c.String("traj-col"), Step: c.String("step-col"), Action: c.String("action-col"), Reward: c.String("reward-col")}
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
}

func (g *prepGroup) flags() []cli.Flag {
	nulls := "a NULL in the action, reward or a state column: `error|truncate|drop-episode` (truncate ends its episode before the row)"
	if g.nullsUsage != "" {
		nulls = g.nullsUsage
	}
	return []cli.Flag{
		&cli.StringFlag{Name: "first-step", Value: "detect", Usage: "steps are numbered from `0|1` (default: detect, 0 when the smallest step is 0)"},
		&cli.StringFlag{Name: "nulls", Value: "error", Usage: nulls},
	}
}

func (g *prepGroup) parse(c *cli.Context) error {
	var err error
	if g.FirstStep, err = traj.ParseFirstStep(c.String("first-step")); err != nil {
		return usagef("--first-step: %v", err)
	}
	if g.Nulls, err = traj.ParseNullPolicy(c.String("nulls")); err != nil {
		return usagef("--nulls: %v", err)
	}
	return nil
}

// dataGroup is how to read the trajectory contract: the map, the columns
// and, unless Prep is nil, the rules that prepare the rows. Its parse
// checks that each column plays one role and completes the map's default
// state columns.
type dataGroup struct {
	Map     mapGroup
	Columns columnsGroup
	Prep    *prepGroup
}

func (g *dataGroup) flags() []cli.Flag {
	fl := append(g.Map.flags(), g.Columns.flags()...)
	if g.Prep != nil {
		fl = append(fl, g.Prep.flags()...)
	}
	return fl
}

func (g *dataGroup) parse(c *cli.Context) error {
	if err := g.Map.parse(c); err != nil {
		return err
	}
	if g.Prep != nil {
		if err := g.Prep.parse(c); err != nil {
			return err
		}
	}
	if err := g.Columns.parse(c); err != nil {
		return err
	}
	cols, m := g.Columns.Columns, &g.Map
	role := map[string]string{}
	for _, r := range []struct{ flag, col string }{{"--site-col", cols.Site}, {"--traj-col", cols.Traj},
		{"--step-col", cols.Step}, {"--action-col", cols.Action}, {"--reward-col", cols.Reward}} {
		if r.col == "" {
			return usagef("%s is empty", r.flag)
		}
		if prev, ok := role[r.col]; ok {
			return usagef("%s and %s both name column %q: each column plays one role", prev, r.flag, r.col)
		}
		role[r.col] = r.flag
	}
	for _, col := range m.State {
		if prev, ok := role[col]; ok {
			if prev == "--state" {
				return usagef("--state names column %q twice", col)
			}
			return usagef("--state names column %q, which %s names too: each column plays one role", col, prev)
		}
		role[col] = "--state"
	}
	switch m.Kind {
	case features.Tabular, features.Indicator:
		if m.State == nil {
			m.State = []string{"state"}
		}
		if len(m.State) != 1 {
			return usagef("--state: the %s map reads one integer column, got %d", m.Kind, len(m.State))
		}
	case features.Precomputed:
		if m.State == nil {
			m.State = []string{"phi"}
		}
		if len(m.State) != 1 {
			return usagef("--state: the precomputed map reads one list column, got %d", len(m.State))
		}
	}
	return nil
}

// options returns what g says as the data's options.
func (g *dataGroup) options() dataset.Options {
	o := dataset.Options{Map: features.Spec{Kind: g.Map.Kind, StateColumns: g.Map.State, Bins: g.Map.Bins, S: g.Map.NumState},
		Columns: g.Columns.Columns, Horizon: g.Map.Horizon, Actions: g.Map.Actions}
	if g.Prep != nil {
		o.FirstStep, o.Nulls = g.Prep.FirstStep, g.Prep.Nulls
	}
	return o
}

// solverGroup is Algorithm 1's settings and its baselines'. With auto
// set (solve, compare, validate), --c, --lambda and --stationary may be
// auto: AutoC, AutoLambda and AutoStationary say so, and Settings hold
// the defaults the candidates start from.
type solverGroup struct {
	Settings                          solve.Settings
	auto                              bool
	AutoC, AutoLambda, AutoStationary bool
	stationary                        *stationaryValue
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

// stationaryFlag is a generic flag that, like a switch, takes no
// separate value argument (flagsFirst).
type stationaryFlag struct{ *cli.GenericFlag }

func (stationaryFlag) TakesValue() bool { return false }

func (g *solverGroup) flags() []cli.Flag {
	cUsage, lambdaUsage := "penalty constant c in beta = c d H sqrt(zeta)", "ridge parameter lambda (> 0)"
	stUsage := "assert that transitions and rewards do not depend on the step: pool every step's transitions in each regression"
	if g.auto {
		stUsage += "; or --stationary=auto (with --c auto): chosen with c, with and without pooling"
		cUsage += ", or auto: chosen among a path of c (--c-path; by default 5e-4 down to 5e-10 by decades, then 0) and the behaviour fallback by the held-out lower limit of the worst site's value, among the candidates whose held-out worst site beats the fallback's (--folds folds by trajectory within sites)"
		lambdaUsage += ", or auto (with --c auto): chosen among 0.1, 1 and 10"
	}
	return []cli.Flag{
		&cli.StringFlag{Name: "lambda", Value: "1", Usage: lambdaUsage},
		&cli.StringFlag{Name: "c", Value: "5e-4", Usage: cUsage},
		&cli.Float64Flag{Name: "xi", Value: 0.05, Usage: "confidence parameter xi in (0,1)"},
		&cli.Float64Flag{Name: "beta", Usage: "use this beta directly instead of c and xi"},
		&cli.StringFlag{Name: "fallback", Value: "behaviour", Usage: "rule for decisions without evidence: behaviour (the data's most frequent action) or lowest (the paper's)"},
		stationaryFlag{&cli.GenericFlag{Name: "stationary", Value: g.newStationary(), Usage: stUsage}},
	}
}

func (g *solverGroup) parse(c *cli.Context) error {
	s := solve.DefaultSettings
	s.Xi = c.Float64("xi")
	var err error
	if s.Lambda, g.AutoLambda, err = g.number(c, "lambda", s.Lambda); err != nil {
		return err
	}
	if s.C, g.AutoC, err = g.number(c, "c", s.C); err != nil {
		return err
	}
	if !(s.Lambda > 0) || math.IsInf(s.Lambda, 0) {
		return usagef("--lambda must be a positive number, got %v", s.Lambda)
	}
	if !(s.C >= 0) || math.IsInf(s.C, 0) {
		return usagef("--c must be a nonnegative number, got %v", s.C)
	}
	if g.AutoLambda && !g.AutoC {
		return usagef("--lambda auto is chosen with c: give --c auto too")
	}
	if g.AutoC && c.IsSet("beta") {
		return usagef("--c auto chooses beta from c: do not give --beta")
	}
	if !(s.Xi > 0 && s.Xi < 1) {
		return usagef("--xi must be in (0,1), got %v", s.Xi)
	}
	if c.IsSet("beta") {
		s.Beta, s.BetaSet = c.Float64("beta"), true
		if !(s.Beta >= 0) || math.IsInf(s.Beta, 0) {
			return usagef("--beta must be a nonnegative number, got %v", s.Beta)
		}
	}
	switch f := solve.Fallback(c.String("fallback")); f {
	case solve.FallbackBehaviour, solve.FallbackLowest:
		s.Fallback = f
	default:
		return usagef("--fallback must be behaviour or lowest, got %q", f)
	}
	st := g.stationary
	if st == nil {
		st = &stationaryValue{}
	}
	s.Stationary, g.AutoStationary = st.on, st.auto
	if g.AutoStationary && !g.auto {
		return usagef("--stationary=auto is for solve, compare and validate: give --stationary or leave it out")
	}
	if g.AutoStationary && !g.AutoC {
		return usagef("--stationary=auto is chosen with c: give --c auto too")
	}
	if s.Stationary && g.auto && slices.Contains(c.Args().Slice(), "auto") {
		return usagef("--stationary is a switch: write --stationary=auto to choose step pooling with --c auto")
	}
	g.Settings = s
	return nil
}

// newStationary returns a fresh value of --stationary, which parse reads.
func (g *solverGroup) newStationary() *stationaryValue {
	g.stationary = &stationaryValue{}
	return g.stationary
}

// number reads flag name: a number, or (for a command that chooses it)
// auto, which leaves def.
func (g *solverGroup) number(c *cli.Context, name string, def float64) (float64, bool, error) {
	v := strings.TrimSpace(c.String(name))
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

// clusterGroup is a cluster file: --clusters, and how to cut a similarity
// file into clusters. use says what the file is for; sites names the sites
// --allow-singletons keeps.
type clusterGroup struct {
	Clusters   clusterOptions
	use, sites string
}

func (g *clusterGroup) flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "clusters", Usage: cmp.Or(g.use, "cluster `FILE` (assignment, similarity matrix or edge list) for --method cluster")},
		&cli.Float64Flag{Name: "threshold", Usage: "with a similarity --clusters file: connected components of similarity >= T"},
		&cli.IntFlag{Name: "num-clusters", Usage: "with a similarity --clusters file: average-linkage clusters, cut at M"},
		&cli.BoolFlag{Name: "allow-singletons", Usage: "keep " + cmp.Or(g.sites, "data sites") + " missing from the cluster file as clusters of their own"},
	}
}

func (g *clusterGroup) parse(c *cli.Context) error {
	g.Clusters = clusterOptions{Path: c.String("clusters"), Options: cluster.Options{M: c.Int("num-clusters")}, AllowSingletons: c.Bool("allow-singletons")}
	if c.IsSet("threshold") {
		g.Clusters.Options.Threshold, g.Clusters.Options.HasThreshold = c.Float64("threshold"), true
	}
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
	return []cli.Flag{
		&cli.IntFlag{Name: "min-count", Value: g.minCount, Usage: "suppress a feature counted at fewer than `K` rows of a (site, step), as if never observed (its Gram row and column and right-hand side entry zeroed)"},
		&cli.IntFlag{Name: "min-rows", Value: g.minRows, Usage: "a site with fewer than `N` rows at a step contributes nothing to that step"},
	}
}

func (g *disclosureGroup) parse(c *cli.Context) error {
	dc := solve.Disclosure{MinCount: c.Int("min-count"), MinRows: c.Int("min-rows")}
	if dc.MinCount < 0 {
		return usagef("--min-count must not be negative, got %d", dc.MinCount)
	}
	if dc.MinRows < 0 {
		return usagef("--min-rows must not be negative, got %d", dc.MinRows)
	}
	g.Disclosure, g.CountSet, g.RowsSet = dc, c.IsSet("min-count"), c.IsSet("min-rows")
	return nil
}

// outOfCoreGroup is --out-of-core, for the commands that solve.
type outOfCoreGroup struct {
	OutOfCore bool
}

func (g *outOfCoreGroup) flags() []cli.Flag {
	return []cli.Flag{&cli.BoolFlag{Name: "out-of-core", Usage: "read the data one pair of steps at a time instead of holding them in memory " +
		"(automatic when they would not fit in --max-memory); after grmdp prepare each round reads only its own row groups"}}
}

func (g *outOfCoreGroup) parse(c *cli.Context) error {
	g.OutOfCore = c.Bool("out-of-core")
	return nil
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
	if g.through {
		return []cli.Flag{
			&cli.StringFlag{Name: "features", Usage: "feature map to evaluate through (default: the policy's own; the policy's map still makes its decisions)"},
			&cli.StringFlag{Name: "state", Usage: "state `COLS` of the --features map (without --features: checked against the policy's)"},
			binsFlag("cut points of a binned --features map, as solve takes them (without --features: checked against the policy's)"),
			&cli.IntFlag{Name: "horizon", Usage: "horizon H (taken from the policy; checked against it when given)"},
			&cli.IntFlag{Name: "actions", Usage: "number of actions A (taken from the policy; checked against it when given)"},
			&cli.IntFlag{Name: "num-states", Usage: "tabular states S of a tabular --features map (without --features: checked against the policy's)"},
		}
	}
	return []cli.Flag{
		&cli.StringFlag{Name: "features", Usage: "feature map (taken from the policy; checked against it when given)"},
		&cli.StringFlag{Name: "state", Usage: "state `COLS` (taken from the policy; checked against it when given)"},
		binsFlag("binned maps' cut points (taken from the policy; checked against it when given)"),
		&cli.IntFlag{Name: "horizon", Usage: "horizon H (taken from the policy; checked against it when given)"},
		&cli.IntFlag{Name: "actions", Usage: "number of actions A (taken from the policy; checked against it when given)"},
		&cli.IntFlag{Name: "num-states", Usage: "tabular states S (taken from the policy; checked against it when given)"},
	}
}

func (g *policyDataGroup) parse(c *cli.Context) error {
	g.Declared = dataset.Declared{Features: c.String("features"), State: c.String("state"),
		Horizon: c.Int("horizon"), Actions: c.Int("actions"), NumStates: c.Int("num-states"), Bins: binsValues(c)}
	return nil
}

// policyColumnsGroup names the data's columns where they differ from the
// policy's: a column flag not given takes the column the policy was
// learned with ("" in Columns). names lists the columns the command
// reads (site, traj, step, action, reward); usage overrides a flag's
// help text.
type policyColumnsGroup struct {
	Columns traj.Columns
	names   []string
	usage   map[string]string
}

func (g *policyColumnsGroup) flags() []cli.Flag {
	var fl []cli.Flag
	for _, n := range g.names {
		word := n
		if n == "traj" {
			word = "trajectory"
		}
		fl = append(fl, &cli.StringFlag{Name: n + "-col", Value: n, Usage: cmp.Or(g.usage[n], word+" column (default: the policy's)")})
	}
	return fl
}

func (g *policyColumnsGroup) parse(c *cli.Context) error {
	given := func(name string) string {
		if c.IsSet(name) {
			return c.String(name)
		}
		return ""
	}
	g.Columns = traj.Columns{Site: given("site-col"), Traj: given("traj-col"), Step: given("step-col"), Action: given("action-col"), Reward: given("reward-col")}
	return nil
}

// returnRangeGroup is the range of an episode's total reward, which sets
// the scale of an evaluation's bounds and intervals (eval, and the
// commands that evaluate).
type returnRangeGroup struct {
	ReturnRange eval.Range
}

func (g *returnRangeGroup) flags() []cli.Flag {
	return []cli.Flag{
		&cli.StringFlag{Name: "return-range", Usage: "the range `LO,HI` of an episode's total reward (e.g. 0,1 for a 0/1 outcome): " +
			"bounds, intervals and \"identified\" use it (default: 0,H)"},
	}
}

func (g *returnRangeGroup) parse(c *cli.Context) error {
	g.ReturnRange = eval.Range{}
	s := c.String("return-range")
	if s == "" {
		return nil
	}
	lo, hi, ok := strings.Cut(s, ",")
	var err1, err2 error
	if ok {
		g.ReturnRange.Lo, err1 = strconv.ParseFloat(strings.TrimSpace(lo), 64)
		g.ReturnRange.Hi, err2 = strconv.ParseFloat(strings.TrimSpace(hi), 64)
	}
	if !ok || err1 != nil || err2 != nil {
		return usagef("--return-range %q: want LO,HI, two numbers", s)
	}
	if err := g.ReturnRange.Check(); err != nil {
		return usagef("--return-range %s: %v", s, strings.TrimPrefix(err.Error(), "eval: return range "))
	}
	return nil
}
