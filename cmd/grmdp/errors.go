package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/grmdp/grmdp/cluster"
	"github.com/grmdp/grmdp/io/parquetio"
	"github.com/grmdp/grmdp/solve"
)

// Exit codes, decided here and nowhere else.
const (
	exitOK          = 0
	exitInternal    = 1
	exitUsage       = 2
	exitBadData     = 3
	exitInterrupted = 130
)

// errUsage marks a bad command line.
var errUsage = errors.New("usage")

// errBadInput marks bad input found by the command itself (a policy that
// does not fit the data, for example).
var errBadInput = errors.New("bad input")

type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }
func (e *usageError) Unwrap() error { return errUsage }

func usagef(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

func badInputf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errBadInput}, args...)...)
}

func exitCode(ctx context.Context, err error) int {
	switch {
	case errors.Is(err, context.Canceled) || ctx.Err() != nil:
		return exitInterrupted
	case errors.Is(err, errUsage), errors.Is(err, cluster.ErrOptions), isCLIUsage(err):
		return exitUsage
	case errors.Is(err, fs.ErrNotExist), errors.Is(err, fs.ErrPermission):
		return exitBadData
	case errors.Is(err, parquetio.ErrBadData), errors.Is(err, parquetio.ErrSchema),
		errors.Is(err, parquetio.ErrNoData), errors.Is(err, parquetio.ErrParquet),
		errors.Is(err, cluster.ErrBadSimilarity), errors.Is(err, cluster.ErrMissingSite),
		errors.Is(err, solve.ErrBadPolicy),
		errors.Is(err, errBadInput):
		return exitBadData
	}
	return exitInternal
}

// isCLIUsage recognises the usage errors urfave/cli returns as plain
// errors: a missing required flag, an unknown command.
func isCLIUsage(err error) bool {
	msg := err.Error()
	return strings.HasPrefix(msg, "Required flag") || strings.HasPrefix(msg, "No help topic for") ||
		strings.HasPrefix(msg, "flag provided but not defined")
}

// message returns the one line shown for err.
func message(err error) string {
	if errors.Is(err, context.Canceled) {
		return "interrupted: no output was written"
	}
	msg := err.Error()
	msg = strings.ReplaceAll(msg, "\n", "; ")
	return msg
}
