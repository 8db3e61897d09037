package cmd

import (
	"fmt"
	"strings"

	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/internal/failon"
	"github.com/lohisoft/lohibot-audit/internal/interrupt"
	"github.com/lohisoft/lohibot-audit/render"
	"github.com/lohisoft/lohibot-audit/verify"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func newVerifyCmd(env *Env) *cobra.Command {
	o := &auditOptions{}
	var crawlers []string
	var recheck string
	c := &cobra.Command{
		Use:   "verify IP...|-",
		Short: "Say whether addresses are the genuine crawler, with the evidence",
		Long: `verify says, for each address given, whether it is the genuine ` + crawlerTitle + `
crawler, a spoofer or unverified, with the evidence: the PTR names, what they
resolve to (forward-confirmed reverse DNS), and whether the published IP list
covers the address. The addresses need not appear in any log.

  genuine     the PTR name ends in .bot.lohisoft.com and resolves back to the
              address (method fcrdns); or DNS could not answer, or --offline,
              and the IP list covers it (method ip-list)
  spoofed     IPv6 outside the list (ipv6), no PTR (no-ptr), a PTR name not
              under .bot.lohisoft.com (ptr-mismatch), a forward lookup without
              the address (forward-mismatch), or --offline and not listed
              (not-in-ip-list)
  unverified  DNS could not answer and the list does not cover it (dns-error)

A listed address that fails FCrDNS stays genuine, with the warning
fcrdns-failed. A DNS failure never makes an address spoofed.

--crawler judges against another crawler's profile instead (googlebot,
bingbot, or a profile file): its PTR suffixes, IP lists and IPv6 policy;
given several times, each address gets a verdict for each crawler. "-"
reads addresses from stdin, one a line (blank lines and # comments are
skipped).

Each verdict carries its evidence: the DNS answers with their TTLs, the
resolver that gave them and when it was asked (dns in JSON).

--recheck REPORT completes the JSON report of an earlier logs run (one made
during a DNS outage, say): its unverified addresses, and those whose DNS
answers have passed their TTL, are asked about again, and the report is
printed in the same shape with the new verdicts and the hit counts of the
summary counted again. An address that DNS cannot answer for now keeps the
verdict it had. Conduct is not checked again (a report holds no requests):
sites and violations stay the first run's, and a warning says how many
hits of newly genuine addresses that leaves unchecked; run logs again over
the same logs for them. --crawler then picks which of the report's
crawlers to recheck (a profile file for one not built in).`,
		Example: `  lohibot-audit verify 79.139.58.98 203.0.113.7
  lohibot-audit verify --format json --resolver 1.1.1.1:53 2001:db8::1
  lohibot-audit verify --offline --fail-on spoofed 198.51.100.4
  lohibot-audit verify --crawler googlebot 66.249.66.1 203.0.113.50
  lohibot-audit verify --crawler googlebot --crawler bingbot - <addresses.txt
  lohibot-audit verify --recheck audit.json --format json > audit-rechecked.json`,
		Args: func(c *cobra.Command, args []string) error {
			if c.Flags().Changed("recheck") {
				if len(args) > 0 {
					return fail.Usagef("give addresses or --recheck REPORT, not both")
				}
				return nil
			}
			if len(args) == 0 {
				return fail.Hinted(
					fmt.Errorf("verify needs at least one IP address"),
					"lohibot-audit verify 79.139.58.98 203.0.113.7, or one address a line on stdin: lohibot-audit verify - <addresses.txt")
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			if c.Flags().Changed("recheck") {
				return runVerifyRecheck(c, env, o, crawlers, recheck)
			}
			format, err := o.documentFormat(env)
			if err != nil {
				return err
			}
			if err := failon.Check(o.FailOn); err != nil {
				return err
			}
			profiles, err := crawler.Resolve(crawlers)
			if err != nil {
				return err
			}
			addrs, err := verify.ReadAddrArgs(c.Context(), args, env.Stdin)
			if err != nil {
				return interrupt.Cause(c.Context(), err)
			}
			env.phase(phaseIPList)
			id, err := newIdentityFor(c.Context(), env, o, profiles)
			if err != nil {
				return err
			}
			if c.Context().Err() != nil {
				return errInterrupted
			}
			env.phase(phaseDNS)
			perCrawler := id.ClassifyEach(c.Context(), addrs)
			// A cancelled lookup is unverified for want of an answer:
			// never print such results as the verdicts.
			if c.Context().Err() != nil {
				return errInterrupted
			}
			var names []string
			if len(crawlers) > 0 {
				names = crawler.Names(profiles)
			}
			doc := &render.Verdicts{Rows: render.VerdictRows(addrs, perCrawler, names), Lists: id.Lists, Warnings: id.Warnings(), Now: env.Now()}
			spoofed := doc.Spoofed()
			warnEach(env, doc.Warnings)
			env.phase(phaseWrite)
			if err := format.WriteDocument(env.Stdout, doc, outputOptions(env)); err != nil {
				return writeFailed("the verdicts", err)
			}
			// verify sees no conduct, so violations never match here; the
			// values are those of logs, so one config file serves both.
			return failOnFindings(env, o.FailOn, spoofed, "spoofed verdict", "spoofed verdicts", 0)
		},
	}
	f := c.Flags()
	addIdentityFlags(f, o)
	addTrustedProxyFlag(f, o)
	addFormatFlag(f, o, render.DocumentNames())
	addConfigFlag(f, o)
	f.StringVar(&o.FailOn, "fail-on", "", "exit 1 when such findings exist: spoofed, violations or any (verify finds no violations)")
	completeWith(f, "fail-on", failon.Values...)
	addCrawlerFlag(f, &crawlers)
	f.StringVar(&recheck, "recheck", "", "complete the JSON report of an earlier logs run (`REPORT`, or - for stdin): ask again about its unverified addresses and expired evidence, and print it updated")
	return c
}

// addCrawlerFlag adds --crawler, the crawlers to judge against.
func addCrawlerFlag(f *pflag.FlagSet, crawlers *[]string) {
	f.StringArrayVar(crawlers, "crawler", nil, "the crawler: `NAME` of a built-in profile ("+strings.Join(crawler.BuiltinNames(), ", ")+"), a CATEGORY of them ("+strings.Join(crawler.BuiltinCategories(), ", ")+") or a profile FILE (repeatable; default "+crawler.Default+")")
}
