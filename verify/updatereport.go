package verify

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/internal/fail"
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

// LoadEach loads the lists of each crawler of profiles in turn (Load),
// --ip-list (override) in place of theirs when given. A list file that
// cannot be read stops it (ListFail), with the lists loaded before it.
func (ld *ListLoader) LoadEach(ctx context.Context, profiles []*crawler.Profile, override string) ([]*Lists, error) {
	var out []*Lists
	for _, p := range profiles {
		ll, err := ld.Load(ctx, p, override)
		if err != nil {
			return out, ListFail(err)
		}
		out = append(out, ll)
	}
	return out, nil
}

// ListsUpdate is what `ips update` says of the lists it fetched.
type ListsUpdate struct {
	// Lines say what became of each list fetched, for standard output.
	Lines []string
	// Warnings are for standard error, in order: each crawler's, and every
	// list that could not be had but the first.
	Warnings []string
	// Failed is the first list that could not be had, an input not had
	// whole (fail.Incomplete), or nil.
	Failed error
}

// UpdateEach fetches the lists of each crawler of profiles now (a loader
// of ListFetchNow), --ip-list (override) in place of theirs when given,
// and says what became of them (Lists.Updated); named starts each line
// and error with its crawler's name. A list file that cannot be read
// stops it (ListFail), with what was said of the lists before it.
func (ld *ListLoader) UpdateEach(ctx context.Context, profiles []*crawler.Profile, override string, named bool) (ListsUpdate, error) {
	var u ListsUpdate
	for _, p := range profiles {
		ll, err := ld.Load(ctx, p, override)
		if err != nil {
			return u, ListFail(err)
		}
		prefix := ""
		if named {
			prefix = p.Name + ": "
		}
		lines, warnings, errs := ll.Updated(p, prefix, ld.CacheDir)
		u.Lines = append(u.Lines, lines...)
		u.Warnings = append(u.Warnings, warnings...)
		for _, err := range errs {
			u.fail(err)
		}
	}
	return u, nil
}

// Add adds what became of other lists fetched after these (the CDN edge
// lists: proxy.Edges.Updated): their lines, and their failure, which is
// the error when no list failed before, else a warning.
func (u *ListsUpdate) Add(lines []string, err error) {
	u.Lines = append(u.Lines, lines...)
	if err != nil {
		u.fail(err)
	}
}

// fail notes a list that could not be had: the first is Failed, the
// others warnings.
func (u *ListsUpdate) fail(err error) {
	if u.Failed == nil {
		u.Failed = fail.New(fail.Incomplete, err, "")
	} else {
		u.Warnings = append(u.Warnings, err.Error())
	}
}
