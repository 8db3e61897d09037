package cmd

import (
	"errors"
	"fmt"
	"time"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/conduct"
	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/internal/interrupt"
	"github.com/lohisoft/lohibot-audit/optout"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func newOptoutCmd(env *Env) *cobra.Command {
	var from, output, crawlerName string
	c := &cobra.Command{
		Use:   "optout DOMAIN...",
		Short: "Write the e-mail that asks the crawler's operator to exclude your domains",
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return fail.Hinted(
					errors.New("optout needs at least one DOMAIN to exclude"),
					"lohibot-audit optout example.com --from webmaster@example.com")
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			p, err := crawler.One(crawlerName)
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
	now := env.Now()
	l, msg, how, err := optout.Request{Name: p.Name, Title: p.Title(), Contact: p.Contact, Domains: args,
		FromGiven: c.Flags().Changed("from"), From: from, Email: env.Getenv("EMAIL"), Date: now}.Compose()
	if err != nil {
		return err
	}
	if how != "" {
		warnf(env, "the e-mail is from %s (%s); give --from ADDRESS to choose", l.From.Address, how)
	}
	if output == "" || output == "-" {
		if _, err := env.Stdout.Write(msg); err != nil {
			return writeFailed("the e-mail", err)
		}
	} else if err := optout.WriteFile(c.Context(), output, msg); err != nil {
		return interrupt.Cause(c.Context(), err)
	}
	if env.StderrTTY {
		fmt.Fprintf(env.Stderr, "lohibot-audit: nothing was sent: send the e-mail to %s yourself, then hold the crawler to it with %s\n",
			l.To.Address, optout.AuditFlags(p.Name, p.Name == crawler.Default, l.Domains, now))
	}
	return nil
}

// addOptOutFlags adds --opted-out and --opt-out-grace (logs, emit, watch).
func addOptOutFlags(f *pflag.FlagSet, o *auditOptions) {
	f.StringArrayVar(&o.OptedOut, "opted-out", nil, "`SITE=TIME`: the site asked the crawler's operator to leave it out of the crawl at TIME (RFC 3339 or a date; the opt-out e-mail's); its genuine pages after TIME and --opt-out-grace are opt-out violations; CRAWLER:SITE=TIME for one crawler of several (repeatable; config key opted_out)")
	f.DurationVar(&o.OptOutGrace, "opt-out-grace", conduct.DefaultOptOutGrace, "how long after an opt-out the crawler may still fetch the site's pages")
}

// parseOptedOut reads the --opted-out values for the crawlers of a run
// (audit.Setup.OptOuts).
func parseOptedOut(values []string, profiles []*crawler.Profile, grace time.Duration, now time.Time) (map[string]conduct.OptOuts, error) {
	return (&audit.Setup{OptedOut: values, OptOutGrace: grace, Now: now}).OptOuts(profiles)
}
