package emit

import (
	"bufio"
	"fmt"
	"io"
	"net/netip"
	"strings"

	"github.com/lohisoft/lohibot-audit/internal/ipfmt"
)

// Defaults and limits of the ModSecurity output.
const (
	// DefaultModSecIDBase is the first rule ID. ModSecurity reserves IDs
	// 1 to 99,999 for local rules; this block is unlikely to clash with
	// hand-written ones.
	DefaultModSecIDBase = 42000
	// ModSecLocalIDMax is the last ID of the range ModSecurity reserves for
	// local rules.
	ModSecLocalIDMax = 99999
	// ModSecMaxID is the largest rule ID accepted.
	ModSecMaxID = 1<<31 - 1
	// ModSecChunk is the most addresses one @ipMatch carries; longer lists
	// are split over several rules (or chained rules), each line staying
	// far below any configuration parser's line limit.
	ModSecChunk = 500
)

// ModSecOptions shape the ModSecurity output. The zero value gives the
// defaults.
type ModSecOptions struct {
	// IDBase is the first rule ID; zero means DefaultModSecIDBase. The
	// rules use consecutive IDs from it, as many as the header says.
	IDBase int
}

// ModSecurity writes a ModSecurity rules file (SecRule directives, to be
// included after SecRuleEngine On) that loads under ModSecurity 2 (Apache)
// and libmodsecurity 3 (nginx), and returns the Plan it wrote. Every rule
// runs in phase 1 and carries t:none first, chained rules included; deny
// rules answer 403 and log. The rules go crawler by crawler, in the Plan's
// order; rules that name their crawlers (Input.Named) head each part with
// a comment naming it and tag each rule with it.
//
// In BlockSpoofed mode a chained rule per crawler denies requests whose
// User-Agent holds one of its tokens as a product token, as the audit
// reads claims (t:lowercase and @rx with the token boundaries of
// parse.TokenSet: "NotExampleBotX" holds no claim of ExampleBot), unless REMOTE_ADDR
// matches the crawler's addresses, and further rules deny the spoofing
// addresses outright. In BlockBot mode rules deny the crawlers' addresses.
// In AllowBot mode rules let the crawlers' addresses past every later rule
// (pass with ctl:ruleEngine=Off): include the file before other rules.
//
// IDs are deterministic and never collide: in BlockSpoofed mode crawler
// i's token rule has ID base+i, whatever the number of addresses, and the
// address rules follow from base+len(crawlers) on, crawler by crawler; in
// the other modes the address rules take consecutive IDs from base.
func ModSecurity(w io.Writer, in Input, o ModSecOptions) (*Plan, error) {
	base := o.IDBase
	if base == 0 {
		base = DefaultModSecIDBase
	}
	if base < 1 || base > ModSecMaxID {
		return nil, fmt.Errorf("%w: modsecurity rule id base %d: use 1 to %d (1 to %d is the range for local rules)", ErrBadOption, base, ModSecMaxID, ModSecLocalIDMax)
	}
	p, err := NewPlan(in)
	if err != nil {
		return nil, err
	}
	type part struct {
		c      *CrawlerPlan
		chunks [][]netip.Prefix
	}
	if p.Mode == BlockSpoofed {
		if err := p.needTokens(); err != nil {
			return nil, err
		}
	}
	parts := make([]part, len(p.Crawlers))
	n := 0
	for i := range p.Crawlers {
		c := &p.Crawlers[i]
		if p.Mode == BlockSpoofed && len(c.Exempt) == 0 {
			return nil, fmt.Errorf("%w: %s has no genuine address and an empty IP list: a rule denying its tokens to every other address would deny the crawler itself", ErrNoCrawlerAddresses, p.label(c))
		}
		parts[i] = part{c, chunkPrefixes(c.crawlerSet(p.Mode), ModSecChunk)}
		n += len(parts[i].chunks)
		if p.Mode == BlockSpoofed {
			n++
		}
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: no crawler address left to match", ErrNoCrawlerAddresses)
	}
	if base > ModSecMaxID-n+1 {
		return nil, fmt.Errorf("%w: modsecurity rule id base %d leaves no room for %d rules", ErrBadOption, base, n)
	}
	last := base + n - 1

	set := p.crawlerSet()
	var what string
	switch {
	case p.Mode == BlockSpoofed && p.named:
		what = fmt.Sprintf("This file denies each crawler's User-Agent tokens (%s) from addresses that are not that crawler's, and all requests from %s seen spoofing one.", p.who("and"), plural(len(set), "address", "addresses"))
	case p.Mode == BlockSpoofed:
		what = fmt.Sprintf("This file denies %s claims from addresses that are not the crawler's, and all requests from %s seen spoofing it.", p.who("and"), plural(len(set), "address", "addresses"))
	case p.Mode == BlockBot:
		what = fmt.Sprintf("This file denies all requests from the %s %s.", p.whose(), plural(len(set), "address", "addresses"))
	case p.Mode == AllowBot:
		what = fmt.Sprintf("This file lets the %s %s past every later rule: include it before other rules.", p.whose(), plural(len(set), "address", "addresses"))
	}
	lists, note := "IP list", ""
	if p.named {
		lists = "IP lists"
		if p.Mode == BlockSpoofed {
			note = fmt.Sprintf(" (token rules %d to %d, one per crawler in order)", base, base+len(parts)-1)
		}
	}
	bw := bufio.NewWriter(w)
	msHeader(bw, in, p.Mode, what, lists, base, last, note)
	if !p.named {
		bw.WriteString("\n")
	}

	id := base
	if p.Mode == BlockSpoofed {
		id = base + len(parts)
	}
	for i, pt := range parts {
		c := pt.c
		tag := "tag:" + msQuote("lohibot-audit") + ",tag:" + msQuote("lohibot-audit/"+string(p.Mode))
		if p.named {
			tag += ",tag:" + msQuote("lohibot-audit/crawler/"+c.Name)
			bw.WriteString("\n")
			bw.WriteString(hashComment(fmt.Sprintf("%s (User-Agent %s): %s", c.Name, strings.Join(c.Tokens, ", "), plural(len(c.crawlerSet(p.Mode)), "address", "addresses"))))
		}
		// ipRules writes one rule per chunk of the address set: action
		// comes before log, actions after t:none.
		ipRules := func(msg, action, actions string) {
			for _, ch := range pt.chunks {
				fmt.Fprintf(bw, "SecRule REMOTE_ADDR %s \"id:%d,phase:1,%s,log,t:none%s,msg:%s,%s\"\n",
					msOperator("@ipMatch", msIPList(ch)), id, action, actions, msg, tag)
				id++
			}
		}
		who := p.label(c)
		switch p.Mode {
		case BlockSpoofed:
			op := msRegexOperator(tokenRegexp(c.Tokens))
			msg := msQuote(fmt.Sprintf("lohibot-audit: User-Agent claims %s from an address that is not the crawler", who))
			exempt := chunkPrefixes(c.Exempt, ModSecChunk)
			fmt.Fprintf(bw, "SecRule REQUEST_HEADERS:User-Agent %s \"id:%d,phase:1,deny,status:403,log,t:none,t:lowercase,msg:%s,%s,chain\"\n",
				op, base+i, msg, tag)
			for j, ch := range exempt {
				chain := ""
				if j < len(exempt)-1 {
					chain = ",chain"
				}
				fmt.Fprintf(bw, "    SecRule REMOTE_ADDR %s \"t:none%s\"\n", msOperator("!@ipMatch", msIPList(ch)), chain)
			}
			if !p.named && len(pt.chunks) > 0 {
				bw.WriteString("\n")
			}
			ipRules(msQuote(fmt.Sprintf("lohibot-audit: address seen claiming to be %s without being it", who)), "deny,status:403", "")
		case BlockBot:
			ipRules(msQuote(fmt.Sprintf("lohibot-audit: %s crawler address", who)), "deny,status:403", "")
		case AllowBot:
			ipRules(msQuote(fmt.Sprintf("lohibot-audit: %s crawler address, later rules skipped", who)), "pass", ",ctl:ruleEngine=Off")
		}
	}
	return p, bw.Flush()
}

// chunkPrefixes splits ps into runs of at most n.
func chunkPrefixes(ps []netip.Prefix, n int) [][]netip.Prefix {
	var out [][]netip.Prefix
	for len(ps) > n {
		out = append(out, ps[:n])
		ps = ps[n:]
	}
	if len(ps) > 0 {
		out = append(out, ps)
	}
	return out
}

// msIPList writes prefixes as an @ipMatch argument: comma separated, no
// spaces.
func msIPList(ps []netip.Prefix) string {
	parts := make([]string, len(ps))
	for i, q := range ps {
		parts[i] = ipfmt.Prefix(q)
	}
	return strings.Join(parts, ",")
}

// msOperator writes an operator and its argument as the double-quoted
// second field of a SecRule: double quotes and backslashes escaped, control
// bytes left out. The arguments it gets (address lists) hold neither: a
// doubled backslash would not read the same in ModSecurity 2 and 3 (see
// msRegexOperator).
func msOperator(op, arg string) string {
	var b strings.Builder
	b.WriteByte('"')
	b.WriteString(op)
	b.WriteByte(' ')
	writeBackslashEscaped(&b, arg)
	b.WriteByte('"')
	return b.String()
}

// msRegexOperator writes an @rx operator with the regular expression re as
// the double-quoted second field of a SecRule. re holds no double quote and
// no doubled backslash (tokenRegexp), so it goes in as it is: a backslash
// escaping a metacharacter reaches the regex engine of ModSecurity 2 and
// libmodsecurity 3 unchanged, where escaping it again would not (Apache
// reads a doubled backslash as one, libmodsecurity 3 as two).
func msRegexOperator(re string) string {
	return `"@rx ` + re + `"`
}

// msQuote writes s as a single-quoted action argument (msg:'...', tag:'...')
// that sits inside the double-quoted action list: only printable ASCII
// other than quotes and backslashes is kept as it is; quotes and
// backslashes become spaces, and anything else is left out, so the text
// can end neither the argument nor the action list.
func msQuote(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\'' || c == '"' || c == '\\':
			b.WriteByte(' ')
		case c < 0x20 || c >= 0x7f:
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// msHeader writes the file's header: what made it, what it does, from
// which inputs, when, and which rule IDs it uses (with note after them).
func msHeader(bw *bufio.Writer, in Input, m Mode, what, lists string, base, last int, note string) {
	ids := fmt.Sprintf("Rule IDs: %d", base)
	if last != base {
		ids = fmt.Sprintf("Rule IDs: %d to %d", base, last)
	}
	ids += note
	if last > ModSecLocalIDMax || base > ModSecLocalIDMax {
		ids += " (outside 1 to 99999, the range ModSecurity reserves for local rules)"
	}
	bw.WriteString(hashComment(
		fmt.Sprintf("lohibot-audit %s: ModSecurity rules (ModSecurity 2 and libmodsecurity 3), mode %s.", in.versionString(), m),
		what,
		"Inputs: "+in.sourcesString(0)+"; "+lists+": "+in.ipListString()+".",
		in.generatedString(),
		ids+". Include this file after SecRuleEngine On; regenerate it rather than editing it.",
	))
}
