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
