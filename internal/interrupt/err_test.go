package interrupt

import (
	"context"
	"errors"
	"fmt"
	"testing"
)

func TestCause(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	other := errors.New("permission denied")
	if got := Cause(ctx, other); got != other {
		t.Errorf("before cancel: Cause = %v; want the error itself", got)
	}
	if got := Cause(ctx, nil); got != nil {
		t.Errorf("Cause(nil) = %v; want nil", got)
	}
	cancel()
	if got := Cause(ctx, fmt.Errorf("open fifo: %w", context.Canceled)); got != ErrInterrupted {
		t.Errorf("cancelled: Cause = %v; want ErrInterrupted", got)
	}
	// An error of its own, met while the run was being cancelled, is said.
	if got := Cause(ctx, other); got != other {
		t.Errorf("another error after cancel: Cause = %v; want it kept", got)
	}
}

func TestAside(t *testing.T) {
	if v, err := Aside(context.Background(), func() int { return 7 }); v != 7 || err != nil {
		t.Errorf("Aside = %d, %v; want 7, nil", v, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stuck := make(chan struct{})
	defer close(stuck)
	cancel()
	if _, err := Aside(ctx, func() int { <-stuck; return 1 }); err != ErrInterrupted {
		t.Errorf("cancelled: Aside error %v; want ErrInterrupted", err)
	}
}
