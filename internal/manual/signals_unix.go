//go:build unix

package manual

// watchSignals is what watch --help says about the signals it takes.
const watchSignals = `SIGTERM and SIGINT stop it (exit 0); SIGHUP reloads the config file, the IP
list and robots.txt; SIGUSR1 prints a summary line on stderr.`
