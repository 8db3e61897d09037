package aside

import (
	"context"
	"errors"
	"testing"
)

// TestDo: the result of f when the run goes on; ctx's error, without
// waiting for f, once it is cancelled.
func TestDo(t *testing.T) {
	v, err := Do(context.Background(), func() int { return 7 })
	if v != 7 || err != nil {
		t.Errorf("Do = %d, %v; want 7, nil", v, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	release := make(chan struct{})
	defer close(release)
	started := make(chan struct{})
	go func() {
		<-started
		cancel()
	}()
	v, err = Do(ctx, func() int {
		close(started)
		<-release // held until the test ends: Do must not wait for it
		return 8
	})
	if v != 0 || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled Do = %d, %v; want 0, context.Canceled", v, err)
	}
	cancel()
	v, err = Do(ctx, func() int { return 9 })
	if v != 0 || !errors.Is(err, context.Canceled) {
		t.Errorf("Do after cancel = %d, %v; want 0, context.Canceled", v, err)
	}
}
