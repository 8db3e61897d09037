package audit

import (
	"errors"
	"time"

	"github.com/lohisoft/lohibot-audit/crawler"
)

// ErrBadTime means a time given on the command line (--since, --until,
// --opted-out) is neither a time nor a duration back from now.
var ErrBadTime = errors.New("neither an RFC 3339 time nor a duration back from now")

// ParseTime reads a time as --since and --until take it: RFC 3339 (or
// without its zone, or a bare date, read as UTC), or a duration back from
// now in Go's units or with days (24h, 7d, 1d12h; a sign is ignored). ""
// is the zero time.
func ParseTime(v string, now time.Time) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if d, err := crawler.ParseDuration(v); err == nil {
		if d < 0 {
			d = -d
		}
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t, nil
		}
	}
	return time.Time{}, ErrBadTime
}
