//go:build !unix

package manual

// watchSignals is what watch --help says about the signals it takes.
// This system has no SIGHUP or SIGUSR1.
const watchSignals = `Ctrl-C stops it (exit 0). This system has no SIGHUP or SIGUSR1: to read the
config file, the IP list and robots.txt again, restart it; it prints no
summary on demand.`
