package traj

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error the Builder returns for bad input wraps one
// of them, so callers choose exit codes with errors.Is. Readers of a file
// format (io/parquetio) return the same values.
var (
	// ErrBadData marks a value that breaks the trajectory contract.
	ErrBadData = errors.New("bad input data")
	// ErrSchema marks a missing or mistyped column, or files whose schemas
	// disagree.
	ErrSchema = errors.New("bad input schema")
	// ErrNoData marks an input with no files or no rows.
	ErrNoData = errors.New("no input data")
	// ErrGap marks a gap inside an episode: a row whose trajectory has no
	// row at the step before. It wraps ErrBadData. Build reports a gap only
	// when the input has no duplicate row, so a reader of steps in windows
	// that meets a gap must still look for duplicates at the later steps
	// to report what a whole read would.
	ErrGap = fmt.Errorf("%w: gap inside an episode", ErrBadData)
	// ErrStepZero marks a step 0 read with the steps numbered from 1
	// (Options.FirstStep): the data may number their steps from 0. It
	// wraps ErrBadData.
	ErrStepZero = fmt.Errorf("%w: step 0 with steps numbered from 1", ErrBadData)
	// ErrStepsFromOne marks an episode that starts at step 1 read with the
	// steps numbered from 0 (Options.FirstStep): the data may number their
	// steps from 1. It wraps ErrGap.
	ErrStepsFromOne = fmt.Errorf("%w: an episode starts at step 1 with steps numbered from 0", ErrGap)
	// ErrNull marks a NULL in the action, reward or a state column read
	// under NullsError: a null policy that ends the episode before the row
	// (NullsTruncate) or drops it (NullsDropEpisode) would remove it
	// (Options.Nulls). It wraps ErrBadData.
	ErrNull = fmt.Errorf("%w: null value", ErrBadData)
)

// RowError locates a bad value: file, row group, row (0-based within the
// file) and column. RowGroup or Row is -1 when it does not apply.
type RowError struct {
	File     string
	RowGroup int
	Row      int64
	Column   string
	Msg      string
	Err      error
}

func (e *RowError) Error() string {
	loc := e.File
	if e.RowGroup >= 0 {
		loc += fmt.Sprintf(": row group %d", e.RowGroup)
	}
	if e.Row >= 0 {
		if e.RowGroup >= 0 {
			loc += fmt.Sprintf(", row %d", e.Row)
		} else {
			loc += fmt.Sprintf(": row %d", e.Row)
		}
	}
	if e.Column != "" {
		return fmt.Sprintf("%s: column %q: %s", loc, e.Column, e.Msg)
	}
	return fmt.Sprintf("%s: %s", loc, e.Msg)
}

func (e *RowError) Unwrap() error { return e.Err }
