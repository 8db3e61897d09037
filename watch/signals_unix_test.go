//go:build unix

package watch

import (
	"os"
	"syscall"
	"testing"
	"time"
)

// TestProcessSignals: SIGHUP reaches Reload and SIGUSR1 Summary, sent to
// this process.
func TestProcessSignals(t *testing.T) {
	sig, stop := ProcessSignals()
	defer stop()
	for _, tc := range []struct {
		s  syscall.Signal
		ch <-chan os.Signal
	}{{syscall.SIGHUP, sig.Reload}, {syscall.SIGUSR1, sig.Summary}} {
		if err := syscall.Kill(os.Getpid(), tc.s); err != nil {
			t.Fatal(err)
		}
		select {
		case got := <-tc.ch:
			if got != tc.s {
				t.Errorf("got %v, want %v", got, tc.s)
			}
		case <-time.After(hang):
			t.Fatalf("%v did not arrive", tc.s)
		}
	}
}
