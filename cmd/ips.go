package cmd

import (
	"fmt"

	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/render"
	"github.com/lohisoft/lohibot-audit/verify"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func newIPsCmd(env *Env) *cobra.Command {
	show := newIPsShowCmd(env)
	c := &cobra.Command{
		Use:   "ips [update|show]",
		Short: "Fetch and cache the crawler's IP list; show the list in force",
		Args:  cobra.NoArgs,
		RunE:  show.RunE,
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
			id := o.identity(env)
			if err := id.Check(); err != nil {
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
					return fail.Usagef("--cdn shows the CDN edge lists, not a crawler's: it takes no --crawler")
				}
				dir := cacheDir(env, id)
				edges, warnings := cdnLoader(env, dir).Load()
				warnEach(env, warnings)
				if err := format.WriteDocument(env.Stdout, render.NewCDNLists(edges, env.Now()), outputOptions(env)); err != nil {
					return writeFailed("the lists", err)
				}
				return nil
			}
			profiles, override, err := id.Lists(crawlers)
			if err != nil {
				return err
			}
			lists, err := id.Loader(cacheDir(env, id), verify.ListNoFetch).LoadEach(c.Context(), profiles, override)
			for _, ll := range lists {
				warnEach(env, ll.Warnings)
			}
			if err != nil {
				return err
			}
			var names []string
			if len(crawlers) > 0 {
				names = crawler.Names(profiles)
			}
			doc := render.NewIPListDocs(lists, names, env.Now())
			if err := format.WriteDocument(env.Stdout, doc, outputOptions(env)); err != nil {
				return writeFailed("the list", err)
			}
			return nil
		},
	}
	addIPsFlags(c.Flags(), o)
	addCrawlerFlag(c.Flags(), &crawlers)
	c.Flags().StringVar(&o.Format, "format", "", "output format: table, json, yaml, csv (the prefixes) or markdown (default table)")
	completeWith(c.Flags(), "format", "table", "json", "yaml", "csv", "markdown")
	c.Flags().BoolVar(&cdn, "cdn", false, "show the CDN edge lists in force instead (see --trusted-proxy): where each came from and its age")
	return c
}

func newIPsUpdateCmd(env *Env) *cobra.Command {
	o := &auditOptions{}
	var crawlers []string
	c := &cobra.Command{
		Use:   "update",
		Short: "Fetch the IP list now and cache it",
		Args:  cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			id := o.identity(env)
			if err := id.Check(); err != nil {
				return err
			}
			profiles, override, err := id.ListsToFetch(crawlers)
			if err != nil {
				return err
			}
			dir := cacheDir(env, id)
			u, err := id.Loader(dir, verify.ListFetchNow).UpdateEach(c.Context(), profiles, override, len(crawlers) > 0)
			sayUpdate(env, &u)
			if err != nil {
				return err
			}
			// The CDNs' edge lists too, which runs then read from the cache.
			u.Add(cdnLoader(env, dir).Update(c.Context()).Updated(dir))
			sayUpdate(env, &u)
			return u.Failed
		},
	}
	addIPsFlags(c.Flags(), o)
	addCrawlerFlag(c.Flags(), &crawlers)
	return c
}

// sayUpdate says what became of the lists fetched so far: their lines on
// stdout, the warnings on stderr; said, they are cleared.
func sayUpdate(env *Env, u *verify.ListsUpdate) {
	warnEach(env, u.Warnings)
	for _, l := range u.Lines {
		fmt.Fprintln(env.Stdout, sanitize(l))
	}
	u.Lines, u.Warnings = nil, nil
}

// cacheDir is the cache directory of the identity flags, its warning
// (verify.Settings.Cache) said.
func cacheDir(env *Env, id *verify.Settings) string {
	dir, warn := id.Cache()
	if warn != "" {
		warnf(env, "%s", warn)
	}
	return dir
}
