package cmd

import (
	"bufio"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strings"

	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/lohisoft/lohibot-audit/render"
	"github.com/lohisoft/lohibot-audit/verify"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func newVerifyCmd(env *Env) *cobra.Command {
	o := &auditOptions{}
	var crawlers []string
	c := &cobra.Command{
		Use:   "verify IP...|-",
		Short: "Say whether addresses are the genuine crawler, with the evidence",
		Long: `verify says, for each address given, whether it is the genuine LohiSoftBot
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
skipped).`,
		Example: `  lohibot-audit verify 79.139.58.98 203.0.113.7
  lohibot-audit verify --format json --resolver 1.1.1.1:53 2001:db8::1
  lohibot-audit verify --offline --fail-on spoofed 198.51.100.4
  lohibot-audit verify --crawler googlebot 66.249.66.1 203.0.113.50
  lohibot-audit verify --crawler googlebot --crawler bingbot - <addresses.txt`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return &exitError{code: ExitUsage, err: withHint(
					fmt.Errorf("verify needs at least one IP address"),
					"lohibot-audit verify 79.139.58.98 203.0.113.7, or one address a line on stdin: lohibot-audit verify - <addresses.txt")}
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			format, err := o.documentFormat(env)
			if err != nil {
				return err
			}
			if _, err := failOnMatch(o.FailOn, 0, 0); err != nil {
				return err
			}
			profiles, err := resolveCrawlers(crawlers)
			if err != nil {
				return err
			}
			addrs, err := verifyAddrs(env, args)
			if err != nil {
				return err
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
			perCrawler := make([]map[netip.Addr]verify.Result, len(profiles))
			for i := range profiles {
				perCrawler[i] = id.Classify(c.Context(), i, addrs)
			}
			// A cancelled lookup is unverified for want of an answer:
			// never print such results as the verdicts.
			if c.Context().Err() != nil {
				return errInterrupted
			}
			doc := &render.Verdicts{Lists: id.Lists, Warnings: id.Warnings(), Now: env.Now()}
			var spoofed int64
			for _, a := range addrs {
				for i, p := range profiles {
					r := perCrawler[i][a]
					name := ""
					if len(crawlers) > 0 {
						name = p.Name
					}
					doc.Rows = append(doc.Rows, render.Verdict{Crawler: name, List: i, Result: r})
					if r.Verdict == verify.Spoofed {
						spoofed++
					}
				}
			}
			for _, w := range doc.Warnings {
				warnf(env, "%s", w)
			}
			env.phase(phaseWrite)
			if err := format.WriteDocument(env.Stdout, doc, outputOptions(env)); err != nil {
				return writeFailed("the verdicts", err)
			}
			// verify sees no conduct, so violations never match here; the
			// values are those of logs, so one config file serves both.
			if fail, _ := failOnMatch(o.FailOn, spoofed, 0); fail {
				failOnMatched(env, o.FailOn, spoofed, "spoofed verdict", "spoofed verdicts", 0)
				return errFindings
			}
			return nil
		},
	}
	f := c.Flags()
	addIdentityFlags(f, o)
	addTrustedProxyFlag(f, o)
	addFormatFlag(f, o, render.DocumentNames())
	addConfigFlag(f, o)
	f.StringVar(&o.FailOn, "fail-on", "", "exit 1 when such findings exist: spoofed, violations or any (verify finds no violations)")
	addCrawlerFlag(f, &crawlers)
	return c
}

// verifyAddrs parses the addresses of args, "-" standing for those on
// stdin: unmapped, deduplicated and sorted.
func verifyAddrs(env *Env, args []string) ([]netip.Addr, error) {
	var all []string
	for _, s := range args {
		if s != "-" {
			all = append(all, s)
			continue
		}
		lines, err := verifyReadAddrs(env.Stdin)
		if err != nil {
			return nil, err
		}
		all = append(all, lines...)
	}
	if len(all) == 0 {
		return nil, usageError("no addresses on stdin: give one IP address a line")
	}
	return verifyParseArgs(all)
}

// verifyMaxBadLines is how many bad lines of stdin an error names.
const verifyMaxBadLines = 5

// verifyReadAddrs reads one address a line, skipping blank lines and
// comments (# to the end of the line); lines that are not an address are
// an error that names them by line number.
func verifyReadAddrs(r io.Reader) ([]string, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	var out, bad []string
	nbad := 0
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if a, err := netip.ParseAddr(line); err != nil || a.Zone() != "" {
			nbad++
			if len(bad) < verifyMaxBadLines {
				bad = append(bad, fmt.Sprintf("line %d: %q", n, parse.EscapeControl(clipText(line, 60))))
			}
			continue
		}
		out = append(out, line)
	}
	if err := sc.Err(); err != nil {
		return nil, &exitError{code: ExitIncomplete, err: fmt.Errorf("cannot read addresses from stdin: %w", err)}
	}
	if nbad > 0 {
		more := ""
		if nbad > len(bad) {
			more = fmt.Sprintf(" and %d more", nbad-len(bad))
		}
		return nil, &exitError{code: ExitUsage, err: withHint(
			fmt.Errorf("stdin: not an IP address on %s%s", strings.Join(bad, ", "), more),
			"give one IPv4 or IPv6 address a line, without port or zone; # starts a comment")}
	}
	return out, nil
}

// clipText cuts s to at most n bytes, at a rune boundary.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xc0 == 0x80 {
		n--
	}
	return s[:n] + "…"
}

// verifyParseArgs parses the addresses, unmapped, deduplicated and sorted.
func verifyParseArgs(args []string) ([]netip.Addr, error) {
	seen := map[netip.Addr]bool{}
	var addrs []netip.Addr
	for _, s := range args {
		a, err := netip.ParseAddr(strings.TrimSpace(s))
		if err != nil || a.Zone() != "" {
			return nil, &exitError{code: ExitUsage, err: withHint(
				fmt.Errorf("%q is not an IP address", s),
				"give IPv4 or IPv6 addresses without port or zone, such as 79.139.58.98 or 2001:db8::1")}
		}
		a = a.Unmap()
		if !seen[a] {
			seen[a] = true
			addrs = append(addrs, a)
		}
	}
	slices.SortFunc(addrs, netip.Addr.Compare)
	return addrs, nil
}

// addCrawlerFlag adds --crawler, the crawlers to judge against.
func addCrawlerFlag(f *pflag.FlagSet, crawlers *[]string) {
	f.StringArrayVar(crawlers, "crawler", nil, "the crawler: `NAME` of a built-in profile ("+strings.Join(crawler.BuiltinNames(), ", ")+"), a CATEGORY of them ("+strings.Join(crawler.BuiltinCategories(), ", ")+") or a profile FILE (repeatable; default "+crawler.Default+")")
}

// resolveCrawlers turns --crawler values into profiles; a name that is not
// built in, or a profile file that cannot be read or does not validate, is
// a usage error.
func resolveCrawlers(values []string) ([]*crawler.Profile, error) {
	profiles, err := crawler.Resolve(values)
	if err != nil {
		return nil, &exitError{code: ExitUsage, err: err}
	}
	return profiles, nil
}
