//go:build !unix

package watch

// ProcessSignals returns Signals that never deliver: this system has no
// SIGHUP or SIGUSR1.
func ProcessSignals() (sig Signals, stop func()) { return Signals{}, func() {} }
