package render

import (
	"io"
	"time"

	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/lohisoft/lohibot-audit/proxy"
)

// cdnListData is one CDN edge list as `ips show --cdn --format json`
// prints it.
type cdnListData struct {
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

// CDNLists is what `ips show --cdn` prints: each CDN edge list in force,
// where it came from and its age (SPEC §13).
type CDNLists struct {
	lists []cdnListData
	now   time.Time
}

// NewCDNLists describes the CDN edge lists in force at now.
func NewCDNLists(edges *proxy.Edges, now time.Time) *CDNLists {
	d := &CDNLists{now: now}
	for _, l := range edges.Lists {
		out := cdnListData{CDN: l.CDN.Name, Source: l.Source.URL, Snapshot: l.Snapshot, Prefixes: []string{}}
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

func (d *CDNLists) Data() any { return d.lists }

func (d *CDNLists) WriteCSV(w io.Writer) error {
	return WriteCSV(w, []string{"cdn", "prefix"}, func(yield func([]string) bool) {
		for _, l := range d.lists {
			for _, p := range l.Prefixes {
				if !yield([]string{l.CDN, p}) {
					return
				}
			}
		}
	})
}

func (d *CDNLists) WriteText(t *Text) error {
	for i, l := range d.lists {
		if i > 0 {
			t.Printf("\n")
		}
		t.Printf("cdn:      %s\n", l.CDN)
		t.Printf("source:   %s\n", parse.EscapeControl(l.Source))
		age := Age(time.Duration(l.AgeSeconds) * time.Second)
		switch {
		case l.Snapshot && proxy.LookupCDN(l.CDN) != nil && !cdnListFetched(l):
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

// cdnListFetched says whether l's list is published to fetch.
func cdnListFetched(l cdnListData) bool {
	for _, s := range proxy.LookupCDN(l.CDN).Sources {
		if s.URL == l.Source {
			return s.Fetch
		}
	}
	return false
}
