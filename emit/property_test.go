package emit

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"regexp"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot-audit/proxy"
)

// The safety property: whatever the input says, no rule blocks a genuine
// or listed address (in block-spoofed mode), a loopback, private,
// link-local, multicast, unspecified, shared or reserved address, a CDN's
// edge or a trusted proxy, or anything in --never-block; and no rule
// invents an address. It is checked
// on what the emitters actually write, read back from their output.

// ruleSets is what an output says it blocks, spares and allows.
type ruleSets struct {
	block, exempt, allow []netip.Prefix
}

var (
	nftElemLine  = regexp.MustCompile(`^\s*([0-9a-fA-F:.]+(?:/[0-9]+)?) timeout [0-9dhms]+,?$`)
	msIPMatch    = regexp.MustCompile(`^\s*SecRule REMOTE_ADDR "(!?)@ipMatch ([^"]*)" "([^"]*)"$`)
	nftRuleLine  = regexp.MustCompile(`^\s*ip6? saddr @[a-z0-9_]+ counter (drop|accept)$`)
	nftVerdictRE = regexp.MustCompile(`counter (drop|accept)`)
)

func mustPrefix(t testing.TB, s string) netip.Prefix {
	t.Helper()
	if p, err := netip.ParsePrefix(s); err == nil {
		return p
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		t.Fatalf("output holds %q, which is not an address", s)
	}
	return netip.PrefixFrom(a, a.BitLen())
}

// readNFT reads the elements and verdict back from an nftables file.
func readNFT(t testing.TB, mode Mode, out string) ruleSets {
	t.Helper()
	var elems []netip.Prefix
	verdicts := map[string]bool{}
	for _, line := range strings.Split(out, "\n") {
		if m := nftElemLine.FindStringSubmatch(line); m != nil {
			elems = append(elems, mustPrefix(t, m[1]))
		}
		if nftRuleLine.MatchString(line) {
			verdicts[nftVerdictRE.FindStringSubmatch(line)[1]] = true
		}
	}
	if mode == AllowBot {
		if verdicts["drop"] {
			t.Fatalf("allow-bot nftables file drops:\n%s", out)
		}
		return ruleSets{allow: elems}
	}
	if verdicts["accept"] {
		t.Fatalf("%s nftables file accepts:\n%s", mode, out)
	}
	return ruleSets{block: elems}
}

// readModSec reads the @ipMatch lists back from a ModSecurity file.
func readModSec(t testing.TB, out string) ruleSets {
	t.Helper()
	var rs ruleSets
	for _, line := range strings.Split(out, "\n") {
		m := msIPMatch.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		var ps []netip.Prefix
		for _, s := range strings.Split(m[2], ",") {
			ps = append(ps, mustPrefix(t, s))
		}
		switch {
		case m[1] == "!":
			rs.exempt = append(rs.exempt, ps...)
		case strings.Contains(m[3], "deny"):
			rs.block = append(rs.block, ps...)
		case strings.Contains(m[3], "ctl:ruleEngine=Off"):
			rs.allow = append(rs.allow, ps...)
		default:
			t.Fatalf("rule neither denies nor allows: %s", line)
		}
	}
	return rs
}

// readCloudflare reads the sets back from an expression: inline sets under
// a not are exempt, others block (or allow, for a skip rule), and $list
// references stand for the list output's items.
func readCloudflare(t testing.TB, mode Mode, expr string, list []netip.Prefix) ruleSets {
	t.Helper()
	n, err := parseCFExpr(expr)
	if err != nil {
		t.Fatalf("expression does not parse: %v\n%s", err, expr)
	}
	return cfSets(mode, n, func(string) []netip.Prefix { return list })
}

// cfSets reads the sets of a parsed expression: inline sets under a not
// are exempt, others block (or allow, for a skip rule); list gives the
// items of a $list.
func cfSets(mode Mode, n *cfNode, list func(name string) []netip.Prefix) ruleSets {
	var rs ruleSets
	var walk func(n *cfNode, negated bool)
	walk = func(n *cfNode, negated bool) {
		switch n.op {
		case "and", "or":
			walk(n.left, negated)
			walk(n.right, negated)
		case "not":
			walk(n.left, !negated)
		case "in":
			set := n.set
			if n.list != "" {
				set = list(n.list)
			}
			switch {
			case negated:
				rs.exempt = append(rs.exempt, set...)
			case mode == AllowBot:
				rs.allow = append(rs.allow, set...)
			default:
				rs.block = append(rs.block, set...)
			}
		}
	}
	walk(n, false)
	return rs
}

// checkSafety checks what an output blocks, spares and allows against the
// input it was made from.
func checkSafety(t testing.TB, what string, in Input, rs ruleSets) {
	t.Helper()
	var genuine []netip.Prefix
	for _, a := range in.one().Genuine {
		if a = normAddr(a); a.IsValid() {
			genuine = append(genuine, netip.PrefixFrom(a, a.BitLen()))
		}
	}
	listed := normPrefixes(in.one().Listed)
	never := normPrefixes(in.NeverBlock)
	crawler := append(append([]netip.Prefix{}, listed...), genuine...)
	mode, _ := ParseMode(string(in.Mode))

	for _, q := range rs.block {
		if r := specialReason(q); r != "" {
			t.Errorf("%s: blocks %s, which is %s", what, q, r)
		}
		if overlapsAny(q, never) {
			t.Errorf("%s: blocks %s, which overlaps --never-block %v", what, q, never)
		}
		if in.Proxies.Overlaps(q) || proxy.BuiltinEdges().CDN(q.Addr()) != nil {
			name, _ := in.Proxies.Proxy(q.Addr())
			t.Errorf("%s: blocks %s, which is (or overlaps) the proxy %q", what, q, name)
		}
		switch mode {
		case BlockSpoofed:
			if overlapsAny(q, listed) {
				t.Errorf("%s: blocks %s, which overlaps the IP list %v", what, q, listed)
			}
			if overlapsAny(q, genuine) {
				t.Errorf("%s: blocks %s, which holds a genuine address", what, q)
			}
			seen := false
			for _, a := range in.one().Spoofed {
				if a = normAddr(a); a.IsValid() && q.Contains(a) {
					seen = true
					break
				}
			}
			if !seen {
				t.Errorf("%s: blocks %s, which no spoofed address is in", what, q)
			}
		case BlockBot:
			if !overlapsAny(q, crawler) {
				t.Errorf("%s: blocks %s, which is not the crawler's", what, q)
			}
		case AllowBot:
			t.Errorf("%s: allow-bot blocks %s", what, q)
		}
	}
	for _, q := range rs.allow {
		if mode != AllowBot {
			t.Errorf("%s: %s allows %s", what, mode, q)
		}
		if r := specialReason(q); r != "" {
			t.Errorf("%s: allows %s, which is %s", what, q, r)
		}
		if !overlapsAny(q, crawler) {
			t.Errorf("%s: allows %s, which is not the crawler's", what, q)
		}
	}
	if mode == BlockSpoofed && len(rs.exempt) > 0 {
		// The token rule must spare every genuine and listed address.
		for _, q := range crawler {
			covered := false
			for _, e := range rs.exempt {
				if e.Bits() <= q.Bits() && e.Contains(q.Addr()) {
					covered = true
					break
				}
			}
			if !covered {
				t.Errorf("%s: the token rule does not spare %s", what, q)
			}
		}
	}
}

// checkAllTargets writes in with every emitter and checks the safety
// property on each output. Errors the emitters may rightly return (no
// crawler address, Cloudflare limits) end that target's check.
func checkAllTargets(t testing.TB, in Input) {
	t.Helper()
	mode, err := ParseMode(string(in.Mode))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range []NFTOptions{{}, {SetOnly: true}} {
		var b bytes.Buffer
		if _, err := NFTables(&b, in, o); err != nil {
			t.Fatalf("nftables: %v", err)
		}
		checkSafety(t, fmt.Sprintf("nftables(set-only=%v)", o.SetOnly), in, readNFT(t, mode, b.String()))
	}
	if mode == BlockSpoofed {
		ds, _, err := CrowdSecDecisions(in)
		if err != nil {
			t.Fatalf("crowdsec: %v", err)
		}
		var block []netip.Prefix
		for _, d := range ds {
			block = append(block, d.Prefix)
		}
		checkSafety(t, "crowdsec", in, ruleSets{block: block})
	}
	var ms bytes.Buffer
	if _, err := ModSecurity(&ms, in, ModSecOptions{}); err == nil {
		checkSafety(t, "modsecurity", in, readModSec(t, ms.String()))
	} else if !isExpected(err) {
		t.Fatalf("modsecurity: %v", err)
	}
	var list bytes.Buffer
	var items []netip.Prefix
	if _, err := Cloudflare(&list, in, CloudflareOptions{Output: CloudflareList}); err == nil {
		if items, err = checkCFList(list.Bytes()); err != nil {
			t.Fatalf("cloudflare list: %v", err)
		}
		what := "cloudflare list"
		if mode == AllowBot {
			checkSafety(t, what, in, ruleSets{allow: items})
		} else {
			checkSafety(t, what, in, ruleSets{block: items})
		}
	} else if !isExpected(err) {
		t.Fatalf("cloudflare list: %v", err)
	}
	for _, o := range []CloudflareOptions{{}, {ListName: "l"}} {
		var b bytes.Buffer
		if _, err := Cloudflare(&b, in, o); err != nil {
			if !isExpected(err) {
				t.Fatalf("cloudflare: %v", err)
			}
			continue
		}
		rules, err := checkCFRuleset(b.Bytes())
		if err != nil {
			t.Fatalf("cloudflare ruleset: %v\n%s", err, b.String())
		}
		checkSafety(t, "cloudflare ruleset", in, readCloudflare(t, mode, rules[0].Expression, items))
	}
}

func isExpected(err error) bool {
	for _, e := range []error{ErrNoCrawlerAddresses, ErrListTooLong, ErrExpressionTooLong} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// randomInput makes an input meant to trip the safety rules: spoofed
// addresses drawn from special ranges, from --never-block, from the IP
// list and the genuine addresses, IPv4-mapped forms, and plain ones.
func randomInput(r *rand.Rand, mode Mode) Input {
	randAddr := func() netip.Addr {
		if r.IntN(3) == 0 {
			var b [16]byte
			for i := range b {
				b[i] = byte(r.Uint32())
			}
			if r.IntN(2) == 0 {
				b[0], b[1], b[2], b[3] = 0x20, 0x01, 0x0d, 0xb8
			}
			return netip.AddrFrom16(b)
		}
		return netip.AddrFrom4([4]byte{byte(r.Uint32()), byte(r.Uint32()), byte(r.Uint32()), byte(r.Uint32())})
	}
	inside := func(p netip.Prefix) netip.Addr {
		b := p.Addr().AsSlice()
		for i := p.Bits(); i < len(b)*8; i++ {
			if r.IntN(2) == 0 {
				b[i/8] |= 0x80 >> (i % 8)
			}
		}
		a, _ := netip.AddrFromSlice(b)
		return a
	}
	randPrefix := func(a netip.Addr) netip.Prefix {
		lo := 8
		if a.Is6() {
			lo = 16
		}
		if r.IntN(20) == 0 {
			lo = 0
		}
		p, _ := a.Prefix(lo + r.IntN(a.BitLen()-lo+1))
		return p
	}
	in := Input{Mode: mode}
	var trusted []netip.Prefix
	if r.IntN(2) == 0 {
		specs := []string{}
		for i := r.IntN(3); i > 0; i-- {
			p := randPrefix(randAddr())
			if p.Addr().Is4() && p.Bits() < 8 || p.Addr().Is6() && p.Bits() < 16 {
				continue
			}
			trusted = append(trusted, p)
			specs = append(specs, p.String())
		}
		if r.IntN(2) == 0 {
			specs = append(specs, "private", proxy.CDNs()[r.IntN(len(proxy.CDNs()))].Name)
		}
		set, err := proxy.NewSet(nil, specs, r.IntN(4) == 0)
		if err != nil {
			panic(err)
		}
		in.Proxies = set
	}
	edges := proxy.BuiltinEdges().Lists
	for i := r.IntN(4); i > 0; i-- {
		in.one().Listed = append(in.one().Listed, randPrefix(randAddr()))
	}
	if r.IntN(4) > 0 {
		in.one().Listed = append(in.one().Listed, prefixes("79.139.58.98/32", "79.139.58.121/32")...)
	}
	for i := r.IntN(4); i > 0; i-- {
		in.one().Genuine = append(in.one().Genuine, randAddr())
	}
	for i := r.IntN(3); i > 0; i-- {
		in.NeverBlock = append(in.NeverBlock, randPrefix(randAddr()))
	}
	for i := 1 + r.IntN(40); i > 0; i-- {
		var a netip.Addr
		switch r.IntN(10) {
		case 8:
			l := edges[r.IntN(len(edges))]
			a = inside(l.Prefixes[r.IntN(len(l.Prefixes))])
		case 9:
			if len(trusted) > 0 {
				a = inside(trusted[r.IntN(len(trusted))])
			}
		case 0:
			a = inside(specialRanges[r.IntN(len(specialRanges))].prefix)
		case 1:
			if len(in.NeverBlock) > 0 {
				a = inside(in.NeverBlock[r.IntN(len(in.NeverBlock))])
			}
		case 2:
			if len(in.one().Listed) > 0 {
				a = inside(in.one().Listed[r.IntN(len(in.one().Listed))])
			}
		case 3:
			if len(in.one().Genuine) > 0 {
				a = in.one().Genuine[r.IntN(len(in.one().Genuine))]
			}
		case 4:
			if len(in.one().Genuine) > 0 && in.one().Genuine[0].Is6() {
				// a neighbour in the genuine address's /64
				g := in.one().Genuine[0].As16()
				g[15] ^= byte(1 + r.IntN(255))
				a = netip.AddrFrom16(g)
			}
		default:
			a = randAddr()
		}
		if a.Is4() && r.IntN(5) == 0 {
			a = netip.AddrFrom16(a.As16()) // IPv4-mapped
		}
		in.one().Spoofed = append(in.one().Spoofed, a)
	}
	if r.IntN(4) == 0 && len(in.one().Genuine) > 0 {
		// genuine addresses that are special: they must not be allowed
		in.one().Genuine = append(in.one().Genuine, inside(specialRanges[r.IntN(len(specialRanges))].prefix))
	}
	return in
}

// TestSafetyProperty checks the safety property on many random inputs,
// for every mode and every target.
func TestSafetyProperty(t *testing.T) {
	n := 400
	if testing.Short() {
		n = 50
	}
	for _, mode := range Modes {
		t.Run(string(mode), func(t *testing.T) {
			r := rand.New(rand.NewPCG(42, uint64(len(mode))))
			for i := 0; i < n; i++ {
				in := randomInput(r, mode)
				checkAllTargets(t, in)
				if t.Failed() {
					t.Fatalf("input %d: %+v", i, in)
				}
			}
		})
	}
}

// TestSafetyCheckerCatches shows that checkSafety fails on outputs that
// break the property.
func TestSafetyCheckerCatches(t *testing.T) {
	in := fixtureInput(BlockSpoofed)
	bad := []ruleSets{
		{block: prefixes("10.0.0.5/32")},
		{block: prefixes("79.139.58.98/32")},
		{block: prefixes("198.51.100.200/32")},
		{block: prefixes("192.0.2.10/32")},
		{block: prefixes("198.51.100.99/32")}, // never seen spoofing
		{block: prefixes("0.0.0.0/0")},
		{exempt: prefixes("79.139.58.98/32")}, // the token rule would block 79.139.58.121
		{allow: prefixes("79.139.58.98/32")},  // allow in block-spoofed
	}
	for i, rs := range bad {
		ft := &fakeT{}
		checkSafety(ft, "test", in, rs)
		if !ft.failed {
			t.Errorf("case %d: %+v passed the safety check", i, rs)
		}
	}
	// A Cloudflare edge seen spoofing, and a trusted proxy.
	in.one().Spoofed = append(in.one().Spoofed, netip.MustParseAddr("162.158.106.126"), netip.MustParseAddr("203.0.113.9"))
	in.Proxies, _ = proxy.NewSet(nil, []string{"203.0.113.0/24"}, false)
	for _, q := range []string{"162.158.106.126/32", "203.0.113.9/32"} {
		ft := &fakeT{}
		checkSafety(ft, "test", in, ruleSets{block: prefixes(q)})
		if !ft.failed {
			t.Errorf("blocking %s passed the safety check", q)
		}
	}
}

// fakeT records failures without failing the test; checkSafety uses
// only Helper and Errorf.
type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Helper()               {}
func (f *fakeT) Errorf(string, ...any) { f.failed = true }

// overlapsAny reports whether p overlaps one of set, comparing every pair.
func overlapsAny(p netip.Prefix, set []netip.Prefix) bool {
	for _, q := range set {
		if q.Overlaps(p) {
			return true
		}
	}
	return false
}
