package cmd

import (
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/verify"
	"github.com/spf13/cobra"
)

// verifyOutput is what `verify --format json|yaml` prints: the per-address
// fields of SPEC §5, hit counts and times zero.
type verifyOutput struct {
	IPs      []audit.IPReport `json:"ips" yaml:"ips"`
	Warnings []string         `json:"warnings,omitempty" yaml:"warnings,omitempty"`
}

func newVerifyCmd(env *Env) *cobra.Command {
	o := &auditOptions{}
	c := &cobra.Command{
		Use:   "verify IP...",
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
fcrdns-failed. A DNS failure never makes an address spoofed.`,
		Example: `  lohibot-audit verify 79.139.58.98 203.0.113.7
  lohibot-audit verify --format json --resolver 1.1.1.1:53 2001:db8::1
  lohibot-audit verify --offline --fail-on spoofed 198.51.100.4`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return &exitError{code: ExitUsage, err: withHint(
					fmt.Errorf("verify needs at least one IP address"),
					"lohibot-audit verify 79.139.58.98 203.0.113.7")}
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			format, err := o.outputFormat(env)
			if err != nil {
				return err
			}
			if _, err := failOnMatch(o.FailOn, 0, 0); err != nil {
				return err
			}
			addrs, err := verifyParseArgs(args)
			if err != nil {
				return err
			}
			env.phase(phaseIPList)
			id, err := newIdentity(c.Context(), env, o)
			if err != nil {
				return err
			}
			if c.Context().Err() != nil {
				return errInterrupted
			}
			env.phase(phaseDNS)
			results := id.classify(c.Context(), addrs)
			// A cancelled lookup is unverified for want of an answer:
			// never print such results as the verdicts.
			if c.Context().Err() != nil {
				return errInterrupted
			}
			out := verifyOutput{IPs: make([]audit.IPReport, 0, len(addrs)), Warnings: id.Warnings}
			var spoofed int64
			for _, a := range addrs {
				r := results[a]
				out.IPs = append(out.IPs, audit.IPReportOf(r))
				if r.Verdict == verify.Spoofed {
					spoofed++
				}
			}
			for _, w := range id.Warnings {
				warnf(env, "%s", w)
			}
			env.phase(phaseWrite)
			if err := verifyWrite(stdout(env), format, out, addrs, results, id.List, env.Now()); err != nil {
				return writeFailed("the verdicts", err)
			}
			// verify sees no conduct, so violations never match here; the
			// values are those of logs, so one config file serves both.
			if fail, _ := failOnMatch(o.FailOn, spoofed, 0); fail {
				return errFindings
			}
			return nil
		},
	}
	f := c.Flags()
	addIdentityFlags(f, o)
	addFormatFlag(f, o)
	addConfigFlag(f, o)
	f.StringVar(&o.FailOn, "fail-on", "", "exit 1 when such findings exist: spoofed, violations or any (verify finds no violations)")
	return c
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

func verifyWrite(w io.Writer, format string, out verifyOutput, addrs []netip.Addr, results map[netip.Addr]verify.Result, list *verify.IPList, now time.Time) error {
	switch format {
	case "json":
		return writeJSON(w, out)
	case "yaml":
		return writeYAML(w, out)
	case "csv":
		return writeIPsCSV(w, out.IPs)
	}
	md := format == "markdown"
	sw := &stickyWriter{w: w}
	w = sw
	t := newTable(w, md, "IP", "VERDICT", "WHY", "PTR", "FORWARD", "IN IP LIST")
	for _, a := range addrs {
		r := results[a]
		inList := "no"
		if r.InIPList {
			inList = "yes"
		}
		if err := t.Append([]string{textCell(a.String(), 45, md), string(r.Verdict), textCell(verifyWhy(r), 100, md),
			textCell(orDash(strings.Join(r.PTR, " ")), 100, md), textCell(orDash(strings.Join(r.Forward, " ")), 100, md), inList}); err != nil {
			return err
		}
	}
	if err := t.Render(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nIP list: %s\n", textLine(ipListDescribe(list, now), md))
	return sw.err
}

// verifyWhy is the method and reason for people, with the warnings and
// the DNS error, if any.
func verifyWhy(r verify.Result) string {
	why := whyText(r.Method, r.Reason, r.Warnings)
	if r.DNSError != "" && (r.Reason == verify.ReasonDNSError || r.Method == verify.MethodIPList) {
		why += " [" + r.DNSError + "]"
	}
	return orDash(why)
}

// ipListDescribe is one line saying which list is in force.
func ipListDescribe(l *verify.IPList, now time.Time) string {
	if l == nil {
		return "-"
	}
	s := fmt.Sprintf("%s, %d prefix(es)", l.Source, len(l.Prefixes))
	if !l.Fetched.IsZero() {
		s += ", fetched " + ipAge(now.Sub(l.Fetched)) + " ago"
	}
	if !l.CreationTime.IsZero() {
		s += ", created " + l.CreationTime.UTC().Format(time.RFC3339)
	}
	return sanitize(s)
}

// ipAge prints a duration for people: 45s, 12m, 3h, 4d.
func ipAge(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	}
	return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
}
