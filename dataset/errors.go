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

// tooLargeError is an ErrTooLarge with its finding and its remedy.
type tooLargeError struct {
	// Finding is what does not fit, Remedy what to change ("" for none).
	finding, remedy string
}

func (e *tooLargeError) Error() string {
	if e.remedy == "" {
		return e.finding
	}
	return e.finding + ": " + e.remedy
}
func (e *tooLargeError) Unwrap() error { return ErrTooLarge }

// Finding returns the part of a too-large error that says what does not
// fit, without the remedy; other errors whole.
func Finding(err error) string {
	var tl *tooLargeError
	if errors.As(err, &tl) {
		return tl.finding
	}
	return err.Error()
}

// badInputError is an ErrBadInput with its message.
type badInputError struct{ err error }

func (e *badInputError) Error() string   { return e.err.Error() }
func (e *badInputError) Unwrap() []error { return []error{ErrBadInput, e.err} }

func badInputf(format string, args ...any) error {
	return &badInputError{fmt.Errorf(format, args...)}
}
