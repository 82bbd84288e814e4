package cluster

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error this package returns for a bad file, bad
// options or a file that does not cover the data wraps one of them, so
// callers choose exit codes with errors.Is.
var (
	// ErrBadSimilarity marks a similarity or cluster file that is not one
	// of the forms described in the package documentation. Errors that
	// can be placed in the file are a *ParseError, whose Unwrap returns
	// ErrBadSimilarity.
	ErrBadSimilarity = errors.New("cluster: bad similarity file")

	// ErrOptions marks options that do not fit the file: a threshold and a
	// cluster count given together, neither given for similarities, either
	// given for an assignment, or a value out of range.
	ErrOptions = errors.New("cluster: bad options")

	// ErrMissingSite marks a data site that the cluster file does not
	// assign to any cluster.
	ErrMissingSite = errors.New("cluster: site missing from cluster file")
)

// ParseError locates a problem in a similarity or cluster file. It prints
// as
//
//	sim.csv: line 3, column 4: value "x" for sites "b" and "c" is not a number
//
// Line is 1-based and 0 when the problem concerns the whole file. Column is
// the 1-based field of a CSV row and 0 when it does not apply (JSON, or a
// whole row). For every *ParseError, errors.Is(err, ErrBadSimilarity)
// reports true.
type ParseError struct {
	File   string
	Line   int
	Column int
	Msg    string
}

func (e *ParseError) Error() string {
	loc := e.File
	if e.Line > 0 {
		loc += fmt.Sprintf(": line %d", e.Line)
		if e.Column > 0 {
			loc += fmt.Sprintf(", column %d", e.Column)
		}
	}
	return loc + ": " + e.Msg
}

// Unwrap returns ErrBadSimilarity.
func (e *ParseError) Unwrap() error { return ErrBadSimilarity }

// errAt returns a *ParseError for file name at line and column.
func errAt(name string, line, col int, format string, args ...any) error {
	return &ParseError{File: name, Line: line, Column: col, Msg: fmt.Sprintf(format, args...)}
}

// optionsError returns an error wrapping ErrOptions.
func optionsError(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrOptions, fmt.Sprintf(format, args...))
}
