//go:build unix

package cmd

import (
	"os"
	"os/signal"
	"syscall"
)

// watchSignalHelp is what watch --help says about the signals it takes.
const watchSignalHelp = `SIGTERM and SIGINT stop it (exit 0); SIGHUP reloads the config file, the IP
list and robots.txt; SIGUSR1 prints a summary line on stderr.`

// processWatchSignals subscribes to the process's SIGHUP and SIGUSR1.
func processWatchSignals() (hup, usr1 <-chan os.Signal, stop func()) {
	h := make(chan os.Signal, 1)
	u := make(chan os.Signal, 1)
	signal.Notify(h, syscall.SIGHUP)
	signal.Notify(u, syscall.SIGUSR1)
	return h, u, func() { signal.Stop(h); signal.Stop(u) }
}
