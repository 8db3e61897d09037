package proxy

import (
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/nouns"
)

// Updated says what became of each list fetched now (`ips update`),
// cached in dir ("" with --no-cache): a line per list fetched and, when
// lists could not be had or were refused, one error saying which, why and
// what stays in force.
func (e *Edges) Updated(dir string) (lines []string, err error) {
	kept := "not cached (--no-cache)"
	if dir != "" {
		kept = "cached"
	}
	var failed []*EdgeList
	for _, l := range e.Lists {
		if !l.Source.Fetch {
			continue
		}
		if l.Err != nil {
			failed = append(failed, l)
			continue
		}
		k := kept
		if dir != "" && !l.Saved {
			k = "not cached"
		}
		n := nouns.Count(len(l.Prefixes), "prefix", "prefixes")
		if l.Status == 304 {
			lines = append(lines, fmt.Sprintf("cdn %s: 304 not modified: %s, %s, is current; %s", l.CDN.Name, l.Source.URL, n, k))
			continue
		}
		lines = append(lines, fmt.Sprintf("cdn %s: %d: %s, %s; %s", l.CDN.Name, l.Status, l.Source.URL, n, k))
	}
	if len(failed) == 0 {
		return lines, nil
	}
	return lines, updateFailures(failed)
}

// updateFailures says in one line which lists could not be had, why, and
// what stays in force: each list's cause, or the cause once when all
// failed alike (no network, say).
func updateFailures(failed []*EdgeList) error {
	cause := func(l *EdgeList) string {
		c := strings.ReplaceAll(strings.TrimPrefix(l.Err.Error(), "cdn list "+l.Source.URL+": "), l.Source.URL+" ", "")
		var ne net.Error
		if errors.As(l.Err, &ne) {
			// A network error names the host: its last words are the
			// cause ("no such host", "connection refused").
			if i := strings.LastIndex(c, ": "); i >= 0 {
				c = c[i+2:]
			}
		}
		return c
	}
	inForce := func(l *EdgeList) string {
		if l.Snapshot {
			return "the built-in snapshot of " + l.AsOf.Format(time.DateOnly)
		}
		return "the copy cached " + l.Fetched.UTC().Format(time.RFC3339)
	}
	if len(failed) == 1 {
		l := failed[0]
		return fmt.Errorf("cdn %s: %v; %s stays in force", l.CDN.Name, l.Err, inForce(l))
	}
	same := true
	for _, l := range failed[1:] {
		same = same && cause(l) == cause(failed[0])
	}
	var parts []string
	for _, l := range failed {
		p := l.CDN.Name
		if !same {
			p += " " + l.Source.URL + " (" + cause(l) + ")"
		}
		p += ": " + inForce(l)
		if !slices.Contains(parts, p) {
			parts = append(parts, p)
		}
	}
	msg := fmt.Sprintf("cdn: %d lists not fetched", len(failed))
	if same {
		msg += " (" + cause(failed[0]) + ")"
	}
	return fmt.Errorf("%s; in force instead: %s", msg, strings.Join(parts, "; "))
}
