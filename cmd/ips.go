package cmd

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/internal/ipfmt"
	"github.com/lohisoft/lohibot-audit/internal/nouns"
	"github.com/lohisoft/lohibot-audit/render"
	"github.com/lohisoft/lohibot-audit/verify"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// ipsShowOutput is what `ips show --format json|yaml` prints.
type ipsShowOutput struct {
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

func newIPsCmd(env *Env) *cobra.Command {
	show := newIPsShowCmd(env)
	c := &cobra.Command{
		Use:   "ips [update|show]",
		Short: "Fetch and cache the crawler's IP list; show the list in force",
		Long: `The crawler's operator publishes its addresses at
https://lohisoft.com/bot/ips.json. Other commands fetch it when their cached
copy is older than 6 hours (revalidating with ETag/Last-Modified) and keep
the built-in list (79.139.58.98, 79.139.58.121) as the last fallback.

  ips update   fetch the list now and cache it
  ips show     print the list in force, where it came from and its age
               (the default; never uses the network)`,
		Args: cobra.NoArgs,
		RunE: show.RunE,
	}
	c.Flags().AddFlagSet(show.Flags())
	c.AddCommand(show, newIPsUpdateCmd(env))
	return c
}

// addIPsFlags adds the IP-list flags; the DNS ones do not apply here.
func addIPsFlags(f *pflag.FlagSet, o *auditOptions) {
	addIdentityFlags(f, o)
	for _, name := range []string{"resolver", "dns-timeout", "dns-retries"} {
		f.MarkHidden(name)
	}
	addConfigFlag(f, o)
}

func newIPsShowCmd(env *Env) *cobra.Command {
	o := &auditOptions{}
	var crawlers []string
	var cdn bool
	c := &cobra.Command{
		Use:   "show",
		Short: "Print the IP list in force, its source and age",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := identityCheckFlags(o); err != nil {
				return err
			}
			if o.Format == "" {
				o.Format = "table"
			}
			format, err := o.documentFormat(env)
			if err != nil {
				return err
			}
			if cdn {
				if len(crawlers) > 0 {
					return usageError("--cdn shows the CDN edge lists, not a crawler's: it takes no --crawler")
				}
				dir, warn := identityCacheDir(env, o)
				if warn != "" {
					warnf(env, "%s", warn)
				}
				edges, warnings := cdnLoader(env, dir).Load()
				for _, w := range warnings {
					warnf(env, "%s", w)
				}
				if err := format.WriteDocument(env.Stdout, ipsShowCDN(edges, env.Now()), outputOptions(env)); err != nil {
					return writeFailed("the lists", err)
				}
				return nil
			}
			profiles, override, err := ipsProfiles(o, crawlers)
			if err != nil {
				return err
			}
			dir, warn := identityCacheDir(env, o)
			if warn != "" {
				warnf(env, "%s", warn)
			}
			loader := identityLoader(env, o, dir, ipListNoFetch)
			var docs ipsShowDocs
			for _, p := range profiles {
				ll, err := loader.Load(c.Context(), p, override)
				if err != nil {
					return listFileError(err)
				}
				for _, w := range ll.Warnings {
					warnf(env, "%s", w)
				}
				d := ipsShow(ll, env.Now())
				if len(crawlers) > 0 {
					d.out.Crawler = p.Name
				}
				docs = append(docs, d)
			}
			var doc render.Document = docs
			if len(docs) == 1 {
				doc = docs[0]
			}
			if err := format.WriteDocument(env.Stdout, doc, outputOptions(env)); err != nil {
				return writeFailed("the list", err)
			}
			return nil
		},
	}
	addIPsFlags(c.Flags(), o)
	addCrawlerFlag(c.Flags(), &crawlers)
	c.Flags().StringVar(&o.Format, "format", "", "output format: table, json, yaml, csv (the prefixes) or markdown (default table)")
	c.Flags().BoolVar(&cdn, "cdn", false, "show the CDN edge lists in force instead (see --trusted-proxy): where each came from and its age")
	return c
}

// ipsShowDoc is what ips show prints.
type ipsShowDoc struct {
	out   ipsShowOutput
	src   string    // the source for people
	since time.Time // when the list was fetched, written or made
	now   time.Time
}

// ipsShow describes the list in force of one crawler.
func ipsShow(ll *verify.Lists, now time.Time) *ipsShowDoc {
	l := ll.List
	cached, stale := len(ll.Loads) > 0, false
	for _, ld := range ll.Loads {
		cached = cached && ld.Cached
		stale = stale || ld.Stale
	}
	out := ipsShowOutput{Source: l.Source, Cached: cached, Stale: stale, Prefixes: []string{}, Warnings: ll.Warnings}
	var since time.Time
	switch {
	case !l.Fetched.IsZero():
		t := l.Fetched.UTC()
		out.Fetched, since = &t, t
	case l.Source != verify.IPListSourceBuiltin:
		if fi, err := os.Stat(l.Source); err == nil {
			since = fi.ModTime()
		}
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
	case l.Source == verify.IPListSourceBuiltin && len(ll.Loads) > 0 && ipListIsURL(ll.Loads[0].Source):
		var urls []string
		for _, ld := range ll.Loads {
			urls = append(urls, ld.Source)
		}
		src += " (no cached copy of " + strings.Join(urls, ", ") + "; run 'lohibot-audit ips update')"
	case l.Source == verify.IPListSourceBuiltin:
		src += " (from the crawler's documentation)"
	}
	return &ipsShowDoc{out: out, src: src, since: since, now: now}
}

func (d *ipsShowDoc) Data() any { return d.out }

func (d *ipsShowDoc) WriteCSV(w io.Writer) error {
	return render.WriteCSV(w, []string{"prefix"}, func(yield func([]string) bool) {
		for _, p := range d.out.Prefixes {
			if !yield([]string{p}) {
				return
			}
		}
	})
}

func (d *ipsShowDoc) WriteText(t *render.Text) error {
	out, since, now := d.out, d.since, d.now
	if out.Crawler != "" {
		t.Printf("crawler:  %s\n", out.Crawler)
	}
	t.Printf("source:   %s\n", sanitize(d.src))
	age := "-"
	if !since.IsZero() {
		age = ipAge(now.Sub(since))
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

// ipsShowDocs is what ips show prints for several crawlers: a list of
// their objects, CSV rows with the crawler first, their texts one after
// another.
type ipsShowDocs []*ipsShowDoc

func (ds ipsShowDocs) Data() any {
	out := make([]ipsShowOutput, len(ds))
	for i, d := range ds {
		out[i] = d.out
	}
	return out
}

func (ds ipsShowDocs) WriteCSV(w io.Writer) error {
	return render.WriteCSV(w, []string{"crawler", "prefix"}, func(yield func([]string) bool) {
		for _, d := range ds {
			for _, p := range d.out.Prefixes {
				if !yield([]string{d.out.Crawler, p}) {
					return
				}
			}
		}
	})
}

func (ds ipsShowDocs) WriteText(t *render.Text) error {
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

// ipsProfiles resolves --crawler, and the --ip-list that replaces their
// lists ("" for their own).
func ipsProfiles(o *auditOptions, crawlers []string) ([]*crawler.Profile, string, error) {
	profiles, err := resolveCrawlers(crawlers)
	if err != nil {
		return nil, "", err
	}
	override, err := identityListOverride(o, profiles)
	return profiles, override, err
}

func newIPsUpdateCmd(env *Env) *cobra.Command {
	o := &auditOptions{}
	var crawlers []string
	c := &cobra.Command{
		Use:   "update",
		Short: "Fetch the IP list now and cache it",
		Long: `update fetches the list named by --ip-list (default
https://lohisoft.com/bot/ips.json) now, revalidating the cached copy, and
says what happened: 200 (a new list, cached), 304 (the cached list is
current) or rejected (the cached or built-in list stays in force; exit 3).
It fetches the CDNs' edge lists too (Cloudflare, Fastly, CloudFront,
Bunny; see --trusted-proxy), which runs then read from the cache: a list
that cannot be had leaves its cached copy, else the built-in snapshot, in
force (exit 3).`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := identityCheckFlags(o); err != nil {
				return err
			}
			profiles, override, err := ipsProfiles(o, crawlers)
			if err != nil {
				return err
			}
			switch {
			case o.Offline:
				return usageError("ips update fetches the list: it cannot run with --offline")
			case override != "" && !ipListIsURL(override):
				return usageError("--ip-list %s is a file: there is nothing to fetch", override)
			}
			dir, warn := identityCacheDir(env, o)
			if warn != "" {
				warnf(env, "%s", warn)
			}
			loader := identityLoader(env, o, dir, ipListFetchNow)
			var failed error
			for _, p := range profiles {
				ll, err := loader.Load(c.Context(), p, override)
				if err != nil {
					return listFileError(err)
				}
				if err := ipsUpdateReport(env, p, len(crawlers) > 0, ll, dir); err != nil && failed == nil {
					failed = err
				}
			}
			if err := ipsUpdateCDN(c.Context(), env, dir); err != nil {
				if failed == nil {
					failed = err
				} else {
					warnf(env, "%v", err)
				}
			}
			return failed
		},
	}
	addIPsFlags(c.Flags(), o)
	addCrawlerFlag(c.Flags(), &crawlers)
	return c
}

// ipsUpdateReport says what became of each list of p fetched now: a line
// on stdout per list fetched, the other warnings on stderr, and for a list
// that could not be had the error (exit 3) after the rest is said.
func ipsUpdateReport(env *Env, p *crawler.Profile, named bool, ll *verify.Lists, dir string) error {
	fetchWarnings := map[string]bool{}
	for _, ld := range ll.Loads {
		fetchWarnings[ld.FetchWarning] = true
	}
	for _, w := range ll.Warnings {
		if !fetchWarnings[w] {
			warnf(env, "%s", w)
		}
	}
	prefix := ""
	if named {
		prefix = p.Name + ": "
	}
	var failed error
	for _, ld := range ll.Loads {
		if ld.FetchErr != nil {
			what := "the built-in list"
			if ld.Cached {
				what = "the cached list"
			} else if len(verify.BuiltinList(p).Prefixes) == 0 {
				what = "no list (" + p.Name + " has no built-in one)"
			}
			status := "cannot fetch"
			if verify.IsListRejected(ld.FetchErr) {
				status = "rejected"
			}
			err := &exitError{code: ExitIncomplete, err: fmt.Errorf("%s%s: %w; %s stays in force", prefix, status, ld.FetchErr, what)}
			if failed == nil {
				failed = err
			} else {
				warnf(env, "%v", err.err)
			}
			continue
		}
		kept := "not cached (--no-cache)"
		if ld.Saved {
			kept = "cached"
		} else if dir != "" {
			kept = "not cached"
		}
		switch ld.Status {
		case 304:
			fmt.Fprintf(env.Stdout, "%s304 not modified: %s, %s, is current; %s\n", prefix, sanitize(ld.List.Source), nouns.Count(len(ld.List.Prefixes), "prefix", "prefixes"), kept)
		default:
			fmt.Fprintf(env.Stdout, "%s%d: %s, %s; %s\n", prefix, ld.Status, sanitize(ld.List.Source), nouns.Count(len(ld.List.Prefixes), "prefix", "prefixes"), kept)
		}
	}
	return failed
}
