package audit

import (
	"fmt"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/fail"
)

// ParseBound reads the value v of the time flag name (--since, --until,
// --at…) as ParseTime does; a value that is neither is a usage error
// that names the flag.
func ParseBound(name, v string, now time.Time) (time.Time, error) {
	t, err := ParseTime(v, now)
	if err != nil {
		return t, fail.Usagef("--%s %q is neither an RFC 3339 time (2026-01-02T15:04:05Z) nor a duration back from now (24h, 7d)", name, v)
	}
	return t, nil
}

// ParseWindow reads --since and --until (ParseBound); a window that ends
// before it starts is a usage error.
func ParseWindow(sinceFlag, untilFlag string, now time.Time) (since, until time.Time, err error) {
	if since, err = ParseBound("since", sinceFlag, now); err != nil {
		return since, until, err
	}
	if until, err = ParseBound("until", untilFlag, now); err != nil {
		return since, until, err
	}
	if !since.IsZero() && !until.IsZero() && !since.Before(until) {
		return since, until, fail.Hinted(
			fmt.Errorf("--since %s is not before --until %s: no request can be in that window", since.UTC().Format(time.RFC3339), until.UTC().Format(time.RFC3339)),
			"--since is where the window starts and --until where it ends: --since 7d --until 1d is from a week ago to a day ago")
	}
	return since, until, nil
}
