package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/nouns"
	"github.com/lohisoft/lohibot-audit/proxy"
	"github.com/lohisoft/lohibot-audit/render"
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

// ipsCDNList is one CDN edge list as `ips show --cdn --format json`
// prints it.
type ipsCDNList struct {
	CDN    string `json:"cdn" yaml:"cdn"`
	Source string `json:"source" yaml:"source"`
	// Snapshot says the built-in snapshot is in force, dated AsOf;
	// otherwise the copy fetched at Fetched.
	Snapshot   bool       `json:"snapshot" yaml:"snapshot"`
	AsOf       *time.Time `json:"as_of,omitempty" yaml:"as_of,omitempty"`
	Fetched    *time.Time `json:"fetched,omitempty" yaml:"fetched,omitempty"`
	AgeSeconds int64      `json:"age_seconds" yaml:"age_seconds"`
	Prefixes   []string   `json:"prefixes" yaml:"prefixes"`
}

// ipsCDNDoc is what `ips show --cdn` prints.
type ipsCDNDoc struct {
	lists []ipsCDNList
	now   time.Time
}

// ipsShowCDN describes the CDN edge lists in force.
func ipsShowCDN(edges *proxy.Edges, now time.Time) *ipsCDNDoc {
	d := &ipsCDNDoc{now: now}
	for _, l := range edges.Lists {
		out := ipsCDNList{CDN: l.CDN.Name, Source: l.Source.URL, Snapshot: l.Snapshot, Prefixes: []string{}}
		since := l.Since().UTC()
		if l.Snapshot {
			out.AsOf = &since
		} else {
			out.Fetched = &since
		}
		if now.After(since) {
			out.AgeSeconds = int64(now.Sub(since) / time.Second)
		}
		for _, p := range l.Prefixes {
			out.Prefixes = append(out.Prefixes, p.String())
		}
		d.lists = append(d.lists, out)
	}
	return d
}

func (d *ipsCDNDoc) Data() any { return d.lists }

func (d *ipsCDNDoc) WriteCSV(w io.Writer) error {
	return render.WriteCSV(w, []string{"cdn", "prefix"}, func(yield func([]string) bool) {
		for _, l := range d.lists {
			for _, p := range l.Prefixes {
				if !yield([]string{l.CDN, p}) {
					return
				}
			}
		}
	})
}

func (d *ipsCDNDoc) WriteText(t *render.Text) error {
	for i, l := range d.lists {
		if i > 0 {
			t.Printf("\n")
		}
		t.Printf("cdn:      %s\n", l.CDN)
		t.Printf("source:   %s\n", sanitize(l.Source))
		age := render.Age(time.Duration(l.AgeSeconds) * time.Second)
		switch {
		case l.Snapshot && proxy.LookupCDN(l.CDN) != nil && !cdnFetched(l):
			t.Printf("in force: the ranges documented as of %s (%s ago)\n", l.AsOf.Format(time.DateOnly), age)
		case l.Snapshot:
			t.Printf("in force: the built-in snapshot of %s (%s ago; 'lohibot-audit ips update' fetches the list)\n", l.AsOf.Format(time.DateOnly), age)
		default:
			t.Printf("in force: fetched %s (%s ago)\n", l.Fetched.Format(time.RFC3339), age)
		}
		t.Printf("prefixes: %d\n", len(l.Prefixes))
	}
	return nil
}

// cdnFetched says whether l's list is published to fetch.
func cdnFetched(l ipsCDNList) bool {
	for _, s := range proxy.LookupCDN(l.CDN).Sources {
		if s.URL == l.Source {
			return s.Fetch
		}
	}
	return false
}
