package emit

import (
	"bytes"
	"fmt"
	"net/netip"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/ipfmt"
	"github.com/lohisoft/lohibot-audit/internal/testutil"
)

// hostileInput is the fixture with provenance text crafted to break out
// of comments and quotes of every rule language.
func hostileInput(mode Mode) Input {
	in := fixtureInput(mode)
	in.Sources = []string{
		"access.log\nadd table inet pwned\n",
		`x"; drop; "\`,
		"a\\\nSecRule REMOTE_ADDR \"@ipMatch 0.0.0.0/0\" \"id:1,phase:1,deny\"",
		"}\n}\ntable inet pwned {",
		"\u202enaughty\u0000\x1b[31m",
		"' ,msg:'x',chain\\",
	}
	in.IPListSource = "file\r\nSecRuleEngine Off\n#"
	in.Version = "1.0\ndelete table inet filter"
	return in
}

// largeInput has thousands of spoofers (IPv4 and IPv6), enough to split
// ModSecurity lists and to move Cloudflare's block set to a list.
func largeInput(mode Mode) Input {
	in := fixtureInput(mode)
	for i := 0; i < 3000; i++ {
		in.one().Spoofed = append(in.one().Spoofed, netip.AddrFrom4([4]byte{45, 18 + byte(i/65536), byte(i / 256), byte(i)}))
	}
	for i := 0; i < 700; i++ {
		in.one().Spoofed = append(in.one().Spoofed, netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 0xa0, byte(i >> 8), byte(i), 0, 0, 0, 0, 0, 0, 0, 0, 1}))
	}
	for i := 0; i < 1200; i++ {
		in.one().Genuine = append(in.one().Genuine, netip.AddrFrom4([4]byte{192, 0, 2 + byte(i/250), byte(i%250 + 1)}))
	}
	// IPv4 and IPv6 ranges in the IP list, for block-bot and allow-bot.
	in.one().Listed = append(in.one().Listed, prefixes("2001:db8:ff::/48", "79.139.60.0/22")...)
	return in
}

// nftTargets are the nftables variants checked with the real nft.
var nftTargets = []struct {
	name string
	opts NFTOptions
}{
	{"default", NFTOptions{}},
	{"set-only", NFTOptions{SetOnly: true}},
	{"set-only-ip-family", NFTOptions{SetOnly: true, Table: "ip filter"}},
	{"prerouting-raw", NFTOptions{Hook: "prerouting", Priority: "raw", TTL: 90 * time.Minute}},
	{"forward-number", NFTOptions{Hook: "forward", Priority: "-150", TTL: time.Second}},
}

// TestNFTablesRealCheck runs nft -c -f on every mode and variant, with the
// fixture, hostile provenance, large sets and an empty input.
func TestNFTablesRealCheck(t *testing.T) {
	nft := testutil.NeedTool(t, ".ci/install-rule-checkers", "nft")
	inputs := map[string]func(Mode) Input{
		"fixture": fixtureInput,
		"hostile": hostileInput,
		"large":   largeInput,
		"empty":   func(m Mode) Input { return Input{Mode: m} },
		// several crawlers, Google's hundreds of ranges among them
		"crawlers": crawlersGoogleInput,
	}
	for _, mode := range Modes {
		for inName, mk := range inputs {
			for _, v := range nftTargets {
				t.Run(fmt.Sprintf("%s/%s/%s", mode, inName, v.name), func(t *testing.T) {
					var buf bytes.Buffer
					if _, err := NFTables(&buf, mk(mode), v.opts); err != nil {
						t.Fatal(err)
					}
					file := writeTemp(t, "rules.nft", buf.Bytes())
					if out, err := runNetns(t, nft+" -c -f "+shellQuote(file)); err != nil {
						t.Fatalf("nft -c -f rejected the file: %v\n%s\n--- file:\n%s", err, out, head(buf.String(), 60))
					}
				})
			}
		}
	}
}

// TestNFTablesLoadReload loads each mode's file in a network namespace,
// loads it again, and checks the ruleset nft lists: the table, its chain,
// every element, and nothing injected by hostile provenance.
func TestNFTablesLoadReload(t *testing.T) {
	nft := testutil.NeedTool(t, ".ci/install-rule-checkers", "nft")
	for _, mode := range Modes {
		t.Run(string(mode), func(t *testing.T) {
			in := hostileInput(mode)
			var buf bytes.Buffer
			p, err := NFTables(&buf, in, NFTOptions{})
			if err != nil {
				t.Fatal(err)
			}
			file := writeTemp(t, "rules.nft", buf.Bytes())
			out, err := runNetns(t, fmt.Sprintf("%[1]s -f %[2]s && %[1]s -f %[2]s && %[1]s -f %[2]s && %[1]s list ruleset", nft, shellQuote(file)))
			if err != nil {
				t.Fatalf("load and reload failed: %v\n%s", err, out)
			}
			if n := strings.Count(out, "table inet lohibot {"); n != 1 {
				t.Errorf("listing has %d lohibot tables, want 1:\n%s", n, out)
			}
			if strings.Contains(out, "pwned") || strings.Contains(out, "table inet filter") {
				t.Errorf("hostile provenance reached the ruleset:\n%s", out)
			}
			verdict := "drop"
			if mode == AllowBot {
				verdict = "accept"
			}
			if !strings.Contains(out, "type filter hook input priority filter - 10; policy accept;") ||
				!strings.Contains(out, verdict) {
				t.Errorf("chain missing from the listing:\n%s", out)
			}
			listed := nftListedElements(t, out)
			for _, q := range p.crawlerSet() {
				if !listed.covers(q) {
					t.Errorf("element %s missing from the loaded set:\n%s", q, out)
				}
			}
			if len(listed) == 0 {
				t.Errorf("no elements loaded:\n%s", out)
			}
		})
	}
}

// TestNFTablesReloadRestartsTimeouts loads a file, cuts every element's
// time left to a fraction of the TTL, loads the file again and checks that
// every element's expiry went back above that fraction: each load starts
// the timeouts anew. It compares expiries with each other and with the
// cut, never with the clock, so a slow machine cannot fail it.
func TestNFTablesReloadRestartsTimeouts(t *testing.T) {
	nft := testutil.NeedTool(t, ".ci/install-rule-checkers", "nft")
	const ttl, cut = time.Hour, 10 * time.Minute
	for _, v := range []NFTOptions{{TTL: ttl}, {TTL: ttl, SetOnly: true}} {
		t.Run(fmt.Sprintf("set-only=%v", v.SetOnly), func(t *testing.T) {
			var buf bytes.Buffer
			plan, err := NFTables(&buf, fixtureInput(BlockSpoofed), v)
			if err != nil {
				t.Fatal(err)
			}
			file := writeTemp(t, "rules.nft", buf.Bytes())
			v4, v6 := split4and6(plan.Block)
			if len(v4) == 0 || len(v6) == 0 {
				t.Fatalf("the fixture blocks %v: want IPv4 and IPv6 elements", plan.Block)
			}
			// Flush each set and put its elements back with 10 minutes
			// left of their hour.
			var shorten strings.Builder
			for _, set := range []struct {
				name  string
				elems []netip.Prefix
			}{{"spoofed_v4", v4}, {"spoofed_v6", v6}} {
				elems := make([]string, len(set.elems))
				for i, e := range set.elems {
					elems[i] = fmt.Sprintf("%s timeout 1h expires 10m", ipfmt.Prefix(e))
				}
				fmt.Fprintf(&shorten, "%[1]s flush set inet lohibot %[2]s\n%[1]s add element inet lohibot %[2]s { %[3]s }\n", nft, set.name, strings.Join(elems, ", "))
			}
			list := fmt.Sprintf("%[1]s list set inet lohibot spoofed_v4; %[1]s list set inet lohibot spoofed_v6", nft)
			script := fmt.Sprintf("%[1]s -f %[2]s\n%[3]s%[4]s\necho RELOAD\n%[1]s -f %[2]s\n%[4]s\n", nft, shellQuote(file), shorten.String(), list)
			out, err := runNetns(t, script)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			before, after, ok := strings.Cut(out, "RELOAD")
			if !ok {
				t.Fatalf("unexpected output:\n%s", out)
			}
			eb, ea := expiries(t, before), expiries(t, after)
			if len(eb) == 0 || len(ea) != len(eb) {
				t.Fatalf("%d elements before the reload and %d after, want the same number:\n%s", len(eb), len(ea), out)
			}
			for _, d := range eb {
				if d > cut {
					t.Fatalf("an element expires in %s after its time left was cut to %s: the cut did not take\n%s", d, cut, before)
				}
			}
			for _, d := range ea {
				if d <= cut || d > ttl {
					t.Errorf("after the reload an element expires in %s, want more than %s (timeouts restarted) and at most the TTL %s\n%s", d, cut, ttl, after)
				}
			}
		})
	}
}

// TestNFTablesSetOnlyKeepsUserChains loads a user's chain that refers to
// the sets, then two generations of the set-only file, and checks that the
// chain survives and the set holds exactly the second generation.
func TestNFTablesSetOnlyKeepsUserChains(t *testing.T) {
	nft := testutil.NeedTool(t, ".ci/install-rule-checkers", "nft")
	opts := NFTOptions{SetOnly: true, Table: "inet filter"}
	var first, second bytes.Buffer
	if _, err := NFTables(&first, fixtureInput(BlockSpoofed), opts); err != nil {
		t.Fatal(err)
	}
	in := fixtureInput(BlockSpoofed)
	in.one().Spoofed = addrs("203.0.113.99")
	if _, err := NFTables(&second, in, opts); err != nil {
		t.Fatal(err)
	}
	f1 := writeTemp(t, "first.nft", first.Bytes())
	f2 := writeTemp(t, "second.nft", second.Bytes())
	user := writeTemp(t, "user.nft", []byte(`table inet filter {
	chain input {
		type filter hook input priority 0; policy accept;
		ip saddr @spoofed_v4 counter drop comment "mine"
	}
}
`))
	// The user's chain refers to the set, so the set must exist first.
	script := fmt.Sprintf("%[1]s -f %[2]s && %[1]s -f %[3]s && %[1]s -f %[4]s && %[1]s -f %[4]s && %[1]s list table inet filter",
		nft, shellQuote(f1), shellQuote(user), shellQuote(f2))
	out, err := runNetns(t, script)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, `comment "mine"`) {
		t.Errorf("the user's rule is gone:\n%s", out)
	}
	if !strings.Contains(out, "203.0.113.99") || strings.Contains(out, "203.0.113.7") {
		t.Errorf("the set does not hold exactly the second generation:\n%s", out)
	}
}

// TestNFTablesDropsInNamespace loads block rules in a network namespace
// whose loopback also carries the blocked addresses, and checks with real
// TCP connections that a blocked source is dropped and others are not.
func TestNFTablesDropsInNamespace(t *testing.T) {
	nft := testutil.NeedTool(t, ".ci/install-rule-checkers", "nft")
	ip := testutil.NeedTool(t, ".ci/install-rule-checkers", "ip")
	in := Input{
		Mode:     BlockSpoofed,
		Crawlers: []CrawlerInput{{Tokens: lohiTokens, Spoofed: addrs("203.0.113.7", "2001:db8:beef::7"), Genuine: addrs("79.139.58.98"), Listed: prefixes("79.139.58.98/32")}},
	}
	var buf bytes.Buffer
	if _, err := NFTables(&buf, in, NFTOptions{}); err != nil {
		t.Fatal(err)
	}
	file := writeTemp(t, "rules.nft", buf.Bytes())
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	script := fmt.Sprintf(`%[1]s link set lo up
%[1]s addr add 203.0.113.7/32 dev lo
%[1]s addr add 198.51.100.8/32 dev lo
%[1]s -6 addr add 2001:db8:beef::7/128 dev lo nodad
%[1]s -6 addr add 2001:db8:beef::8/128 dev lo nodad
%[2]s -f %[3]s
LOHIBOT_EMIT_HELPER=dial exec %[4]s`, ip, nft, shellQuote(file), shellQuote(exe))
	out, err := runNetns(t, script)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := []string{
		"203.0.113.7 blocked",
		"198.51.100.8 connected",
		"127.0.0.1 connected",
		"2001:db8:beef::7 blocked",
		"2001:db8:beef::8 connected",
	}
	for _, w := range want {
		if !strings.Contains(out, w+"\n") {
			t.Errorf("want %q in the namespace's report:\n%s", w, out)
		}
	}
}

// nftElements is what an nft listing says a set holds.
type nftElements []netip.Prefix

var nftElementRE = regexp.MustCompile(`([0-9a-f:.]+(?:/[0-9]+)?(?:-[0-9a-f:.]+)?) (?:timeout [0-9dhms]+ )?expires`)

// nftListedElements collects the elements (addresses, prefixes and ranges)
// of a listing.
func nftListedElements(t *testing.T, listing string) nftElements {
	t.Helper()
	var out nftElements
	for _, m := range nftElementRE.FindAllStringSubmatch(listing, -1) {
		s := m[1]
		if lo, hi, ok := strings.Cut(s, "-"); ok {
			a, err1 := netip.ParseAddr(lo)
			b, err2 := netip.ParseAddr(hi)
			if err1 != nil || err2 != nil {
				t.Fatalf("bad range %q in listing", s)
			}
			for x := a; x.Compare(b) <= 0 && x.IsValid(); x = x.Next() {
				out = append(out, netip.PrefixFrom(x, x.BitLen()))
			}
			continue
		}
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p)
		} else if a, err := netip.ParseAddr(s); err == nil {
			out = append(out, netip.PrefixFrom(a, a.BitLen()))
		} else {
			t.Fatalf("bad element %q in listing", s)
		}
	}
	return out
}

func (e nftElements) covers(q netip.Prefix) bool {
	for _, p := range e {
		if p.Bits() <= q.Bits() && p.Contains(q.Addr()) {
			return true
		}
	}
	return false
}

var expiresRE = regexp.MustCompile(`expires ((?:[0-9]+d)?(?:[0-9]+h)?(?:[0-9]+m)?(?:[0-9]+s)?(?:[0-9]+ms)?)`)

// expiries returns the time left of every element in a set listing.
func expiries(t *testing.T, listing string) []time.Duration {
	t.Helper()
	var out []time.Duration
	for _, m := range expiresRE.FindAllStringSubmatch(listing, -1) {
		out = append(out, parseNFTExpiry(t, m[1]))
	}
	return out
}

func parseNFTExpiry(t *testing.T, s string) time.Duration {
	t.Helper()
	var d time.Duration
	re := regexp.MustCompile(`([0-9]+)(ms|d|h|m|s)`)
	for _, m := range re.FindAllStringSubmatch(s, -1) {
		n, _ := strconv.Atoi(m[1])
		unit := map[string]time.Duration{"d": 24 * time.Hour, "h": time.Hour, "m": time.Minute, "s": time.Second, "ms": time.Millisecond}[m[2]]
		d += time.Duration(n) * unit
	}
	return d
}

func head(s string, lines int) string {
	parts := strings.SplitN(s, "\n", lines+1)
	if len(parts) > lines {
		parts = append(parts[:lines], "...")
	}
	return strings.Join(parts, "\n")
}
