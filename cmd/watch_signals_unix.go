//go:build unix

package cmd

// watchSignalHelp is what watch --help says about the signals it takes.
const watchSignalHelp = `SIGTERM and SIGINT stop it (exit 0); SIGHUP reloads the config file, the IP
list and robots.txt; SIGUSR1 prints a summary line on stderr.`
