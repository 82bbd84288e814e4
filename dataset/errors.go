package dataset

import (
	"errors"
	"fmt"
)

// ErrTooLarge marks data that would need more memory than the memory limit
// ([Options.MaxMemory]) allows.
var ErrTooLarge = errors.New("dataset: input too large for the memory limit")

// ErrInMemory marks a request that needs the rows in memory made of data
// opened out of core.
var ErrInMemory = errors.New("dataset: the data are not held in memory")

// ErrBadInput marks data that do not fit what the caller asked of them (a
// policy whose map or actions differ from the data's, quantile bins whose
// cut points coincide).
var ErrBadInput = errors.New("dataset: bad input")

// OptionError is a setting of [Options] (or of a call) that cannot be met:
// Option names the setting by its field name, Value is the value given.
// Its message is in the library's terms; a command line names its own
// flag instead (see Option).
type OptionError struct {
	Option string
	Value  string
	Err    error
}

func (e *OptionError) Error() string {
	if e.Value != "" {
		return fmt.Sprintf("dataset: %s %s: %v", e.Option, e.Value, e.Err)
	}
	return fmt.Sprintf("dataset: %s: %v", e.Option, e.Err)
}

func (e *OptionError) Unwrap() error { return e.Err }

func optionErr(option, value, format string, args ...any) error {
	return &OptionError{Option: option, Value: value, Err: fmt.Errorf(format, args...)}
}

// ErrNullsInMemory is why a null policy other than traj.NullsError is
// refused (an [OptionError] on Nulls): it needs the whole input in memory,
// and the input does not fit in the memory limit.
var ErrNullsInMemory = errors.New("a null policy needs the whole input in memory, which does not fit in the memory limit: raise it, or drop the rows with NULLs before reading")

// TooLargeError is an [ErrTooLarge]: what does not fit in the memory
// limit, and what to change.
type TooLargeError struct {
	// What says what needs more memory than the limit, with the estimate.
	What string
	// Limit is the memory limit as given ([Limit] Name).
	Limit string
	// Remedy says what to change.
	Remedy Remedy
}

// Finding says what does not fit, without the remedy.
func (e *TooLargeError) Finding() string {
	return fmt.Sprintf("%s, more than the memory limit %s allows", e.What, e.Limit)
}

func (e *TooLargeError) Error() string { return e.Finding() + ": " + e.Remedy.String() }
func (e *TooLargeError) Unwrap() error { return ErrTooLarge }

// Remedy is what to change when the data do not fit in the memory limit.
type Remedy int

const (
	// RaiseLimit: raise the memory limit.
	RaiseLimit Remedy = iota
	// RaiseLimitOrPrepare: raise the memory limit, or make the input
	// smaller (with parquetio's rewrite, sorted by step).
	RaiseLimitOrPrepare
	// FewerFeatures: a feature map with fewer features, or a higher
	// memory limit.
	FewerFeatures
	// FewerRows: simulate fewer sites or trajectories, or raise the
	// memory limit.
	FewerRows
)

func (r Remedy) String() string {
	switch r {
	case RaiseLimitOrPrepare:
		return "raise the memory limit (0 = no limit) if the machine has the memory, or shrink the input first (prepare it)"
	case FewerFeatures:
		return "use fewer features (fewer tabular states, fewer state columns) or raise the memory limit (0 = no limit) if the machine has the memory"
	case FewerRows:
		return "simulate fewer sites or trajectories, or raise the memory limit (0 = no limit) if the machine has the memory"
	}
	return "raise the memory limit (0 = no limit) if the machine has the memory"
}

// InMemoryError is an [ErrInMemory]: Need names what needs the rows in
// memory.
type InMemoryError struct{ Need string }

func (e *InMemoryError) Error() string { return e.Need + " needs the data in memory" }
func (e *InMemoryError) Unwrap() error { return ErrInMemory }

// badInputError is an ErrBadInput with its message.
type badInputError struct{ err error }

func (e *badInputError) Error() string   { return e.err.Error() }
func (e *badInputError) Unwrap() []error { return []error{ErrBadInput, e.err} }

func badInputf(format string, args ...any) error {
	return &badInputError{fmt.Errorf(format, args...)}
}
