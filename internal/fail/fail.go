// Package fail marks an error with what it means for the run that met it
// (a bad argument or setting, an input that could not be read whole) and
// with a hint saying what to do next. The package that finds the fault
// words it; the command line only turns the kind into an exit code and
// prints the hint on its own line.
package fail

import (
	"errors"
	"fmt"
	"io/fs"
)

// Kind is what an error means for the run.
type Kind int

const (
	// Other is an error of no particular kind: only its hint is added.
	Other Kind = iota
	// Usage is a bad argument, flag value or configuration: the run did
	// nothing (exit 2).
	Usage
	// Incomplete is an input that could not be read whole or checked
	// (exit 3).
	Incomplete
)

// Error is an error with its kind and hint.
type Error struct {
	Kind Kind
	Err  error
	Hint string
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// New marks err with kind and hint ("" for none).
func New(kind Kind, err error, hint string) error {
	return &Error{Kind: kind, Err: err, Hint: hint}
}

// Usagef is a usage error without a hint.
func Usagef(format string, a ...any) error {
	return &Error{Kind: Usage, Err: fmt.Errorf(format, a...)}
}

// Hinted is a usage error with a hint.
func Hinted(err error, hint string) error { return &Error{Kind: Usage, Err: err, Hint: hint} }

// KindOf is the kind of the first *Error in err's chain that has one
// (Other when none does).
func KindOf(err error) Kind {
	for err != nil {
		var e *Error
		if !errors.As(err, &e) {
			return Other
		}
		if e.Kind != Other {
			return e.Kind
		}
		err = e.Err
	}
	return Other
}

// HintOf is the hint of the first *Error in err's chain that has one.
func HintOf(err error) string {
	for err != nil {
		var e *Error
		if !errors.As(err, &e) {
			return ""
		}
		if e.Hint != "" {
			return e.Hint
		}
		err = e.Err
	}
	return ""
}

// PathCause is the cause of the *fs.PathError in err's chain, without the
// operation and the path (for a message that says the path its own way),
// or err itself when there is none.
func PathCause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
