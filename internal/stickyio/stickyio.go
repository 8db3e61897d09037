// Package stickyio keeps the first error of a program's output written
// many times over, so that it is checked once, at the end, and no run can
// end well with part of its output lost.
package stickyio

import (
	"context"
	"io"
	"sync"
)

// Output is a program's output for a run: it writes to W, remembers the
// first write error (a full disk, a closed pipe) while later writes are
// still tried, and refuses every write once Ctx is cancelled, returning
// Refused (Ctx's error when Refused is nil), so that an interrupted run
// prints no more. It is safe for concurrent use.
type Output struct {
	Ctx     context.Context
	W       io.Writer
	Refused error

	mu  sync.Mutex
	err error
}

func (o *Output) Write(p []byte) (int, error) {
	if err := o.Ctx.Err(); err != nil {
		if o.Refused != nil {
			return 0, o.Refused
		}
		return 0, err
	}
	n, err := o.W.Write(p)
	if err != nil {
		o.mu.Lock()
		if o.err == nil {
			o.err = err
		}
		o.mu.Unlock()
	}
	return n, err
}

// Err returns the first write error, or nil.
func (o *Output) Err() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.err
}
