package emit

import (
	"math/rand/v2"
	"net/netip"
	"testing"
)

// googleLikeList is an IP list shaped like Googlebot's published one: n
// prefixes, half IPv4 (/20 to /32) and half IPv6 (/44 to /64), in a few
// of the provider's blocks.
func googleLikeList(rng *rand.Rand, n int) []netip.Prefix {
	v4Blocks := [][2]byte{{66, 249}, {34, 64}, {35, 247}, {192, 178}, {74, 125}}
	list := make([]netip.Prefix, 0, n)
	for i := range n {
		if i%2 == 0 {
			b := v4Blocks[rng.IntN(len(v4Blocks))]
			a := netip.AddrFrom4([4]byte{b[0], b[1] + byte(rng.IntN(8)), byte(rng.IntN(256)), byte(rng.IntN(256))})
			p, _ := a.Prefix(20 + rng.IntN(13))
			list = append(list, p)
			continue
		}
		var b [16]byte
		b[0], b[1], b[2], b[3] = 0x20, 0x01, 0x48, 0x60
		b[4], b[5], b[6], b[7] = byte(rng.IntN(16)), byte(rng.IntN(256)), byte(rng.IntN(256)), byte(rng.IntN(256))
		p, _ := netip.AddrFrom16(b).Prefix(44 + rng.IntN(21))
		list = append(list, p)
	}
	return list
}

// botnetAddrs are n spoofing addresses spread over public space, one in
// three IPv6.
func botnetAddrs(rng *rand.Rand, n int) []netip.Addr {
	addrs := make([]netip.Addr, 0, n)
	for i := range n {
		if i%3 == 2 {
			var b [16]byte
			b[0], b[1] = 0x2a, byte(rng.IntN(16))
			for j := 2; j < 16; j++ {
				b[j] = byte(rng.IntN(256))
			}
			addrs = append(addrs, netip.AddrFrom16(b))
			continue
		}
		addrs = append(addrs, netip.AddrFrom4([4]byte{byte(1 + rng.IntN(222)), byte(rng.IntN(256)), byte(rng.IntN(256)), byte(1 + rng.IntN(254))}))
	}
	return addrs
}

// BenchmarkPlanManySpoofers plans the block-spoofed rules of a botnet audit
// against a Googlebot-sized IP list, with IPv6 widened to /64 as for
// Cloudflare lists: every spoofing address is checked against the list,
// the genuine addresses and --never-block.
func BenchmarkPlanManySpoofers(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 700))
	in := Input{
		Mode:       BlockSpoofed,
		NeverBlock: []netip.Prefix{netip.MustParsePrefix("203.0.113.0/24"), netip.MustParsePrefix("2001:db8::/32")},
		Crawlers:   []CrawlerInput{{Tokens: lohiTokens, Listed: googleLikeList(rng, 700), Spoofed: botnetAddrs(rng, 200_000)}},
	}
	for i := range 100 {
		in.one().Genuine = append(in.one().Genuine, netip.AddrFrom4([4]byte{66, 249, byte(64 + i/50), byte(i)}))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		p, err := newPlan(in, planLimits{v6Bits: 64})
		if err != nil {
			b.Fatal(err)
		}
		if len(p.Block) == 0 {
			b.Fatal("the plan blocks nothing")
		}
	}
}
