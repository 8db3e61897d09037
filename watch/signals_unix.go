//go:build unix

package watch

import (
	"os"
	"os/signal"
	"syscall"
)

// ProcessSignals subscribes to the process's SIGHUP (Reload) and SIGUSR1
// (Summary) for Serve; stop ends the subscription.
func ProcessSignals() (sig Signals, stop func()) {
	h := make(chan os.Signal, 1)
	u := make(chan os.Signal, 1)
	signal.Notify(h, syscall.SIGHUP)
	signal.Notify(u, syscall.SIGUSR1)
	return Signals{Reload: h, Summary: u}, func() { signal.Stop(h); signal.Stop(u) }
}
