// Package fail marks an error with what it means for the run that met it
// (a bad argument or setting, an input that could not be read whole,
// output that could not be written, findings that call for a nonzero
// exit) and with a hint saying what to do next. The package that finds
// the fault words it; the command line only turns the kind into an exit
// code and prints the hint on its own line.
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
	// Unwritten is output that could not be written: a full disk, a
	// closed pipe (exit 3). Said once, it outranks what the run found.
	Unwritten
	// Findings is a run that finished and found what calls for a nonzero
	// exit (exit 1, or the Code the user chose). The command has said
	// what it found: the error itself is not printed.
	Findings
)

// Error is an error with its kind and hint.
type Error struct {
	Kind Kind
	Err  error
	Hint string
	// Code, when not 0, is the exit code the user chose for this outcome
	// in place of its kind's (emit's --changed-exit).
	Code int
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
	if e := first(err, func(e *Error) bool { return e.Kind != Other }); e != nil {
		return e.Kind
	}
	return Other
}

// HintOf is the hint of the first *Error in err's chain that has one.
func HintOf(err error) string {
	if e := first(err, func(e *Error) bool { return e.Hint != "" }); e != nil {
		return e.Hint
	}
	return ""
}

// CodeOf is the Code of the first *Error in err's chain that has one (0
// when none does).
func CodeOf(err error) int {
	if e := first(err, func(e *Error) bool { return e.Code != 0 }); e != nil {
		return e.Code
	}
	return 0
}

// first is the first *Error in err's chain for which has is true, or nil.
func first(err error, has func(*Error) bool) *Error {
	for err != nil {
		var e *Error
		if !errors.As(err, &e) {
			return nil
		}
		if has(e) {
			return e
		}
		err = e.Err
	}
	return nil
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
