package cmd

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/internal/nouns"
	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/lohisoft/lohibot-audit/render"
	"github.com/lohisoft/lohibot-audit/verify"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// verifyOutput is what `verify --format json|yaml` prints: the per-address
// fields of SPEC §5, without the times no log gave (hits are zero).
type verifyOutput struct {
	IPs      []verifyIP `json:"ips" yaml:"ips"`
	Warnings []string   `json:"warnings,omitempty" yaml:"warnings,omitempty"`
}

// verifyIP is one address's verdict as one crawler: the report's fields
// (SPEC §5) but first_seen and last_seen, which only a log can tell.
type verifyIP struct {
	IP string `json:"ip" yaml:"ip"`
	// Crawler is set when --crawler names the crawlers judged against.
	Crawler    string         `json:"crawler,omitempty" yaml:"crawler,omitempty"`
	Verdict    verify.Verdict `json:"verdict" yaml:"verdict"`
	Method     string         `json:"method" yaml:"method"`
	Reason     string         `json:"reason" yaml:"reason"`
	PTR        []string       `json:"ptr" yaml:"ptr"`
	Forward    []string       `json:"forward" yaml:"forward"`
	InIPList   bool           `json:"in_ip_list" yaml:"in_ip_list"`
	Hits       int64          `json:"hits" yaml:"hits"`
	UserAgents []string       `json:"user_agents" yaml:"user_agents"`
	Warnings   []string       `json:"warnings,omitempty" yaml:"warnings,omitempty"`
	DNSFailure string         `json:"dns_failure,omitempty" yaml:"dns_failure,omitempty"`
	// Proxy names the CDN or trusted proxy the address is (reason proxy).
	Proxy string `json:"proxy,omitempty" yaml:"proxy,omitempty"`
}

func newVerifyIP(rep audit.IPReport, crawlerName string) verifyIP {
	return verifyIP{IP: rep.IP, Crawler: crawlerName, Verdict: rep.Verdict, Method: rep.Method, Reason: rep.Reason,
		PTR: rep.PTR, Forward: rep.Forward, InIPList: rep.InIPList, Hits: rep.Hits, UserAgents: rep.UserAgents,
		Warnings: rep.Warnings, DNSFailure: rep.DNSFailure, Proxy: rep.Proxy}
}

// verifyRow is one verdict: an address judged as one crawler.
type verifyRow struct {
	crawler string // "" unless --crawler names the crawlers
	profile int    // the crawler's index
	addr    netip.Addr
	result  verify.Result
}

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
			warnings := id.Warnings()
			out := verifyOutput{IPs: make([]verifyIP, 0, len(addrs)*len(profiles)), Warnings: warnings}
			var rows []verifyRow
			var spoofed int64
			for _, a := range addrs {
				for i, p := range profiles {
					r := perCrawler[i][a]
					name := ""
					if len(crawlers) > 0 {
						name = p.Name
					}
					rows = append(rows, verifyRow{crawler: name, profile: i, addr: a, result: r})
					out.IPs = append(out.IPs, newVerifyIP(audit.IPReportOf(r), name))
					if r.Verdict == verify.Spoofed {
						spoofed++
					}
				}
			}
			for _, w := range warnings {
				warnf(env, "%s", w)
			}
			env.phase(phaseWrite)
			doc := &verifyDoc{out: out, rows: rows, lists: id.Lists, now: env.Now()}
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

// verifyDoc is what verify prints: the verdicts, address by address, each
// address judged as every crawler in turn.
type verifyDoc struct {
	out   verifyOutput
	rows  []verifyRow
	lists []*verify.IPList // per crawler
	now   time.Time
}

func (d *verifyDoc) Data() any { return d.out }

// named says whether --crawler named the crawlers: the rows then say
// which crawler each verdict is about.
func (d *verifyDoc) named() bool { return len(d.rows) > 0 && d.rows[0].crawler != "" }

func (d *verifyDoc) WriteCSV(w io.Writer) error {
	reps := make([]audit.IPReport, len(d.rows))
	for i, r := range d.rows {
		reps[i] = audit.IPReportOf(r.result)
	}
	if !d.named() {
		return render.WriteIPsCSV(w, slices.Values(reps))
	}
	// The crawler of each row in a first column.
	var buf bytes.Buffer
	if err := render.WriteIPsCSV(&buf, slices.Values(reps)); err != nil {
		return err
	}
	records, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	for i, rec := range records {
		first := "crawler"
		if i > 0 {
			first = d.rows[i-1].crawler
		}
		if err := cw.Write(append([]string{first}, rec...)); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func (d *verifyDoc) WriteText(t *render.Text) error {
	named := d.named()
	head := []string{"IP", "VERDICT", "WHY", "PTR", "FORWARD", "IN IP LIST"}
	if named {
		head = append([]string{"CRAWLER"}, head...)
	}
	tab := &render.Table{Header: head, TitleColumns: 2}
	for _, row := range d.rows {
		r := row.result
		inList := "no"
		if r.InIPList {
			inList = "yes"
		}
		cells := []string{t.Cell(row.addr.String(), 45), string(r.Verdict), t.Cell(verifyWhy(r), 100),
			t.Cell(render.OrDash(strings.Join(r.PTR, " ")), 100), t.Cell(render.OrDash(strings.Join(r.Forward, " ")), 100), inList}
		if named {
			cells = append([]string{t.Cell(row.crawler, 32)}, cells...)
		}
		tab.Rows = append(tab.Rows, cells)
	}
	t.Table(tab)
	if !named {
		t.Printf("\nIP list: %s\n", t.Esc(ipListDescribe(d.lists[0], d.now)))
		return nil
	}
	t.Printf("\n")
	seen := map[int]bool{}
	for _, row := range d.rows {
		if !seen[row.profile] {
			seen[row.profile] = true
			t.Printf("IP list (%s): %s\n", t.Esc(row.crawler), t.Esc(ipListDescribe(d.lists[row.profile], d.now)))
		}
	}
	return nil
}

// verifyWhy is the method and reason for people, with the warnings and
// the DNS error, if any.
func verifyWhy(r verify.Result) string {
	why := render.Why(r.Method, r.Reason, r.DNSFailure, r.Warnings)
	if r.DNSError != "" && (r.Reason == verify.ReasonDNSError || r.Method == verify.MethodIPList) {
		why += " [" + r.DNSError + "]"
	}
	return render.OrDash(why)
}

// ipListDescribe is one line saying which list is in force.
func ipListDescribe(l *verify.IPList, now time.Time) string {
	if l == nil {
		return "-"
	}
	if l.Source == verify.IPListSourceNone {
		return sanitize("no list: " + l.Missing)
	}
	s := l.Source + ", " + nouns.Count(len(l.Prefixes), "prefix", "prefixes")
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

// addCrawlerFlag adds --crawler, the crawlers to judge against.
func addCrawlerFlag(f *pflag.FlagSet, crawlers *[]string) {
	f.StringArrayVar(crawlers, "crawler", nil, "the crawler: `NAME` of a built-in profile ("+strings.Join(crawler.BuiltinNames(), ", ")+") or a profile FILE (repeatable; default "+crawler.Default+")")
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
