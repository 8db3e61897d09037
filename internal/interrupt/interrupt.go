// Package interrupt catches SIGINT and SIGTERM from the program's first
// moments: its init, which asks for both signals, runs before the
// packages that do the program's work are initialized, so that a signal
// sent while the program starts is neither lost nor left to the default
// action. This matters most for SIGINT: a shell starts its background jobs
// with SIGINT ignored, and a signal that arrives while it is still ignored
// is discarded by the kernel; before this package, the program only asked
// for it once its main function ran, some milliseconds later, and went on
// reading a log to the end (a SIGTERM then killed it outright, without
// its cleanups).
//
// A signal that arrives before the Go runtime starts, or before this
// init, is beyond any program's reach: it takes the default action (the
// program ends, killed by it), or is discarded if it was ignored.
package interrupt

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// caught holds the first SIGINT or SIGTERM received since the program
// started.
var caught = make(chan os.Signal, 1)

func init() { signal.Notify(caught, os.Interrupt, syscall.SIGTERM) }

// Context returns a context that is cancelled by the first SIGINT or
// SIGTERM the program receives, one received before the call included,
// and a function that stops waiting for one. Call it once: the program
// has one run to cancel.
func Context() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	select {
	case <-caught:
		cancel()
		return ctx, cancel
	default:
	}
	go func() {
		select {
		case <-caught:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}
