package cmd

import (
	"errors"
	"fmt"
	"net/mail"
	"slices"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/conduct"
	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/internal/atomicfile"
	"github.com/lohisoft/lohibot-audit/optout"
	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func newOptoutCmd(env *Env) *cobra.Command {
	var from, output, crawlerName string
	c := &cobra.Command{
		Use:   "optout DOMAIN...",
		Short: "Write the e-mail that asks the crawler's operator to exclude your domains",
		Long: `Write the opt-out e-mail (RFC 5322) that asks the crawler's operator to
exclude DOMAIN... from its crawl and remove them from its crawl list, the
way the crawler's page offers besides robots.txt. It goes to the contact
address of the crawler's profile (--crawler, default ` + crawlerTitle + `'s), from
--from (default $EMAIL, else webmaster@ the first domain), dated now.

The e-mail is written to standard output or to -o FILE, for your own mail
program (sendmail -t, or open the file as a draft): nothing is sent.

Unicode domains are written as punycode, with their Unicode form beside
them in the text. After sending it, audit the promise with
logs --opted-out DOMAIN=TIME (the time the e-mail names).`,
		Example: `  lohibot-audit optout example.com blog.example.com --from "Web Team <webmaster@example.com>" -o optout.eml
  lohibot-audit optout example.com --from webmaster@example.com | sendmail -t`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return &exitError{code: ExitUsage, err: withHint(
					errors.New("optout needs at least one DOMAIN to exclude"),
					"lohibot-audit optout example.com --from webmaster@example.com")}
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			p, err := robotsCrawler(crawlerName)
			if err != nil {
				return err
			}
			return runOptout(c, env, p, args, from, output)
		},
	}
	c.Flags().StringVar(&from, "from", "", "your `ADDRESS`, with or without a name: \"Web Team <webmaster@example.com>\" (default $EMAIL, else webmaster@ the first domain)")
	c.Flags().StringVarP(&output, "output", "o", "", "write the e-mail to `FILE` (atomically) instead of standard output")
	c.Flags().StringVar(&crawlerName, "crawler", crawler.Default, "the crawler to opt out of: `NAME` of a built-in profile or a profile FILE with a contact")
	return c
}

func runOptout(c *cobra.Command, env *Env, p *crawler.Profile, args []string, from, output string) error {
	if p.Contact == "" {
		return &exitError{code: ExitUsage, err: withHint(
			fmt.Errorf("crawler %s has no contact address to write to", p.Name),
			"give a profile file with contact: ADDRESS, or use robots.txt to keep it out")}
	}
	to, err := optout.Address(p.Contact)
	if err != nil {
		return usageError("crawler %s: contact: %v", p.Name, err)
	}
	var domains []string
	for _, a := range args {
		d, err := optout.Domain(a)
		if err != nil {
			return usageError("%v", err)
		}
		domains = append(domains, d)
	}
	sender, how, err := optoutSender(env, c.Flags().Changed("from"), from, domains[0])
	if err != nil {
		return err
	}
	now := env.Now()
	l := &optout.Letter{From: sender, To: to, Crawler: p.Title(), Domains: domains, Date: now}
	msg, err := l.Bytes()
	if err != nil {
		return usageError("%v", err)
	}
	if how != "" {
		warnf(env, "the e-mail is from %s (%s); give --from ADDRESS to choose", sender.Address, how)
	}
	if output == "" || output == "-" {
		if _, err := env.Stdout.Write(msg); err != nil {
			return writeFailed("the e-mail", err)
		}
	} else {
		ctx := c.Context()
		defer onForcedExit(func() { atomicfile.RemoveTemp(output) })()
		if _, err := atomicfile.Write(ctx, output, msg, 0o644, nil); err != nil {
			if ctx.Err() != nil {
				return errInterrupted
			}
			return &exitError{code: ExitIncomplete, output: true, err: withHint(
				fmt.Errorf("cannot write the e-mail to %s: %w", output, unwrapPathError(err)),
				"check that the directory exists, is writable and has room")}
		}
	}
	if env.StderrTTY {
		fmt.Fprintf(env.Stderr, "lohibot-audit: nothing was sent: send the e-mail to %s yourself, then hold the crawler to it with %s\n",
			to.Address, optoutAuditFlags(p, domains, now))
	}
	return nil
}

// optoutSender is --from, else $EMAIL, else webmaster@ the first domain
// (RFC 2142's mailbox for a web service); how says which default was
// taken ("" for --from).
func optoutSender(env *Env, given bool, from, first string) (*mail.Address, string, error) {
	if given {
		a, err := optout.Address(from)
		if err != nil {
			return nil, "", usageError("--from: %v", err)
		}
		return a, "", nil
	}
	if e := strings.TrimSpace(env.Getenv("EMAIL")); e != "" {
		a, err := optout.Address(e)
		if err != nil {
			return nil, "", usageError("$EMAIL: %v; give --from ADDRESS", err)
		}
		return a, "$EMAIL", nil
	}
	a, err := optout.Address("webmaster@" + first)
	if err != nil {
		return nil, "", usageError("--from: %v", err)
	}
	return a, "webmaster@ the first domain", nil
}

// addOptOutFlags adds --opted-out and --opt-out-grace (logs, emit, watch).
func addOptOutFlags(f *pflag.FlagSet, o *auditOptions) {
	f.StringArrayVar(&o.OptedOut, "opted-out", nil, "`SITE=TIME`: the site asked the crawler's operator to leave it out of the crawl at TIME (RFC 3339 or a date; the opt-out e-mail's); its genuine pages after TIME and --opt-out-grace are opt-out violations; CRAWLER:SITE=TIME for one crawler of several (repeatable; config key opted_out)")
	f.DurationVar(&o.OptOutGrace, "opt-out-grace", conduct.DefaultOptOutGrace, "how long after an opt-out the crawler may still fetch the site's pages")
}

// parseOptedOut reads the --opted-out values for the crawlers of a run:
// each crawler's opted-out sites. A value names its crawler (NAME:) or,
// when the run audits one crawler, is that crawler's.
func parseOptedOut(values []string, profiles []*crawler.Profile, grace time.Duration, now time.Time) (map[string]conduct.OptOuts, error) {
	if grace < 0 {
		return nil, usageError("--opt-out-grace %s: give a duration of 0 or more, such as 48h", grace)
	}
	out := map[string]conduct.OptOuts{}
	for _, v := range values {
		spec, when, ok := strings.Cut(v, "=")
		if !ok || strings.TrimSpace(spec) == "" || strings.TrimSpace(when) == "" {
			return nil, &exitError{code: ExitUsage, err: withHint(fmt.Errorf("--opted-out %q: not SITE=TIME", v),
				"give the site and the time of its opt-out e-mail: --opted-out example.com=2026-12-01T09:30:00Z")}
		}
		name, site, named := strings.Cut(spec, ":")
		if !named {
			site = name
			if len(profiles) > 1 {
				return nil, usageError("--opted-out %q: the run audits %d crawlers; name the one opted out of: --opted-out %s:%s", v, len(profiles), profiles[0].Name, v)
			}
			name = profiles[0].Name
		}
		if !slices.ContainsFunc(profiles, func(p *crawler.Profile) bool { return p.Name == name }) {
			return nil, usageError("--opted-out %q: crawler %s is not audited in this run", v, name)
		}
		d, err := optout.Domain(site)
		if err != nil {
			return nil, usageError("--opted-out %q: %v", v, err)
		}
		t, err := timeBound("opted-out", strings.TrimSpace(when), now)
		if err != nil {
			return nil, err
		}
		site = parse.NormalizeSite(d)
		if out[name] == nil {
			out[name] = conduct.OptOuts{}
		}
		if prev, ok := out[name][site]; ok && !prev.Equal(t) {
			return nil, usageError("--opted-out gives two times for %s of %s", site, name)
		}
		out[name][site] = t
	}
	return out, nil
}

// optoutAuditFlags is the --opted-out flags that hold crawler p to a
// request made at t.
func optoutAuditFlags(p *crawler.Profile, domains []string, t time.Time) string {
	stamp := t.UTC().Truncate(time.Second).Format(time.RFC3339)
	parts := make([]string, len(domains))
	for i, d := range domains {
		parts[i] = "--opted-out " + d + "=" + stamp
		if p.Name != crawler.Default {
			parts[i] = "--opted-out " + p.Name + ":" + d + "=" + stamp
		}
	}
	return strings.Join(parts, " ")
}
