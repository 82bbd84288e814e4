package main

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/grmdp/grmdp/dataset"
	"github.com/grmdp/grmdp/solve"
)

// The data flags read into dataset.Options, and the library's errors and
// notes put in the command line's words.

// maxHorizon is the largest step the reader accepts (traj.Builder).
const maxHorizon = 1<<15 - 1

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
