package interrupt

import (
	"context"
	"testing"
	"time"
)

func TestWaitReturnsTheRunsCode(t *testing.T) {
	code, forced := Wait(context.Background(), time.Hour, func() int { return 3 })
	if code != 3 || forced {
		t.Errorf("Wait = %d, %v; want 3, false", code, forced)
	}
}

// A run that stops by itself once cancelled keeps its code, however long
// it took within the grace.
func TestWaitGivesACancelledRunItsGrace(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cleaned := false
	defer OnForcedExit(func() { cleaned = true })()
	code, forced := Wait(ctx, time.Hour, func() int {
		cancel()
		<-ctx.Done()
		return 130
	})
	if code != 130 || forced || cleaned {
		t.Errorf("Wait = %d, %v (cleanup run: %v); want 130, false, no cleanup", code, forced, cleaned)
	}
}

// A run that does not stop within the grace is left behind, and the
// cleanups registered then run; one unregistered before does not.
func TestWaitEndsARunThatDoesNotStop(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var ran []string
	undo := OnForcedExit(func() { ran = append(ran, "undone") })
	undo()
	defer OnForcedExit(func() { ran = append(ran, "temp removed") })()
	stuck := make(chan struct{})
	defer close(stuck)
	code, forced := Wait(ctx, 0, func() int {
		cancel()
		<-stuck
		return 0
	})
	if !forced || code != 0 {
		t.Errorf("Wait = %d, %v; want 0, true", code, forced)
	}
	if len(ran) != 1 || ran[0] != "temp removed" {
		t.Errorf("cleanups run: %q; want only [temp removed]", ran)
	}
}
