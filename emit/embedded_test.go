package emit

import (
	"bytes"
	"math/rand/v2"
	"net/netip"
	"testing"
)

// The ranges below are written out here, apart from plan.go, so that the
// tests check the code against the registries rather than against itself.

// neverBlock4 are the IPv4 special-purpose ranges (RFC 6890 and the IANA
// registry) that no rule may block.
var neverBlock4 = []string{
	"0.0.0.0/8",      // this network
	"10.0.0.0/8",     // private
	"100.64.0.0/10",  // shared (carrier-grade NAT)
	"127.0.0.0/8",    // loopback
	"169.254.0.0/16", // link-local
	"172.16.0.0/12",  // private
	"192.0.0.0/24",   // IETF protocol assignments
	"192.168.0.0/16", // private
	"198.18.0.0/15",  // benchmarking
	"224.0.0.0/4",    // multicast
	"240.0.0.0/4",    // reserved, broadcast
}

// public4 are addresses that rules may block.
var public4 = []string{"203.0.113.7", "198.51.100.23", "8.8.8.8", "79.139.58.7", "1.1.1.1", "198.20.0.1", "192.0.1.1"}

// embedding is a way IPv6 carries an IPv4 address: the translation prefix
// and where the 32 bits go (RFC 6052 §2.2 for NAT64, RFC 3056 for 6to4).
type embedding struct {
	name   string
	prefix netip.Prefix
	// at is the first bit of the IPv4 address; from bit 64 on, the eight
	// bits 64-71 (RFC 6052's "u" octet) are passed over.
	at int
	// skipU says whether the u octet is passed over.
	skipU bool
}

var embeddings = []embedding{
	{"nat64 well-known /96", netip.MustParsePrefix("64:ff9b::/96"), 96, false},
	{"nat64 local-use /48", netip.MustParsePrefix("64:ff9b:1::/48"), 48, true},
	{"nat64 local-use /56", netip.MustParsePrefix("64:ff9b:1::/48"), 56, true},
	{"nat64 local-use /64", netip.MustParsePrefix("64:ff9b:1::/48"), 64, true},
	{"nat64 local-use /96", netip.MustParsePrefix("64:ff9b:1::/48"), 96, true},
	{"6to4", netip.MustParsePrefix("2002::/16"), 16, false},
}

// embed puts v4 into an address of e, with random bits elsewhere (outside
// the translation prefix and the u octet, which stays zero).
func embed(r *rand.Rand, e embedding, v4 netip.Addr) netip.Addr {
	var b [16]byte
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	setBit := func(pos int, on bool) {
		if on {
			b[pos/8] |= 0x80 >> (pos % 8)
		} else {
			b[pos/8] &^= 0x80 >> (pos % 8)
		}
	}
	pfx := e.prefix.Addr().As16()
	for i := 0; i < e.prefix.Bits(); i++ {
		setBit(i, pfx[i/8]&(0x80>>(i%8)) != 0)
	}
	if e.skipU {
		b[8] = 0
	}
	four := v4.As4()
	pos := e.at
	for i := 0; i < 32; i++ {
		if e.skipU && pos >= 64 && pos < 72 {
			pos = 72
		}
		setBit(pos, four[i/8]&(0x80>>(i%8)) != 0)
		pos++
	}
	return netip.AddrFrom16(b)
}

// randomIn returns a random address of p.
func randomIn(r *rand.Rand, p netip.Prefix) netip.Addr {
	b := p.Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		if r.IntN(2) == 0 {
			b[i/8] |= 0x80 >> (i % 8)
		}
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// blockedBy returns what every target blocks for in (Cloudflare in its
// list output, which holds the same set as the expression).
func blockedBy(t *testing.T, in Input) map[string][]netip.Prefix {
	t.Helper()
	in.one().Listed = prefixes("79.139.58.98/32")
	out := map[string][]netip.Prefix{}
	var nft bytes.Buffer
	if _, err := NFTables(&nft, in, NFTOptions{}); err != nil {
		t.Fatalf("nftables: %v", err)
	}
	out["nftables"] = readNFT(t, in.Mode, nft.String()).block
	var ms bytes.Buffer
	if _, err := ModSecurity(&ms, in, ModSecOptions{}); err != nil {
		t.Fatalf("modsecurity: %v", err)
	}
	out["modsecurity"] = readModSec(t, ms.String()).block
	var cf bytes.Buffer
	if _, err := Cloudflare(&cf, in, CloudflareOptions{Output: CloudflareList}); err != nil {
		t.Fatalf("cloudflare: %v", err)
	}
	items, err := checkCFList(cf.Bytes())
	if err != nil {
		t.Fatalf("cloudflare list: %v", err)
	}
	out["cloudflare"] = items
	return out
}

func anyOverlaps(set []netip.Prefix, a netip.Addr) bool {
	for _, p := range set {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// TestNewSpecialIPv4NeverBlocked checks 198.18.0.0/15 and 192.0.0.0/24,
// and their neighbours that stay blockable.
func TestNewSpecialIPv4NeverBlocked(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 15))
	for _, s := range []string{"198.18.0.0/15", "192.0.0.0/24"} {
		p := netip.MustParsePrefix(s)
		for i := 0; i < 50; i++ {
			a := randomIn(r, p)
			in := Input{Mode: BlockSpoofed, Crawlers: []CrawlerInput{{Tokens: lohiTokens, Spoofed: []netip.Addr{a, netip.MustParseAddr("203.0.113.7")}}}}
			for target, set := range blockedBy(t, in) {
				if anyOverlaps(set, a) {
					t.Errorf("%s blocks %s, in %s", target, a, s)
				}
				if !anyOverlaps(set, netip.MustParseAddr("203.0.113.7")) {
					t.Errorf("%s does not block the public 203.0.113.7 beside %s", target, a)
				}
			}
		}
	}
	// The edges: the ranges end where they end.
	in := Input{Mode: BlockSpoofed, Crawlers: []CrawlerInput{{Tokens: lohiTokens, Spoofed: addrs("198.17.255.255", "198.20.0.0", "192.0.1.0", "191.255.255.255")}}}
	for target, set := range blockedBy(t, in) {
		for _, a := range in.one().Spoofed {
			if !anyOverlaps(set, a) {
				t.Errorf("%s does not block %s, which is outside the special ranges", target, a)
			}
		}
	}
}

// TestEmbeddedSpecialNeverBlocked is the property for IPv4 addresses
// carried in IPv6 (NAT64 and 6to4): an address that carries a special
// IPv4 address, in any way its translation prefix allows, is never
// blocked by any target; the same address carrying a public IPv4 address
// is blocked by nftables and ModSecurity, which take single IPv6
// addresses (Cloudflare blocks a /64, which for NAT64 holds all of IPv4).
func TestEmbeddedSpecialNeverBlocked(t *testing.T) {
	n := 60
	if testing.Short() {
		n = 15
	}
	r := rand.New(rand.NewPCG(64, 0xff9b))
	for _, e := range embeddings {
		t.Run(e.name, func(t *testing.T) {
			for i := 0; i < n; i++ {
				special := netip.MustParsePrefix(neverBlock4[r.IntN(len(neverBlock4))])
				bad := embed(r, e, randomIn(r, special))
				in := Input{Mode: BlockSpoofed, Crawlers: []CrawlerInput{{Tokens: lohiTokens, Spoofed: []netip.Addr{bad}}}}
				for target, set := range blockedBy(t, in) {
					if anyOverlaps(set, bad) {
						t.Errorf("%s blocks %s, which carries an address of %s (%s)", target, bad, special, e.name)
					}
				}
			}
			if e.skipU {
				// A local-use NAT64 address is read in every way its
				// prefix allows: one public reading does not make it
				// blockable when another is special. Those whose every
				// reading is public stay blockable; this one is such.
				return
			}
			for _, s := range public4 {
				good := embed(r, e, netip.MustParseAddr(s))
				in := Input{Mode: BlockSpoofed, Crawlers: []CrawlerInput{{Tokens: lohiTokens, Spoofed: []netip.Addr{good}}}}
				set := blockedBy(t, in)
				for _, target := range []string{"nftables", "modsecurity"} {
					if !anyOverlaps(set[target], good) {
						t.Errorf("%s does not block %s, which carries the public %s (%s)", target, good, s, e.name)
					}
				}
			}
		})
	}
}

// TestEmbeddedSpecialPrefixes checks wider prefixes: a range that holds a
// whole translation prefix stands for IPv4 at large, and a range inside
// one is judged by the IPv4 range it carries.
func TestEmbeddedSpecialPrefixes(t *testing.T) {
	tests := []struct {
		prefix string
		never  bool
	}{
		{"64:ff9b::/96", true},            // all of IPv4
		{"64:ff9b::/64", true},            // holds the whole /96
		{"64:ff9b::a00:0/104", true},      // 10.0.0.0/8
		{"64:ff9b::cb00:7100/120", false}, // 203.0.113.0/24
		{"64:ff9b::c612:0/111", true},     // 198.18.0.0/15
		{"2002::/16", true},
		{"2002:a00::/24", true},          // 10.0.0.0/8
		{"2002:cb00:7100::/40", false},   // 203.0.113.0/24
		{"2002:cb00:7107::/48", false},   // 203.0.113.7
		{"2002:c000:0000::/40", true},    // 192.0.0.0/24
		{"2002:cb00:7107:1::/64", false}, // a 6to4 site's subnet of 203.0.113.7
		{"64:ff9b:1::/48", true},
		{"2001:db8::/32", false},
	}
	for _, tc := range tests {
		p := netip.MustParsePrefix(tc.prefix)
		got := specialReason(p) != ""
		if got != tc.never {
			t.Errorf("specialReason(%s) = %q, want never-block %v", p, specialReason(p), tc.never)
		}
	}
}

// TestEmbeddedSkipReason checks that the skip names the carried range, so
// the warning says what the address is.
func TestEmbeddedSkipReason(t *testing.T) {
	for _, tc := range []struct{ addr, want string }{
		{"64:ff9b::10.1.2.3", "private"},
		{"64:ff9b::127.0.0.1", "loopback"},
		{"2002:a9fe:0101::1", "link-local"}, // 169.254.1.1
		{"2002:6440:0001::1", "shared"},     // 100.64.0.1
		{"64:ff9b::198.19.1.1", "reserved"},
	} {
		in := Input{Mode: BlockSpoofed, Crawlers: []CrawlerInput{{Tokens: lohiTokens, Spoofed: addrs(tc.addr)}}}
		p, err := NewPlan(in)
		if err != nil {
			t.Fatal(err)
		}
		if len(p.Block) != 0 || len(p.Skipped) != 1 || string(p.Skipped[0].Reason) != tc.want {
			t.Errorf("%s: block %v, skipped %v, want skipped as %s", tc.addr, p.Block, p.Skipped, tc.want)
		}
	}
}

// zeroSource makes embed's random bits zero, so its output can be
// compared whole.
type zeroSource struct{}

func (zeroSource) Uint64() uint64 { return 0 }

// TestEmbedHelper checks the test's own embedding against addresses
// written out by hand (the layouts of RFC 6052 §2.4 for 192.0.2.33).
func TestEmbedHelper(t *testing.T) {
	v4 := netip.MustParseAddr("192.0.2.33")
	r := rand.New(zeroSource{})
	wants := []string{
		"64:ff9b::c000:221",
		"64:ff9b:1:c000:2:2100::",
		"64:ff9b:1:c0:0:221::",
		"64:ff9b:1:0:c0:2:2100::",
		"64:ff9b:1::c000:221",
		"2002:c000:221::",
	}
	for i, e := range embeddings {
		if got := embed(r, e, v4); got != netip.MustParseAddr(wants[i]) {
			t.Errorf("%s: embed = %s, want %s", e.name, got, wants[i])
		}
	}
}
