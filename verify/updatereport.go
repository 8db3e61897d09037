package verify

import (
	"fmt"
	"os"
	"time"

	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/internal/nouns"
)

// Updated says what became of the lists of p fetched now (`ips update`),
// cached in dir ("" with --no-cache): a line per list fetched; the
// warnings that are not about a fetch; and for each list that could not
// be had, an error saying what stays in force. prefix starts each line
// and error ("NAME: " when the run names its crawlers).
func (ll *Lists) Updated(p *crawler.Profile, prefix, dir string) (lines, warnings []string, failed []error) {
	fetchWarnings := map[string]bool{}
	for _, ld := range ll.Loads {
		fetchWarnings[ld.FetchWarning] = true
	}
	for _, w := range ll.Warnings {
		if !fetchWarnings[w] {
			warnings = append(warnings, w)
		}
	}
	for _, ld := range ll.Loads {
		if ld.FetchErr != nil {
			what := "the built-in list"
			if ld.Cached {
				what = "the cached list"
			} else if ld.Snapshot {
				what = "its built-in snapshot of " + ld.List.Snapshot.Format(time.DateOnly)
			} else if len(BuiltinList(p).Prefixes) == 0 {
				what = "no list (" + p.Name + " has no built-in one)"
			}
			status := "cannot fetch"
			if IsListRejected(ld.FetchErr) {
				status = "rejected"
			}
			failed = append(failed, fmt.Errorf("%s%s: %w; %s stays in force", prefix, status, ld.FetchErr, what))
			continue
		}
		kept := "not cached (--no-cache)"
		if ld.Saved {
			kept = "cached"
		} else if dir != "" {
			kept = "not cached"
		}
		n := nouns.Count(len(ld.List.Prefixes), "prefix", "prefixes")
		if ld.Status == 304 {
			lines = append(lines, fmt.Sprintf("%s304 not modified: %s, %s, is current; %s", prefix, ld.List.Source, n, kept))
			continue
		}
		lines = append(lines, fmt.Sprintf("%s%d: %s, %s; %s", prefix, ld.Status, ld.List.Source, n, kept))
	}
	return lines, warnings, failed
}

// FileTime is when the file l was read from was last written, or zero for
// a list that was not read from a file.
func (l *IPList) FileTime() time.Time {
	if !l.Fetched.IsZero() || l.Source == IPListSourceBuiltin || l.Source == IPListSourceNone {
		return time.Time{}
	}
	if fi, err := os.Stat(l.Source); err == nil {
		return fi.ModTime()
	}
	return time.Time{}
}
