package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/grmdp/grmdp/dataset"
	"github.com/grmdp/grmdp/features"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// The data flags read into dataset.Options, and the library's errors and
// notes put in the command line's words.

// parsePrep reads prepFlags.
func parsePrep(c *cli.Context) (traj.FirstStep, traj.NullPolicy, error) {
	fs, err := traj.ParseFirstStep(c.String("first-step"))
	if err != nil {
		return fs, 0, usagef("--first-step: %v", err)
	}
	nulls, err := traj.ParseNullPolicy(c.String("nulls"))
	if err != nil {
		return fs, nulls, usagef("--nulls: %v", err)
	}
	return fs, nulls, nil
}

// maxHorizon is the largest step the reader accepts (traj.Builder).
const maxHorizon = 1<<15 - 1

// parseDataOptions reads every data flag of c that it has (dataFlags,
// --out-of-core, the disclosure flags) into the options of dataset.Open,
// with notes and progress bars on stderr.
func parseDataOptions(c *cli.Context) (dataset.Options, error) {
	var o dataset.Options
	o.Note, o.Progress = noteTo(c.App.ErrWriter), barsTo(c.App.ErrWriter)
	k, err := features.ParseKind(c.String("features"))
	if err != nil {
		return o, usagef("--features: %v", strings.TrimPrefix(err.Error(), "features: "))
	}
	o.Map.Kind = k
	var state []string
	if s := c.String("state"); s != "" {
		for _, col := range strings.Split(s, ",") {
			col = strings.TrimSpace(col)
			if col == "" {
				return o, usagef("--state %q has an empty column name", s)
			}
			state = append(state, col)
		}
	}
	if o.Map.Bins, state, err = parseBinsFlag(c, k, state); err != nil {
		return o, err
	}
	if o.FirstStep, o.Nulls, err = parsePrep(c); err != nil {
		return o, err
	}
	o.Columns = traj.Columns{Site: c.String("site-col"), Traj: c.String("traj-col"), Step: c.String("step-col"), Action: c.String("action-col"), Reward: c.String("reward-col")}
	o.Horizon, o.Actions, o.Map.S, o.Workers = c.Int("horizon"), c.Int("actions"), c.Int("num-states"), c.Int("workers")
	o.OutOfCore, o.MaxMemory = c.Bool("out-of-core"), c.String("max-memory")
	for _, f := range []struct {
		name string
		v    int
	}{{"horizon", o.Horizon}, {"actions", o.Actions}, {"num-states", o.Map.S}, {"workers", o.Workers}} {
		if f.v < 0 {
			return o, usagef("--%s must not be negative", f.name)
		}
	}
	if o.Horizon > maxHorizon {
		return o, usagef("--horizon %d is above the largest step grmdp reads, %d", o.Horizon, maxHorizon)
	}
	if hasFlag(c.Command, "min-count") {
		if o.Disclosure, err = parseDisclosure(c); err != nil {
			return o, err
		}
	}
	// Each column plays one role.
	role := map[string]string{}
	for _, r := range []struct{ flag, col string }{{"--site-col", o.Columns.Site}, {"--traj-col", o.Columns.Traj},
		{"--step-col", o.Columns.Step}, {"--action-col", o.Columns.Action}, {"--reward-col", o.Columns.Reward}} {
		if r.col == "" {
			return o, usagef("%s is empty", r.flag)
		}
		if prev, ok := role[r.col]; ok {
			return o, usagef("%s and %s both name column %q: each column plays one role", prev, r.flag, r.col)
		}
		role[r.col] = r.flag
	}
	for _, col := range state {
		if prev, ok := role[col]; ok {
			if prev == "--state" {
				return o, usagef("--state names column %q twice", col)
			}
			return o, usagef("--state names column %q, which %s names too: each column plays one role", col, prev)
		}
		role[col] = "--state"
	}
	switch k {
	case features.Tabular, features.Indicator:
		if state == nil {
			state = []string{"state"}
		}
		if len(state) != 1 {
			return o, usagef("--state: the %s map reads one integer column, got %d", k, len(state))
		}
	case features.Precomputed:
		if state == nil {
			state = []string{"phi"}
		}
		if len(state) != 1 {
			return o, usagef("--state: the precomputed map reads one list column, got %d", len(state))
		}
	}
	o.Map.StateColumns = state
	return o, nil
}

// outOfCoreFlag is --out-of-core, for the commands that solve.
func outOfCoreFlag() cli.Flag {
	return &cli.BoolFlag{Name: "out-of-core", Usage: "read the data one pair of steps at a time instead of holding them in memory " +
		"(automatic when they would not fit in --max-memory); after grmdp prepare each round reads only its own row groups"}
}

// optionFlags names the flag of each dataset option.
var optionFlags = map[string]string{
	"OutOfCore": "--out-of-core", "Actions": "--actions", "Nulls": "--nulls", "MaxMemory": "--max-memory",
	"Map.Bins": "--bins", "Cache": "--cache", "Map.StateColumns": "--state",
}

// flagWords puts the library's words for its options in the flags'.
var flagWords = strings.NewReplacer(
	"the memory limit", "--max-memory",
	"raise it,", "raise --max-memory,",
	"(prepare it)", "with grmdp prepare",
	"fewer tabular states", "--num-states",
	"set the first step", "set --first-step",
)

// dataErr puts an error of package dataset in the command line's words,
// naming the flag to change; other errors are returned as they are.
func dataErr(err error) error {
	var oe *dataset.OptionError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, dataset.ErrTooLarge):
		return &tooLargeError{flagWords.Replace(err.Error())}
	case errors.Is(err, dataset.ErrInMemory):
		need, _, _ := strings.Cut(err.Error(), " needs the data in memory")
		return usagef("%s needs the data in memory: drop --out-of-core or raise --max-memory", need)
	case errors.Is(err, solve.ErrStationaryStreamed):
		return usagef("--stationary needs every step's rows at once and cannot run out of core: raise --max-memory or drop --stationary")
	case errors.As(err, &oe):
		msg := flagWords.Replace(oe.Err.Error())
		switch oe.Option {
		case "paths":
			return usagef("no DATA given: name one or more Parquet files, directories or globs")
		case "Map.StateColumns":
			return badInputf("%s with --state", msg)
		case "Map.Bins":
			return badInputf("%s: --bins: %s", oe.Value, msg)
		case "Cache":
			if oe.Value == "" {
				return fmt.Errorf("--cache: %w", oe.Err)
			}
			return fmt.Errorf("--cache %s: %w", oe.Value, oe.Err)
		case "Nulls":
			return usagef("--nulls %s: %s", oe.Value, msg)
		}
		flag := optionFlags[oe.Option]
		if oe.Value != "" {
			flag += " " + oe.Value
		}
		return usagef("%s: %s", flag, msg)
	case errors.Is(err, dataset.ErrBadInput):
		return badInputf("%w", err)
	}
	return err
}

// tooLargeError is dataset.ErrTooLarge in the command line's words.
type tooLargeError struct{ msg string }

func (e *tooLargeError) Error() string { return e.msg }
func (e *tooLargeError) Unwrap() error { return dataset.ErrTooLarge }

// errTooLarge marks an input that would need more memory than
// --max-memory allows (exit code 3: the input, not the command line, is
// the problem for this machine).
var errTooLarge = dataset.ErrTooLarge

// noteTo prints the library's notes on w, in the command line's words.
func noteTo(w io.Writer) func(string) {
	return func(msg string) {
		if strings.HasPrefix(msg, "nulls ") {
			msg = "--" + msg
		}
		fmt.Fprintf(w, "grmdp: note: %s\n", flagWords.Replace(msg))
	}
}

// barsTo draws the library's progress on w when it is a terminal.
func barsTo(w io.Writer) func(string) dataset.Progress {
	return func(stage string) dataset.Progress { return newBar(w, stage) }
}
