package audit

import (
	"errors"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/fail"
)

// CheckDurations says what is wrong with the durations of a merge
// (MergeOptions.OptOutGrace and ClockSkew, --opt-out-grace and
// --clock-skew) before any snapshot is read: neither may be negative.
func CheckDurations(optOutGrace, clockSkew time.Duration) error {
	if optOutGrace < 0 {
		return fail.Usagef("--opt-out-grace %s: give a duration of 0 or more, such as 48h", optOutGrace)
	}
	if clockSkew < 0 {
		return fail.Usagef("--clock-skew %s: give a duration of 0 or more, such as 1s", clockSkew)
	}
	return nil
}

// CheckSnapshotArgs says what is wrong with the snapshots a merge is
// given (its FILE arguments) before any is read: there must be one at
// least, and each is a file, not standard input ("-").
func CheckSnapshotArgs(files []string) error {
	if len(files) == 0 {
		return fail.Hinted(errors.New("no snapshots given"),
			"name the files 'lohibot-audit logs --snapshot FILE' wrote on each server")
	}
	for _, name := range files {
		if name == "-" {
			return fail.Usagef("merge reads snapshots from files, not from standard input: save it to a file first")
		}
	}
	return nil
}

// SnapshotServer is the server a snapshot is of: the name given
// (--server-name), else this host's name (hostname: os.Hostname). A host
// whose name cannot be told is a usage error.
func SnapshotServer(given string, hostname func() (string, error)) (string, error) {
	if given != "" {
		return given, nil
	}
	name, err := hostname()
	if err != nil || name == "" {
		return "", fail.Usagef("cannot tell this host's name for the --snapshot (%v): give --server-name NAME", err)
	}
	return name, nil
}
