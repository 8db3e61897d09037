package render

import (
	"io"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/ipfmt"
	"github.com/lohisoft/lohibot-audit/internal/urlarg"
	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/lohisoft/lohibot-audit/verify"
)

// ipListData is the JSON and YAML of an IPListDoc.
type ipListData struct {
	// Crawler is set when --crawler names the crawlers shown.
	Crawler      string     `json:"crawler,omitempty" yaml:"crawler,omitempty"`
	Source       string     `json:"source" yaml:"source"`
	Cached       bool       `json:"cached" yaml:"cached"`
	Fetched      *time.Time `json:"fetched,omitempty" yaml:"fetched,omitempty"`
	AgeSeconds   int64      `json:"age_seconds" yaml:"age_seconds"`
	Stale        bool       `json:"stale" yaml:"stale"`
	CreationTime *time.Time `json:"creation_time,omitempty" yaml:"creation_time,omitempty"`
	Prefixes     []string   `json:"prefixes" yaml:"prefixes"`
	Warnings     []string   `json:"warnings,omitempty" yaml:"warnings,omitempty"`
}

// IPListDoc is what `ips show` prints of one crawler's IP list in force:
// its source (and whether it is a cached copy, or stale), its age and
// creation time, and its prefixes.
type IPListDoc struct {
	out   ipListData
	src   string    // the source for people
	since time.Time // when the list was fetched, written or made
	now   time.Time
}

// NewIPListDoc describes the list in force of one crawler, as ll loaded
// it: crawler names it when the crawlers are named (--crawler), written is
// when a list file was last written (its age when it was not fetched),
// now is when it is shown.
func NewIPListDoc(ll *verify.Lists, crawler string, written, now time.Time) *IPListDoc {
	l := ll.List
	cached, stale := len(ll.Loads) > 0, false
	for _, ld := range ll.Loads {
		cached = cached && ld.Cached
		stale = stale || ld.Stale
	}
	out := ipListData{Crawler: crawler, Source: l.Source, Cached: cached, Stale: stale, Prefixes: []string{}, Warnings: ll.Warnings}
	var since time.Time
	switch {
	case !l.Fetched.IsZero():
		t := l.Fetched.UTC()
		out.Fetched, since = &t, t
	case !l.Snapshot.IsZero():
		since = l.Snapshot // a built-in snapshot: as old as its date
	case l.Source != verify.IPListSourceBuiltin:
		since = written
	default:
		since = l.CreationTime
	}
	if !since.IsZero() && now.After(since) {
		out.AgeSeconds = int64(now.Sub(since) / time.Second)
	}
	if !l.CreationTime.IsZero() {
		t := l.CreationTime.UTC()
		out.CreationTime = &t
	}
	for _, p := range l.Prefixes {
		out.Prefixes = append(out.Prefixes, ipfmt.Prefix(p))
	}
	src := l.Source
	switch {
	case cached:
		src += " (cached)"
	case l.Source == verify.IPListSourceBuiltin && len(ll.Loads) > 0 && urlarg.IsURL(ll.Loads[0].Source):
		var urls []string
		for _, ld := range ll.Loads {
			urls = append(urls, ld.Source)
		}
		src += " (no cached copy of " + strings.Join(urls, ", ") + "; run 'lohibot-audit ips update')"
	case l.Source == verify.IPListSourceBuiltin:
		src += " (from the crawler's documentation)"
	}
	return &IPListDoc{out: out, src: src, since: since, now: now}
}

func (d *IPListDoc) Data() any { return d.out }

func (d *IPListDoc) WriteCSV(w io.Writer) error {
	return WriteCSV(w, []string{"prefix"}, func(yield func([]string) bool) {
		for _, p := range d.out.Prefixes {
			if !yield([]string{p}) {
				return
			}
		}
	})
}

func (d *IPListDoc) WriteText(t *Text) error {
	out, since, now := d.out, d.since, d.now
	if out.Crawler != "" {
		t.Printf("crawler:  %s\n", out.Crawler)
	}
	t.Printf("source:   %s\n", parse.EscapeControl(d.src))
	age := "-"
	if !since.IsZero() {
		age = Age(now.Sub(since))
	}
	switch {
	case out.Fetched != nil:
		stale := ""
		if out.Stale {
			stale = "; the next run fetches it again"
		}
		t.Printf("fetched:  %s (%s ago%s)\n", out.Fetched.Format(time.RFC3339), age, stale)
	default:
		t.Printf("age:      %s\n", age)
	}
	created := "-"
	if out.CreationTime != nil {
		created = out.CreationTime.Format(time.RFC3339)
	}
	t.Printf("created:  %s\n", created)
	t.Printf("prefixes: %d\n", len(out.Prefixes))
	for _, p := range out.Prefixes {
		t.Printf("  %s\n", p)
	}
	return nil
}

// NewIPListDocs describes the lists in force of the crawlers, as lists
// loaded them (NewIPListDoc, each written when its file was): the one
// list's document for one crawler, else an IPListDocs. names are the
// crawlers' names when they are named (--crawler), else nil.
func NewIPListDocs(lists []*verify.Lists, names []string, now time.Time) Document {
	docs := make(IPListDocs, len(lists))
	for i, ll := range lists {
		name := ""
		if names != nil {
			name = names[i]
		}
		docs[i] = NewIPListDoc(ll, name, ll.List.FileTime(), now)
	}
	if len(docs) == 1 {
		return docs[0]
	}
	return docs
}

// IPListDocs is what `ips show` prints for several crawlers: a list of
// their objects, CSV rows with the crawler first, their texts one after
// another.
type IPListDocs []*IPListDoc

func (ds IPListDocs) Data() any {
	out := make([]ipListData, len(ds))
	for i, d := range ds {
		out[i] = d.out
	}
	return out
}

func (ds IPListDocs) WriteCSV(w io.Writer) error {
	return WriteCSV(w, []string{"crawler", "prefix"}, func(yield func([]string) bool) {
		for _, d := range ds {
			for _, p := range d.out.Prefixes {
				if !yield([]string{d.out.Crawler, p}) {
					return
				}
			}
		}
	})
}

func (ds IPListDocs) WriteText(t *Text) error {
	for i, d := range ds {
		if i > 0 {
			t.Printf("\n")
		}
		if err := d.WriteText(t); err != nil {
			return err
		}
	}
	return nil
}
