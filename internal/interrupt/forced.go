package interrupt

import (
	"context"
	"sync"
	"time"
)

// forced holds what must be undone when a run is ended without having
// stopped by itself: temporary files of a write under way.
var forced struct {
	sync.Mutex
	next int
	fns  map[int]func()
}

// OnForcedExit registers f to run if Wait must end the program while its
// run is still going; the returned func unregisters it.
func OnForcedExit(f func()) (unregister func()) {
	forced.Lock()
	defer forced.Unlock()
	if forced.fns == nil {
		forced.fns = map[int]func(){}
	}
	id := forced.next
	forced.next++
	forced.fns[id] = f
	return func() {
		forced.Lock()
		defer forced.Unlock()
		delete(forced.fns, id)
	}
}

// runForcedExitCleanups runs every registered cleanup.
func runForcedExitCleanups() {
	forced.Lock()
	defer forced.Unlock()
	for _, f := range forced.fns {
		f()
	}
}

// Wait runs run in a goroutine of its own and returns the code it
// returns. Once ctx is cancelled, it gives run grace to stop by itself;
// should it not (a read stuck in the kernel), Wait runs the cleanups
// registered with OnForcedExit and returns with forced set, leaving run
// behind.
func Wait(ctx context.Context, grace time.Duration, run func() int) (code int, forced bool) {
	done := make(chan int, 1)
	go func() { done <- run() }()
	select {
	case code := <-done:
		return code, false
	case <-ctx.Done():
	}
	timer := time.NewTimer(grace)
	defer timer.Stop()
	select {
	case code := <-done:
		return code, false
	case <-timer.C:
		runForcedExitCleanups()
		return 0, true
	}
}
