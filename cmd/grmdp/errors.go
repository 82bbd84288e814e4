package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/urfave/cli/v3"

	"github.com/grmdp/grmdp/cluster"
	"github.com/grmdp/grmdp/dataset"
	"github.com/grmdp/grmdp/experiment"
	"github.com/grmdp/grmdp/federate"
	"github.com/grmdp/grmdp/io/fileio"
	"github.com/grmdp/grmdp/io/msgio"
	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/sim"
	"github.com/grmdp/grmdp/solve"
	"github.com/grmdp/grmdp/traj"
)

// Exit codes, decided here and nowhere else (README.md, "Exit codes"):
//
//	0    success
//	1    anything else: an internal error, or the system failed (disk full)
//	2    bad usage: flags, arguments, a --config file, an output path whose
//	     directory is missing, that names an input, or that names something
//	     other than a regular file (a device, a FIFO), settings that make
//	     the problem singular (a tiny --lambda) or beta infinite
//	3    bad input data: a file that is missing, unreadable, not Parquet, or
//	     breaks the contract (the message names file, column and row); a bad
//	     policy, similarity or model file; an input too large for --max-memory;
//	     in every command, a federated job's refusal of a message or a
//	     message file that cannot be read
//	4    apply --min-evidence: the output was written, but too few of its
//	     scored rows have evidence (the recommendations are mostly the
//	     fallback)
//	130  interrupted by SIGINT or SIGTERM; no partial output is left
const (
	exitOK          = 0
	exitInternal    = 1
	exitUsage       = 2
	exitBadData     = 3
	exitLowEvidence = 4
	exitInterrupted = 130
)

// The command line's own kinds of error: a bad command line, bad input
// found by the command itself (a policy that does not fit the data, for
// example), and apply's answer to a --min-evidence the output does not
// reach (exit 4).
var (
	errUsage       = errors.New("usage")
	errBadInput    = errors.New("bad input")
	errLowEvidence = errors.New("low evidence")
)

// cliError carries its whole message and unwraps to its kinds: a sentinel,
// which never shows in the message, and any cause.
type cliError struct {
	msg   string
	kinds []error
}

func (e *cliError) Error() string   { return e.msg }
func (e *cliError) Unwrap() []error { return e.kinds }

func usagef(format string, args ...any) error {
	return &cliError{fmt.Sprintf(format, args...), []error{errUsage}}
}

// badInputf formats a bad-input error; %w in format keeps a cause reachable
// with errors.Is.
func badInputf(format string, args ...any) error {
	err := fmt.Errorf(format, args...)
	return &cliError{err.Error(), []error{errBadInput, err}}
}

// badDataSentinels are the errors, from every package, that mean the input
// data (or a file describing it) is bad.
var badDataSentinels = []error{
	parquetio.ErrBadData, parquetio.ErrSchema, parquetio.ErrNoData, parquetio.ErrParquet,
	cluster.ErrBadSimilarity, cluster.ErrMissingSite, solve.ErrBadPolicy, sim.ErrBadModel,
	errBadInput, dataset.ErrTooLarge, federate.ErrRefused, msgio.ErrBadFile,
	fs.ErrNotExist, fs.ErrPermission,
}

// exitCode maps err to the process's exit code. An error after the context
// was cancelled is an interruption whatever its cause: work stopped because
// of the signal. The only cli.ExitCoder is urfave/cli's answer to help on
// an unknown command (grmdp never calls cli.Exit): a usage error.
func exitCode(ctx context.Context, err error) int {
	switch {
	case errors.Is(err, context.Canceled) || ctx.Err() != nil:
		return exitInterrupted
	case errors.Is(err, errLowEvidence):
		return exitLowEvidence
	case errors.Is(err, errUsage), errors.Is(err, cluster.ErrOptions), errors.Is(err, experiment.ErrConfig),
		errors.Is(err, solve.ErrSingular), errors.Is(err, fileio.ErrOutputPath), errors.As(err, new(cli.ExitCoder)):
		return exitUsage
	}
	for _, s := range badDataSentinels {
		if errors.Is(err, s) {
			return exitBadData
		}
	}
	return exitInternal
}

// message returns the one line shown for err: newlines inside a message
// (from a library that wraps several) become "; ".
func message(ctx context.Context, err error) string {
	if errors.Is(err, context.Canceled) || ctx.Err() != nil {
		return "interrupted: unfinished outputs were removed; inputs are unchanged"
	}
	msg := strings.TrimSpace(err.Error())
	switch {
	case errors.Is(err, solve.ErrSingular):
		// Data are checked finite, so only a tiny ridge parameter does this.
		msg += ": raise --lambda (the ridge parameter)"
	case errors.Is(err, traj.ErrStepZero):
		msg += " (for steps numbered from 0, set --first-step 0)"
	case errors.Is(err, traj.ErrStepsFromOne):
		msg += ": for steps numbered from 1, set --first-step 1 (or leave it to detect)"
	case errors.Is(err, traj.ErrNull):
		msg += ", or set --nulls truncate (end the episode before the row) or --nulls drop-episode"
	}
	return strings.NewReplacer("\r\n", "; ", "\n", "; ").Replace(msg)
}
