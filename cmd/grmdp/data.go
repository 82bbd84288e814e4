package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/grmdp/grmdp/dataset"
	"github.com/grmdp/grmdp/eval"
	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/io/policyio"
	"github.com/grmdp/grmdp/sim"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// Opening the data and reading a policy as the flags say, and the
// library's errors and notes put in the command line's words.

// optionFlags names the flag of each library option or setting
// (dataset.OptionError, features.SpecError as Map.Field,
// solve.SettingError).
var optionFlags = map[string]string{
	"Lambda": "--lambda", "C": "--c", "Xi": "--xi", "Beta": "--beta", "Fallback": "--fallback", "Workers": "--workers",
	"Disclosure.MinCount": "--min-count", "Disclosure.MinRows": "--min-rows",
	"Horizon": "--horizon", "Actions": "--actions", "OutOfCore": "--out-of-core", "Nulls": "--nulls", "MaxMemory": "--max-memory",
	"Cache": "--cache", "SplitPrefix": "--split-sites", "Steps": "--step",
	"Map.Kind": "--features", "Map.StateColumns": "--state", "Map.Bins": "--bins", "Map.S": "--num-states", "Map.D": "--dim", "MinSites": "--min-sites",
	"Sites": "--sites", "Rules.ActionLabels": "--action-labels", "Map.A": "--actions",
	"Declared.Features": "--features", "Declared.State": "--state", "Declared.Bins": "--bins", "Declared.Horizon": "--horizon",
	"Declared.Actions": "--actions", "Declared.NumStates": "--num-states",
}

// roleFlags names the flag of each column role (traj.RoleError).
var roleFlags = map[string]string{"site": "--site-col", "traj": "--traj-col", "step": "--step-col", "action": "--action-col", "reward": "--reward-col", "state": "--state"}

// remedyWords says each remedy of a too-large error with the flags to
// change.
var remedyWords = map[dataset.Remedy]string{
	dataset.RaiseLimit:          "raise --max-memory (0 = no limit) if the machine has the memory",
	dataset.RaiseLimitOrPrepare: "raise --max-memory (0 = no limit) if the machine has the memory, or shrink the input first with grmdp prepare",
	dataset.FewerFeatures:       "use fewer features (--num-states, fewer state columns) or raise --max-memory (0 = no limit) if the machine has the memory",
	dataset.FewerRows:           "simulate fewer sites or trajectories, or raise --max-memory (0 = no limit) if the machine has the memory",
}

// tooLargeFinding is what does not fit, naming --max-memory.
func tooLargeFinding(e *dataset.TooLargeError) string {
	return fmt.Sprintf("%s, more than --max-memory %s allows", e.What, e.Limit)
}

// dataErr puts an error of package dataset, a features.SpecError, a
// solve.SettingError or a traj.RoleError in the command line's words,
// naming the flag to change (a dataset.EnvError, the node's environment,
// is a usage error); other errors go through policyErr.
func dataErr(err error) error {
	var (
		re *traj.RoleError
		oe *dataset.OptionError
		tl *dataset.TooLargeError
		im *dataset.InMemoryError
		se *solve.SettingError
		fe *features.SpecError
		ee *dataset.EnvError
	)
	switch {
	case err == nil:
		return nil
	case errors.As(err, &re):
		first, second := roleFlags[re.Roles[0]], roleFlags[re.Roles[1]]
		switch {
		case first == second:
			return usagef("--state names column %q twice", re.Column)
		case second == "--state":
			return usagef("--state names column %q, which %s names too: each column plays one role", re.Column, first)
		}
		return usagef("%s and %s both name column %q: each column plays one role", first, second, re.Column)
	case errors.As(err, &ee):
		return usagef("%s", ee)
	case errors.As(err, &se):
		return usagef("%s %v", cmp.Or(optionFlags[se.Setting], se.Setting), se.Err)
	case errors.As(err, &fe):
		return usagef("%s: %v", flagValue("Map."+fe.Field, fe.Value), fe.Err)
	case errors.As(err, &tl):
		return &cliError{tooLargeFinding(tl) + ": " + remedyWords[tl.Remedy], []error{dataset.ErrTooLarge}}
	case errors.As(err, &im):
		return usagef("%s needs the data in memory: drop --out-of-core or raise --max-memory", im.Need)
	case errors.Is(err, solve.ErrStationaryStreamed):
		return usagef("--stationary needs every step's rows at once and cannot run out of core: raise --max-memory or drop --stationary")
	case errors.As(err, &oe):
		msg := oe.Err.Error()
		switch oe.Option {
		case "paths":
			return usagef("no DATA given: name one or more Parquet files, directories or globs")
		case "Map.StateColumns":
			return badInputf("%s with --state", msg)
		case "Map.Bins":
			return badInputf("%s: --bins: %s", oe.Value, msg)
		case "Cache":
			return fmt.Errorf("%s: %w", flagValue(oe.Option, oe.Value), oe.Err)
		case "Nulls":
			if errors.Is(oe.Err, dataset.ErrNullsInMemory) {
				msg = "a null policy needs the whole input in memory, which does not fit in --max-memory: raise --max-memory, or drop the rows with NULLs before reading"
			}
			return usagef("--nulls %s: %s", oe.Value, msg)
		}
		return usagef("%s: %v", flagValue(oe.Option, oe.Value), oe.Err)
	case errors.Is(err, dataset.ErrBadInput):
		return badInputf("%w", err)
	}
	return policyErr(err)
}

// flagValue is the flag of option (optionFlags; the option itself for one
// no flag sets) and the value given ("" to leave it out).
func flagValue(option, value string) string {
	if value != "" {
		value = " " + value
	}
	return cmp.Or(optionFlags[option], option) + value
}

// noteTo prints the library's notes on w, in the command line's words.
func noteTo(w io.Writer) func(dataset.Note) {
	return notesTo(w, "solving out of core instead, one pair of steps at a time")
}

// notesTo is noteTo for a command that says what it does instead when
// the data do not fit in memory.
func notesTo(w io.Writer, instead string) func(dataset.Note) {
	return func(n dataset.Note) {
		msg := ""
		switch n.Kind {
		case dataset.ZeroSteps:
			msg = fmt.Sprintf("steps start at 0 in %s; read as 1..H (set --first-step to silence)", n.File)
		case dataset.NullsRemoved:
			msg = fmt.Sprintf("--nulls %s: %s", n.Nulls, n.RemovedWords())
		case dataset.OutOfCore:
			msg = tooLargeFinding(n.TooLarge) + "; " + instead
		case dataset.CensoredWritten:
			msg = fmt.Sprintf("%d episodes are censored (--nulls truncate): the prepared file holds their rows before the NULL "+
				"but does not mark them, so a read of it takes each to end at its last row; prepare with --nulls drop-episode to leave them out", n.Censored)
		}
		fmt.Fprintf(w, "grmdp: note: %s\n", msg)
	}
}

// barsTo draws the library's progress on w when it is a terminal.
func barsTo(w io.Writer) func(string) dataset.Progress {
	return func(stage string) dataset.Progress { return newBar(w, stage) }
}

// problem is method m's problem over the data's sites: for the cluster
// method, --clusters read and mapped onto them (dataset.ClusterProblem),
// with the mapping's warnings.
func problem(m solve.Method, co dataset.EvalClusters, sites []string) (solve.Problem, []string, error) {
	if m != solve.Cluster {
		return solve.Problem{Method: m}, nil, nil
	}
	if co.Path == "" {
		return solve.Problem{}, nil, usagef("--method cluster needs --clusters FILE")
	}
	return dataset.ClusterProblem(co.Path, co.Options, co.AllowSingletons, sites)
}

// openOptions are the options dataset.Open reads the data with: the
// data flags, the resources, and notes and progress bars on stderr.
func openOptions(g *dataGroup, w workersGroup, m memoryGroup, stderr io.Writer) dataset.Options {
	do := g.options()
	do.Workers, do.MaxMemory = w.Workers, m.Value
	do.Note, do.Progress = noteTo(stderr), barsTo(stderr)
	return do
}

// openData opens the data of a command that solves under s: in memory
// when cpath (--c-path re-solves from the statistics), --stationary or
// disclosure control needs them there.
func openData(ctx context.Context, o dataset.Options, paths []string, s solve.Settings, cpath bool) (*dataset.Data, error) {
	switch {
	case o.Disclosure.Active():
		o.InMemory = "--min-count and --min-rows apply to statistics held in memory"
	case s.Stationary:
		o.InMemory = "--stationary pools every step's rows in each regression"
	case cpath:
		o.InMemory = "--c-path re-solves from statistics held in memory"
	}
	d, err := dataset.Open(ctx, paths, o)
	return d, dataErr(err)
}

// policyErr words a penalty that is not finite with the flags that set
// it.
func policyErr(err error) error {
	var pe *dataset.PenaltyError
	if errors.As(err, &pe) {
		return usagef("the penalty beta = c d H sqrt(log(2 d G H N / xi)) is %v with --c %g and --xi %g: use a larger --xi or a smaller --c, or give --beta", pe.Beta, pe.C, pe.Xi)
	}
	return err
}

func readPolicy(path string) (*solve.Policy, error) {
	p, err := policyio.Read(path)
	return p, notPolicyErr(err)
}

// notPolicyErr says of a Parquet file without a policy's columns that it
// may not be a policy.
func notPolicyErr(err error) error {
	if errors.Is(err, parquetio.ErrSchema) && !strings.Contains(err.Error(), "grmdp solve") {
		return badInputf("%w: is it a policy written by grmdp solve?", err)
	}
	return err
}

// hintFlags is each solve hint's advice in terms of the flags that act on
// it.
var hintFlags = map[solve.Hint]string{
	solve.HintCluster:        "cluster it with similar sites (--method cluster) or coarsen the features",
	solve.HintCheckPenalty:   "Check the penalty (--c auto chooses c held out; --c-path) and the coverage",
	solve.HintSmallerPenalty: "try --c auto (c chosen held out) or a smaller --c (see --c-path)",
	solve.HintLargerLambda:   "use a larger --lambda or drop collinear features",
}

// solveWarnings returns dg's warnings, one line each, their advice naming
// the command's flags.
func solveWarnings(dg *solve.Diagnostics) []string {
	var out []string
	for _, w := range dg.Findings() {
		out = append(out, w.Finding+cmp.Or(hintFlags[w.Hint], w.Hint.Advice()))
	}
	return out
}

// readModel reads the true model of --model.
func readModel(path string) (*eval.Model, error) {
	m, err := sim.ReadModelFile(path)
	if err != nil {
		return nil, modelErr(path, err)
	}
	return eval.NewModel(m), nil
}

// modelErr names the --model file in err: the file is bad, or does not
// fit the policy (eval.Model.Check).
func modelErr(path string, err error) error {
	if err != nil {
		return badInputf("--model %s: %v", path, err)
	}
	return nil
}
