package cmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/ipfmt"
	"github.com/lohisoft/lohibot-audit/verify"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// ipsShowOutput is what `ips show --format json|yaml` prints.
type ipsShowOutput struct {
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
	c := &cobra.Command{
		Use:   "show",
		Short: "Print the IP list in force, its source and age",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
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
			dir, warn := identityCacheDir(env, o)
			ll, err := loadIPList(c.Context(), env, o, dir, ipListNoFetch)
			if err != nil {
				return err
			}
			if warn != "" {
				ll.Warnings = append([]string{warn}, ll.Warnings...)
			}
			for _, w := range ll.Warnings {
				warnf(env, "%s", w)
			}
			if err := ipsShow(stdout(env), format, o, ll, env.Now()); err != nil {
				return writeFailed("the list", err)
			}
			return nil
		},
	}
	addIPsFlags(c.Flags(), o)
	c.Flags().StringVar(&o.Format, "format", "", "output format: table, json, yaml, csv (the prefixes) or markdown (default table)")
	return c
}

func ipsShow(w io.Writer, format string, o *auditOptions, ll *ipListLoad, now time.Time) error {
	sw := &stickyWriter{w: w}
	w = sw
	l := ll.List
	out := ipsShowOutput{Source: l.Source, Cached: ll.Cached, Stale: ll.Stale, Prefixes: []string{}, Warnings: ll.Warnings}
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
	switch format {
	case "json":
		return writeJSON(w, out)
	case "yaml":
		return writeYAML(w, out)
	case "csv":
		fmt.Fprintln(w, "prefix")
		for _, p := range out.Prefixes {
			fmt.Fprintln(w, p)
		}
		return sw.err
	}
	src := l.Source
	switch {
	case ll.Cached:
		src += " (cached)"
	case l.Source == verify.IPListSourceBuiltin && ipListIsURL(o.IPList):
		src += " (no cached copy of " + o.IPList + "; run 'lohibot-audit ips update')"
	case l.Source == verify.IPListSourceBuiltin:
		src += " (from the crawler's documentation)"
	}
	fmt.Fprintf(w, "source:   %s\n", sanitize(src))
	age := "-"
	if !since.IsZero() {
		age = ipAge(now.Sub(since))
	}
	switch {
	case out.Fetched != nil:
		stale := ""
		if ll.Stale {
			stale = "; the next run fetches it again"
		}
		fmt.Fprintf(w, "fetched:  %s (%s ago%s)\n", out.Fetched.Format(time.RFC3339), age, stale)
	default:
		fmt.Fprintf(w, "age:      %s\n", age)
	}
	created := "-"
	if out.CreationTime != nil {
		created = out.CreationTime.Format(time.RFC3339)
	}
	fmt.Fprintf(w, "created:  %s\n", created)
	fmt.Fprintf(w, "prefixes: %d\n", len(out.Prefixes))
	for _, p := range out.Prefixes {
		fmt.Fprintf(w, "  %s\n", p)
	}
	return sw.err
}

func newIPsUpdateCmd(env *Env) *cobra.Command {
	o := &auditOptions{}
	c := &cobra.Command{
		Use:   "update",
		Short: "Fetch the IP list now and cache it",
		Long: `update fetches the list named by --ip-list (default
https://lohisoft.com/bot/ips.json) now, revalidating the cached copy, and
says what happened: 200 (a new list, cached), 304 (the cached list is
current) or rejected (the cached or built-in list stays in force; exit 3).`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			if err := identityCheckFlags(o); err != nil {
				return err
			}
			switch {
			case o.Offline:
				return usageError("ips update fetches the list: it cannot run with --offline")
			case !ipListIsURL(o.IPList):
				return usageError("--ip-list %s is a file: there is nothing to fetch", o.IPList)
			}
			dir, warn := identityCacheDir(env, o)
			if warn != "" {
				warnf(env, "%s", warn)
			}
			ll, err := loadIPList(c.Context(), env, o, dir, ipListFetchNow)
			if err != nil {
				return err
			}
			for _, w := range ll.Warnings {
				if w != ll.FetchWarning {
					warnf(env, "%s", w)
				}
			}
			if ll.FetchErr != nil {
				what := "the built-in list"
				if ll.Cached {
					what = "the cached list"
				}
				status := "cannot fetch"
				if errors.Is(ll.FetchErr, verify.ErrIPListInvalid) || errors.Is(ll.FetchErr, verify.ErrIPListEmpty) || errors.Is(ll.FetchErr, verify.ErrIPListTooLarge) {
					status = "rejected"
				}
				return &exitError{code: ExitIncomplete, err: fmt.Errorf("%s: %w; %s stays in force", status, ll.FetchErr, what)}
			}
			kept := "not cached (--no-cache)"
			if ll.Saved {
				kept = "cached"
			} else if dir != "" {
				kept = "not cached"
			}
			switch ll.Status {
			case 304:
				fmt.Fprintf(env.Stdout, "304 not modified: %s, %d prefix(es), is current; %s\n", sanitize(ll.List.Source), len(ll.List.Prefixes), kept)
			default:
				fmt.Fprintf(env.Stdout, "%d: %s, %d prefix(es); %s\n", ll.Status, sanitize(ll.List.Source), len(ll.List.Prefixes), kept)
			}
			return nil
		},
	}
	addIPsFlags(c.Flags(), o)
	return c
}
