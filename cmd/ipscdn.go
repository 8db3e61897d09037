package cmd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/nouns"
	"github.com/lohisoft/lohibot-audit/proxy"
)

// cdnLoader is the loader of the CDN edge lists, caching in dir.
func cdnLoader(env *Env, dir string) *proxy.Loader {
	return &proxy.Loader{CacheDir: dir, Client: env.HTTPClient, UserAgent: "lohibot-audit/" + Version, Now: env.Now, URL: env.cdnURL}
}

// ipsUpdateCDN fetches the CDN edge lists now (`ips update`) and says what
// became of each: a line on stdout per list fetched; for a list that could
// not be had or was refused, the error (exit 3) after the rest is said,
// with what stays in force.
func ipsUpdateCDN(ctx context.Context, env *Env, dir string) error {
	edges := cdnLoader(env, dir).Update(ctx)
	kept := "not cached (--no-cache)"
	if dir != "" {
		kept = "cached"
	}
	var failed []*proxy.EdgeList
	for _, l := range edges.Lists {
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
			fmt.Fprintf(env.Stdout, "cdn %s: 304 not modified: %s, %s, is current; %s\n", l.CDN.Name, l.Source.URL, n, k)
			continue
		}
		fmt.Fprintf(env.Stdout, "cdn %s: %d: %s, %s; %s\n", l.CDN.Name, l.Status, l.Source.URL, n, k)
	}
	if len(failed) == 0 {
		return nil
	}
	return &exitError{code: ExitIncomplete, err: cdnFailures(failed)}
}

// cdnFailures says in one line which CDN lists could not be had, why, and
// what stays in force: each list's cause, or the cause once when all
// failed alike (no network, say).
func cdnFailures(failed []*proxy.EdgeList) error {
	cause := func(l *proxy.EdgeList) string {
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
	inForce := func(l *proxy.EdgeList) string {
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
