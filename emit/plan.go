package emit

import (
	"cmp"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"

	"github.com/lohisoft/lohibot-audit/internal/addrset"
	"github.com/lohisoft/lohibot-audit/internal/ipfmt"
	"github.com/lohisoft/lohibot-audit/proxy"
)

// Plan is what a set of rules does, after the safety rules: every emitter
// builds one from its Input and writes it out.
type Plan struct {
	// Mode is the Input's mode.
	Mode Mode
	// Block are the prefixes the rules block: the spoofing addresses in
	// BlockSpoofed mode, the crawler's addresses in BlockBot mode, none in
	// AllowBot mode. Sorted (IPv4 first), without overlaps.
	Block []netip.Prefix
	// Exempt are the crawler's addresses (genuine ones and the IP list):
	// in BlockSpoofed mode the WAF token rule spares them. Sorted, without
	// overlaps; empty in the other modes.
	Exempt []netip.Prefix
	// Allow are the crawler's addresses that AllowBot rules let through.
	// Sorted, without overlaps; empty in the other modes.
	Allow []netip.Prefix
	// Skipped are the addresses the safety rules kept out of Block (or
	// Allow), each with the reason, sorted by prefix.
	Skipped []Skipped
	// Notes are things the user should know about the output (such as a
	// Cloudflare list the expression refers to); the emitter fills them.
	Notes []string
	// Crawlers are each crawler's part, in the order of Input.Crawlers;
	// Block, Exempt and Allow are their unions.
	Crawlers []CrawlerPlan

	// named says whether the rules name their crawlers (Input.Named);
	// title names the one crawler of rules that do not, by its first
	// token as given.
	named bool
	title string
}

// Skipped is an address kept out of a rule, and why.
type Skipped struct {
	Prefix netip.Prefix
	Reason SkipReason
	// Crawler names the crawler whose rule left it out, when the rules
	// name their crawlers (Input.Named).
	Crawler string
}

// SkipReason says why an address was kept out of a rule.
type SkipReason string

// SkippedBy groups the plan's skipped prefixes by reason: the reasons in
// order of their names, each with its prefixes in the order skipped.
func (p *Plan) SkippedBy() ([]SkipReason, map[SkipReason][]netip.Prefix) {
	by := map[SkipReason][]netip.Prefix{}
	for _, s := range p.Skipped {
		by[s.Reason] = append(by[s.Reason], s.Prefix)
	}
	reasons := slices.Sorted(maps.Keys(by))
	return reasons, by
}

// The reasons an address is kept out of a block (or allow) set.
const (
	SkipGenuine     SkipReason = "genuine"     // verified to be the crawler
	SkipListed      SkipReason = "listed"      // in the crawler's IP list
	SkipNeverBlock  SkipReason = "never-block" // in --never-block
	SkipProxy       SkipReason = "proxy"       // a CDN's edge or a trusted proxy (SPEC §13)
	SkipUnspecified SkipReason = "unspecified" // 0.0.0.0/8, ::
	SkipLoopback    SkipReason = "loopback"    // 127.0.0.0/8, ::1
	SkipPrivate     SkipReason = "private"     // RFC 1918, fc00::/7
	SkipLinkLocal   SkipReason = "link-local"  // 169.254.0.0/16, fe80::/10
	SkipMulticast   SkipReason = "multicast"   // 224.0.0.0/4, ff00::/8
	SkipShared      SkipReason = "shared"      // 100.64.0.0/10 (carrier-grade NAT)
	SkipReserved    SkipReason = "reserved"    // 240.0.0.0/4, broadcast, 192.0.0.0/24, 198.18.0.0/15
	SkipTooWide     SkipReason = "too-wide"    // wider than the target accepts (Cloudflare lists: /8)
)

// Special reports whether r is one of the address ranges that no rule of
// this package ever blocks whatever the input (as opposed to genuine,
// listed and never-block, which depend on the input).
func (r SkipReason) Special() bool {
	switch r {
	case SkipGenuine, SkipListed, SkipNeverBlock, SkipTooWide, SkipProxy:
		return false
	}
	return true
}

// specialRange is an address range no rule blocks (or allows).
type specialRange struct {
	prefix netip.Prefix
	reason SkipReason
}

// specialRanges are checked in order; the first that overlaps names the
// reason.
var specialRanges = []specialRange{
	{netip.MustParsePrefix("0.0.0.0/8"), SkipUnspecified},
	{netip.MustParsePrefix("::/128"), SkipUnspecified},
	{netip.MustParsePrefix("127.0.0.0/8"), SkipLoopback},
	{netip.MustParsePrefix("::1/128"), SkipLoopback},
	{netip.MustParsePrefix("10.0.0.0/8"), SkipPrivate},
	{netip.MustParsePrefix("172.16.0.0/12"), SkipPrivate},
	{netip.MustParsePrefix("192.168.0.0/16"), SkipPrivate},
	{netip.MustParsePrefix("fc00::/7"), SkipPrivate},
	{netip.MustParsePrefix("169.254.0.0/16"), SkipLinkLocal},
	{netip.MustParsePrefix("fe80::/10"), SkipLinkLocal},
	{netip.MustParsePrefix("224.0.0.0/4"), SkipMulticast},
	{netip.MustParsePrefix("ff00::/8"), SkipMulticast},
	{netip.MustParsePrefix("100.64.0.0/10"), SkipShared},
	{netip.MustParsePrefix("240.0.0.0/4"), SkipReserved},
	{netip.MustParsePrefix("192.0.0.0/24"), SkipReserved},  // IETF protocol assignments
	{netip.MustParsePrefix("198.18.0.0/15"), SkipReserved}, // benchmarking
	// IPv4-mapped IPv6: unmapped before the check, so only a prefix wider
	// than /96 can still reach here; it stands for IPv4 space at large.
	{netip.MustParsePrefix("::ffff:0:0/96"), SkipReserved},
}

// specialReason returns why p may never be in a rule, or "" when it may.
// An IPv6 prefix that carries IPv4 addresses (NAT64, 6to4) is also judged
// by the IPv4 range it carries.
func specialReason(p netip.Prefix) SkipReason {
	for _, s := range specialRanges {
		if s.prefix.Overlaps(p) {
			return s.reason
		}
	}
	if p.Addr().Is6() {
		return embeddedReason(p)
	}
	return ""
}

// v4Embedding is a way IPv6 addresses carry an IPv4 address: under prefix,
// the 32 bits start at bit at, passing over bits 64-71 (the "u" octet of
// RFC 6052 §2.2) when they reach it.
type v4Embedding struct {
	prefix netip.Prefix
	at     int
}

// v4Embeddings are the IPv6 ranges whose addresses stand for IPv4 ones. A
// network may put its local-use NAT64 prefix (RFC 8215) anywhere in
// 64:ff9b:1::/48 with any of RFC 6052's lengths from /48 on, so an address
// there is read in each of those ways, and it is never blocked when one of
// the readings is.
var v4Embeddings = []v4Embedding{
	{netip.MustParsePrefix("64:ff9b::/96"), 96},   // NAT64 well-known prefix (RFC 6052)
	{netip.MustParsePrefix("64:ff9b:1::/48"), 48}, // NAT64 local use (RFC 8215)
	{netip.MustParsePrefix("64:ff9b:1::/48"), 56},
	{netip.MustParsePrefix("64:ff9b:1::/48"), 64},
	{netip.MustParsePrefix("64:ff9b:1::/48"), 96},
	{netip.MustParsePrefix("2002::/16"), 16}, // 6to4 (RFC 3056)
}

// embeddedReason returns why the IPv4 range an IPv6 prefix carries may
// never be in a rule, or "". A prefix that holds a whole translation
// prefix carries all of IPv4, and so the reserved range too.
func embeddedReason(p netip.Prefix) SkipReason {
	for _, e := range v4Embeddings {
		if !e.prefix.Overlaps(p) {
			continue
		}
		if p.Bits() < e.prefix.Bits() {
			return SkipReserved
		}
		if r := specialReason(embeddedV4(p, e.at)); r != "" {
			return r
		}
	}
	return ""
}

// embeddedV4 returns the IPv4 prefix that the IPv6 prefix p carries from
// bit at on: the IPv4 bits that p fixes, the others left open.
func embeddedV4(p netip.Prefix, at int) netip.Prefix {
	b := p.Addr().As16()
	var v4 [4]byte
	n := 0
	pos := at
	for i := 0; i < 32; i++ {
		if pos >= 64 && pos < 72 && at < 96 {
			pos = 72
		}
		if pos >= p.Bits() {
			break
		}
		if b[pos/8]&(0x80>>(pos%8)) != 0 {
			v4[i/8] |= 0x80 >> (i % 8)
		}
		n++
		pos++
	}
	return netip.PrefixFrom(netip.AddrFrom4(v4), n)
}

// NewPlan applies the safety rules to in and returns what the rules do. It
// fails only on an unknown mode.
func NewPlan(in Input) (*Plan, error) {
	return newPlan(in, planLimits{v6Bits: 128})
}

// planLimits adapt a Plan to what a target accepts.
type planLimits struct {
	// v6Bits widens IPv6 block entries to a /v6Bits prefix (Cloudflare
	// lists take IPv6 ranges up to /64 only). A widened prefix is checked
	// whole, so it is dropped when any part of it is protected.
	v6Bits int
	// minBits4 and minBits6 are the widest prefixes the target takes in a
	// block or allow set; wider ones are skipped as too wide. Zero means no
	// limit.
	minBits4, minBits6 int
}

// tooWide reports whether q is wider than the limits allow.
func (l planLimits) tooWide(q netip.Prefix) bool {
	if q.Addr().Is4() {
		return q.Bits() < l.minBits4
	}
	return q.Bits() < l.minBits6
}

// sortSkipped sorts skips by prefix, reason and crawler and drops
// duplicates.
func sortSkipped(skipped []Skipped) []Skipped {
	slices.SortFunc(skipped, func(a, b Skipped) int {
		if c := comparePrefix(a.Prefix, b.Prefix); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Reason, b.Reason); c != 0 {
			return c
		}
		return cmp.Compare(a.Crawler, b.Crawler)
	})
	return slices.Compact(skipped)
}

// share is one crawler's addresses, normalised: its IP list, its genuine
// addresses, and both together.
type share struct {
	listed, genuine []netip.Prefix
	// crawler is every prefix as given: each is checked on its own before
	// the survivors are collapsed, so that one bad prefix cannot swallow
	// good ones it happens to hold.
	crawler []netip.Prefix
}

func newShare(genuineAddrs []netip.Addr, listedPrefixes []netip.Prefix) share {
	listed := normPrefixes(listedPrefixes)
	genuine := make([]netip.Prefix, 0, len(genuineAddrs))
	for _, a := range genuineAddrs {
		if a = normAddr(a); a.IsValid() {
			genuine = append(genuine, netip.PrefixFrom(a, a.BitLen()))
		}
	}
	genuine = collapse(genuine)
	crawler := append(slices.Clone(listed), genuine...)
	slices.SortFunc(crawler, comparePrefix)
	crawler = slices.Compact(crawler)
	return share{listed: listed, genuine: genuine, crawler: crawler}
}

// plan applies the safety rules to one crawler's share in mode: spoofed
// are its spoofing addresses, protect the addresses no block set may hold
// (its own share, or with several crawlers every crawler's), never the
// --never-block prefixes, nor proxies' (CDN edges and trusted proxies; nil:
// the built-in CDN edges). skip is told of every address kept out.
func (s share) plan(mode Mode, spoofed []netip.Addr, protect share, never []netip.Prefix, proxies *proxy.Set, lim planLimits, skip func(netip.Prefix, SkipReason)) (block, exempt, allow []netip.Prefix) {
	listed, genuine, neverSet := addrset.New(protect.listed), addrset.New(protect.genuine), addrset.New(never)
	blockable := func(q netip.Prefix) bool {
		if r := specialReason(q); r != "" {
			skip(q, r)
			return false
		}
		if lim.tooWide(q) {
			skip(q, SkipTooWide)
			return false
		}
		if proxies.Overlaps(q) {
			// An edge forwards everyone: blocking it blocks every
			// visitor coming through it.
			skip(q, SkipProxy)
			return false
		}
		if neverSet.Overlaps(q) {
			skip(q, SkipNeverBlock)
			return false
		}
		return true
	}

	switch mode {
	case BlockSpoofed:
		exempt = collapse(s.crawler)
		block = make([]netip.Prefix, 0, len(spoofed))
		for _, a := range spoofed {
			a = normAddr(a)
			if !a.IsValid() {
				continue
			}
			q := widen(netip.PrefixFrom(a, a.BitLen()), lim.v6Bits)
			switch {
			case listed.Overlaps(q):
				skip(q, SkipListed)
			case genuine.Overlaps(q):
				skip(q, SkipGenuine)
			case blockable(q):
				block = append(block, q)
			}
		}
		block = collapseOwned(block)
	case BlockBot:
		for _, q := range s.crawler {
			if q = widen(q, lim.v6Bits); blockable(q) {
				block = append(block, q)
			}
		}
		block = collapseOwned(block)
	case AllowBot:
		for _, q := range s.crawler {
			if r := specialReason(q); r != "" {
				skip(q, r)
				continue
			}
			if lim.tooWide(q) {
				skip(q, SkipTooWide)
				continue
			}
			allow = append(allow, q)
		}
		allow = collapseOwned(allow)
	}
	return block, exempt, allow
}

// crawlerSet is the set the mode's rules match on the address alone: Block,
// or Allow in AllowBot mode.
func (p *Plan) crawlerSet() []netip.Prefix {
	if p.Mode == AllowBot {
		return p.Allow
	}
	return p.Block
}

// BadPrefixError is the error of ParseNeverBlock for a value that is
// neither an address nor a CIDR prefix.
type BadPrefixError struct{ Value string }

func (e *BadPrefixError) Error() string {
	return fmt.Sprintf("%q is neither an address nor a CIDR such as 192.0.2.0/24", e.Value)
}

// ParseNeverBlock parses the prefixes no rule may block (--never-block):
// CIDR prefixes (masked) or addresses (zones dropped), each value possibly
// a comma-separated list. A value that is neither is a *BadPrefixError.
func ParseNeverBlock(values []string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, v := range values {
		for _, s := range strings.Split(v, ",") {
			s = strings.TrimSpace(s)
			if s == "" {
				continue
			}
			if p, err := netip.ParsePrefix(s); err == nil {
				out = append(out, p.Masked())
				continue
			}
			a, err := netip.ParseAddr(s)
			if err != nil {
				return nil, &BadPrefixError{Value: s}
			}
			a = a.WithZone("")
			out = append(out, netip.PrefixFrom(a, a.BitLen()))
		}
	}
	return out, nil
}

// normAddr unmaps IPv4-mapped IPv6 addresses and drops zones; the zero
// Addr stays invalid.
func normAddr(a netip.Addr) netip.Addr {
	if !a.IsValid() {
		return a
	}
	return a.Unmap().WithZone("")
}

// normPrefix masks p and turns an IPv4-mapped IPv6 prefix of /96 or longer
// into the IPv4 prefix it stands for. An invalid prefix stays invalid.
func normPrefix(p netip.Prefix) netip.Prefix {
	if !p.IsValid() {
		return netip.Prefix{}
	}
	a := p.Addr().WithZone("")
	bits := p.Bits()
	if a.Is4In6() && bits >= 96 {
		a, bits = a.Unmap(), bits-96
	}
	q, err := a.Prefix(bits)
	if err != nil {
		return netip.Prefix{}
	}
	return q
}

// normPrefixes normalises and sorts ps, dropping invalid ones and
// duplicates; prefixes that hold others are kept alongside them.
func normPrefixes(ps []netip.Prefix) []netip.Prefix {
	out := make([]netip.Prefix, 0, len(ps))
	for _, p := range ps {
		if q := normPrefix(p); q.IsValid() {
			out = append(out, q)
		}
	}
	slices.SortFunc(out, comparePrefix)
	return slices.Compact(out)
}

// widen turns an IPv6 prefix longer than /bits into the /bits prefix that
// holds it. IPv4 prefixes and bits >= 128 leave p as it is.
func widen(p netip.Prefix, bits int) netip.Prefix {
	if !p.Addr().Is6() || bits >= 128 || p.Bits() <= bits {
		return p
	}
	q, err := p.Addr().Prefix(bits)
	if err != nil {
		return p
	}
	return q
}

// comparePrefix orders prefixes by address (IPv4 first), then by length,
// shorter first.
func comparePrefix(a, b netip.Prefix) int {
	if c := a.Addr().Compare(b.Addr()); c != 0 {
		return c
	}
	return cmp.Compare(a.Bits(), b.Bits())
}

// collapse sorts ps and drops every prefix that another one holds. CIDR
// prefixes are nested or disjoint, so after sorting a prefix is held by
// another only if the last one kept holds it.
func collapse(ps []netip.Prefix) []netip.Prefix {
	return collapseOwned(slices.Clone(ps))
}

// collapseOwned is collapse in place, for a slice the caller no longer
// needs: a million spoofing addresses are not copied once more.
func collapseOwned(ps []netip.Prefix) []netip.Prefix {
	if len(ps) == 0 {
		return nil
	}
	slices.SortFunc(ps, comparePrefix)
	out := ps[:0]
	for _, p := range ps {
		if n := len(out); n > 0 {
			last := out[n-1]
			if last.Addr().BitLen() == p.Addr().BitLen() && last.Bits() <= p.Bits() && last.Contains(p.Addr()) {
				continue
			}
		}
		out = append(out, p)
	}
	return out
}

// split4and6 splits sorted prefixes (IPv4 first) into IPv4 and IPv6
// ones, without copying them.
func split4and6(ps []netip.Prefix) (v4, v6 []netip.Prefix) {
	i, _ := slices.BinarySearchFunc(ps, true, func(p netip.Prefix, _ bool) int {
		if p.Addr().Is4() {
			return -1
		}
		return 1
	})
	return ps[:i:i], ps[i:]
}

// String describes a skip for a warning.
func (s Skipped) String() string {
	switch s.Reason {
	case SkipGenuine:
		return fmt.Sprintf("%s is not blocked: it holds a genuine crawler address", ipfmt.Prefix(s.Prefix))
	case SkipListed:
		return fmt.Sprintf("%s is not blocked: it overlaps the crawler's IP list", ipfmt.Prefix(s.Prefix))
	case SkipNeverBlock:
		return fmt.Sprintf("%s is not blocked: it overlaps --never-block", ipfmt.Prefix(s.Prefix))
	case SkipProxy:
		return fmt.Sprintf("%s is not blocked: it is (or overlaps) a CDN's edge or a trusted proxy, which forwards every visitor's requests", ipfmt.Prefix(s.Prefix))
	case SkipTooWide:
		return fmt.Sprintf("%s is left out of the rules: the range is wider than the target accepts", ipfmt.Prefix(s.Prefix))
	}
	return fmt.Sprintf("%s is left out of the rules: it is (or overlaps) %s address space", ipfmt.Prefix(s.Prefix), s.Reason)
}
