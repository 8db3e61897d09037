package cmd

import (
	"fmt"
	"io"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/crawler"
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
	c := &cobra.Command{
		Use:   "show",
		Short: "Print the IP list in force, its source and age",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := loadConfig(env, c, o.Config); err != nil {
				return err
			}
			if err := identityCheckFlags(o); err != nil {
				return err
			}
			format := o.Format
			switch format {
			case "":
				format = "table"
			case "table", "json", "yaml", "csv", "markdown":
			default:
				return usageError("unknown --format %q for ips show: use table, json, yaml, csv or markdown", o.Format)
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
			var shown []ipsShowOutput
			var tables []string
			for _, p := range profiles {
				ll, err := loader.Load(c.Context(), p, override)
				if err != nil {
					return listFileError(err)
				}
				for _, w := range ll.Warnings {
					warnf(env, "%s", w)
				}
				out, text := ipsShow(o, ll, env.Now())
				if len(crawlers) > 0 {
					out.Crawler = p.Name
					text = "crawler:  " + p.Name + "\n" + text
				}
				shown = append(shown, out)
				tables = append(tables, text)
			}
			if err := ipsShowWrite(stdout(env), format, shown, tables); err != nil {
				return writeFailed("the list", err)
			}
			return nil
		},
	}
	addIPsFlags(c.Flags(), o)
	addCrawlerFlag(c.Flags(), &crawlers)
	c.Flags().StringVar(&o.Format, "format", "", "output format: table, json, yaml, csv (the prefixes) or markdown (default table)")
	return c
}

// ipsShow describes the list in force of one crawler: as the JSON/YAML
// object, and as the text of the table format.
func ipsShow(o *auditOptions, ll *verify.Lists, now time.Time) (ipsShowOutput, string) {
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
		out.Prefixes = append(out.Prefixes, prefixString(p))
	}
	var b strings.Builder
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
	fmt.Fprintf(&b, "source:   %s\n", sanitize(src))
	age := "-"
	if !since.IsZero() {
		age = ipAge(now.Sub(since))
	}
	switch {
	case out.Fetched != nil:
		st := ""
		if stale {
			st = "; the next run fetches it again"
		}
		fmt.Fprintf(&b, "fetched:  %s (%s ago%s)\n", out.Fetched.Format(time.RFC3339), age, st)
	default:
		fmt.Fprintf(&b, "age:      %s\n", age)
	}
	created := "-"
	if out.CreationTime != nil {
		created = out.CreationTime.Format(time.RFC3339)
	}
	fmt.Fprintf(&b, "created:  %s\n", created)
	fmt.Fprintf(&b, "prefixes: %d\n", len(out.Prefixes))
	for _, p := range out.Prefixes {
		fmt.Fprintf(&b, "  %s\n", p)
	}
	return out, b.String()
}

// ipsShowWrite prints the lists of one crawler or several: one object
// (JSON, YAML) for one, a list of them for several; the table texts one
// after another.
func ipsShowWrite(w io.Writer, format string, shown []ipsShowOutput, tables []string) error {
	sw := &stickyWriter{w: w}
	w = sw
	switch format {
	case "json", "yaml":
		var v any = shown
		if len(shown) == 1 {
			v = shown[0]
		}
		if format == "json" {
			return writeJSON(w, v)
		}
		return writeYAML(w, v)
	case "csv":
		if len(shown) == 1 {
			fmt.Fprintln(w, "prefix")
		} else {
			fmt.Fprintln(w, "crawler,prefix")
		}
		for _, s := range shown {
			for _, p := range s.Prefixes {
				if len(shown) > 1 {
					fmt.Fprintf(w, "%s,", s.Crawler)
				}
				fmt.Fprintln(w, p)
			}
		}
		return sw.err
	}
	for i, t := range tables {
		if i > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprint(w, t)
	}
	return sw.err
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

// prefixString prints a single-address prefix as the bare address
// (79.139.58.98, not 79.139.58.98/32), any other prefix in CIDR form.
func prefixString(p netip.Prefix) string {
	if p.IsSingleIP() {
		return p.Addr().String()
	}
	return p.String()
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
current) or rejected (the cached or built-in list stays in force; exit 3).`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := loadConfig(env, c, o.Config); err != nil {
				return err
			}
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
			fmt.Fprintf(env.Stdout, "%s304 not modified: %s, %d prefix(es), is current; %s\n", prefix, sanitize(ld.List.Source), len(ld.List.Prefixes), kept)
		default:
			fmt.Fprintf(env.Stdout, "%s%d: %s, %d prefix(es); %s\n", prefix, ld.Status, sanitize(ld.List.Source), len(ld.List.Prefixes), kept)
		}
	}
	return failed
}
