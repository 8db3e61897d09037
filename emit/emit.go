// Package emit writes firewall and WAF rules against the impostors of the
// crawlers audited (or for or against the crawlers themselves): an
// nftables file for nft -f, Cloudflare custom rules and Lists API items,
// and ModSecurity SecRules for Apache (ModSecurity 2) and nginx
// (libmodsecurity 3).
//
// Every emitter takes typed values (an Input) and an io.Writer, and starts
// by computing a Plan: which addresses the rules block, spare or let
// through. The Plan enforces the safety rules of the product: a block set
// never holds loopback, private, link-local, multicast, unspecified, shared
// or reserved addresses, nor anything in Input.NeverBlock; in block-spoofed
// mode it never holds a genuine address or anything in a crawler's IP
// list either. No string from a log reaches a rule: rules are built from
// netip values and constants, and the only free text (the provenance in the
// header) is quoted for the rule language.
//
// Output is deterministic: sorted, and the same for the same input except
// for one "generated <RFC 3339 time>" marker, which SameIgnoringGenerated
// ignores so that cron can tell when the rules really changed.
package emit

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/crowdsec"
	"github.com/lohisoft/lohibot-audit/proxy"
)

// Mode is what the rules do.
type Mode string

// The modes of SPEC §6.
const (
	// BlockSpoofed blocks the addresses seen claiming to be the crawler
	// without being it; the WAF targets also block the product token from
	// every address that is not the crawler's.
	BlockSpoofed Mode = "block-spoofed"
	// BlockBot blocks the crawler's own addresses.
	BlockBot Mode = "block-bot"
	// AllowBot lets the crawler's addresses past other rules.
	AllowBot Mode = "allow-bot"
)

// Modes lists the modes in the order the help text shows them.
var Modes = []Mode{BlockSpoofed, BlockBot, AllowBot}

// ParseMode returns the Mode named s; the empty string is BlockSpoofed.
func ParseMode(s string) (Mode, error) {
	switch Mode(s) {
	case "":
		return BlockSpoofed, nil
	case BlockSpoofed, BlockBot, AllowBot:
		return Mode(s), nil
	}
	return "", fmt.Errorf("%w: unknown mode %q: use block-spoofed, block-bot or allow-bot", ErrBadOption, s)
}

// Errors returned by the emitters. Callers match them with errors.Is.
var (
	// ErrBadOption means an option (mode, TTL, hook, priority, table, list
	// name, rule ID) is not valid.
	ErrBadOption = errors.New("invalid option")
	// ErrNoCrawlerAddresses means a rule needs the crawler's addresses and
	// there are none: no genuine address and an empty IP list. In
	// block-spoofed mode a WAF rule would then block the token from every
	// address, the real crawler included.
	ErrNoCrawlerAddresses = errors.New("no crawler addresses")
	// ErrExpressionTooLong means a Cloudflare expression would exceed
	// CloudflareMaxExpression characters even with its block set moved to a
	// list.
	ErrExpressionTooLong = errors.New("cloudflare expression too long")
	// ErrListTooLong means a Cloudflare list would hold more than
	// CloudflareMaxListItems items.
	ErrListTooLong = errors.New("cloudflare list too long")
)

// Input is what the rules are made from. Addresses may come in any order,
// with duplicates and IPv4-mapped IPv6 forms; invalid ones are ignored.
type Input struct {
	// Mode is what the rules do; the zero value is BlockSpoofed.
	Mode Mode
	// Crawlers are the crawlers the rules are about, one or more (SPEC
	// §10), each with its tokens and addresses: block-spoofed blocks each
	// one's tokens from any address but its own, and no block set holds an
	// address that is any one's.
	Crawlers []CrawlerInput
	// Named makes the rules name their crawlers, as `emit --crawler`
	// writes them: a rule (and Cloudflare lists) per crawler under its
	// name. Without it the rules are those of one crawler and name none
	// but by its token (a run without --crawler): Crawlers then holds one
	// (with several, the rules name them all the same).
	Named bool
	// NeverBlock are prefixes no block rule may touch (--never-block): the
	// site's own networks, its proxies and CDNs.
	NeverBlock []netip.Prefix
	// Proxies are the CDN edges and trusted proxies (SPEC §13): no block
	// set ever holds an address of theirs, whatever the verdicts say. nil
	// means the built-in CDN edges.
	Proxies *proxy.Set
	// Sources name the inputs (log files or a report) for the header.
	Sources []string
	// IPListSource says where the crawlers' lists came from, for the
	// header; may be empty.
	IPListSource string
	// Generated is when the rules were made, for the header; the zero value
	// prints as "unknown".
	Generated time.Time
	// Version is the program version, for the header.
	Version string
	// Evidence, when not nil, is filled by AddReport with what was found
	// of each spoofing address (by address, IPv4-mapped ones unmapped; one
	// entry per crawler it claimed): the crowdsec target carries it in each
	// decision's alert.
	Evidence map[netip.Addr][]crowdsec.Evidence
}

// named reports whether the rules name their crawlers.
func (in Input) named() bool { return in.Named || len(in.Crawlers) > 1 }

// generatedPrefix starts the one line (or JSON phrase) of every output that
// changes from run to run.
const generatedPrefix = "generated "

// generatedString is the "generated <time>" marker.
func (in Input) generatedString() string {
	if in.Generated.IsZero() {
		return generatedPrefix + "unknown"
	}
	return generatedPrefix + in.Generated.UTC().Truncate(time.Second).Format(time.RFC3339)
}

// versionString is the version as it may appear in rule text: a plain
// version as it is, anything else quoted.
func (in Input) versionString() string {
	v := in.Version
	if v == "" {
		return "(unknown version)"
	}
	if plainWord(v) {
		return v
	}
	return quoteClip(v, 40)
}

// quoteClip quotes s with strconv.QuoteToASCII and, when that is longer
// than max bytes, cuts it and marks the cut: the result stays one line of
// ASCII that ends in a double quote.
func quoteClip(s string, max int) string {
	q := strconv.QuoteToASCII(s)
	if len(q) <= max || max < 8 {
		return q
	}
	return q[:max-4] + `..."`
}

// sourcesString lists the sources for a header, quoted, at most max of them
// (and a count of the rest). max <= 0 means all.
func (in Input) sourcesString(max int) string {
	if len(in.Sources) == 0 {
		return "none"
	}
	var b strings.Builder
	for i, s := range in.Sources {
		if max > 0 && i == max {
			fmt.Fprintf(&b, " and %d more", len(in.Sources)-max)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(quoteClip(s, maxQuoted))
	}
	return b.String()
}

// ipListString names the IP list for a header.
func (in Input) ipListString() string {
	if in.IPListSource == "" {
		return "unknown"
	}
	return quoteClip(in.IPListSource, maxQuoted)
}

// maxQuoted bounds each quoted name in a header.
const maxQuoted = 200

// plainWord reports whether s is non-empty and made only of letters,
// digits and ._+-: text that needs no quoting in any rule language here.
func plainWord(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '.', c == '_', c == '+', c == '-':
		default:
			return false
		}
	}
	return true
}

// hashComment returns text as '#' comment lines. The text is ASCII by
// construction (quoted with strconv.QuoteToASCII where it comes from
// outside); any control or non-ASCII byte left is escaped as \xHH, and a
// line never ends in a backslash, so a line can neither end early nor
// continue onto the next (Apache joins a line ending in a backslash with
// the next one, comments included).
func hashComment(lines ...string) string {
	var b strings.Builder
	for _, l := range lines {
		var line strings.Builder
		line.WriteString("#")
		if l != "" {
			line.WriteString(" ")
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if c < 0x20 || c >= 0x7f {
				fmt.Fprintf(&line, "\\x%02x", c)
				continue
			}
			line.WriteByte(c)
		}
		s := strings.TrimRight(line.String(), " \t")
		if strings.HasSuffix(s, "\\") {
			s = s[:len(s)-1] + "\\x5c"
		}
		b.WriteString(s)
		b.WriteString("\n")
	}
	return b.String()
}

// plural returns "1 address" or "n addresses" style counts.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}
