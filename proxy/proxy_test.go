package proxy

import (
	"errors"
	"math/rand/v2"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestSnapshot: every published list has its built-in copy, dated, and
// the edges the tool is known to meet are named by their CDN.
func TestSnapshot(t *testing.T) {
	e := BuiltinEdges()
	if len(e.Lists) != 7 {
		t.Fatalf("%d lists, want 7", len(e.Lists))
	}
	for _, l := range e.Lists {
		if len(l.Prefixes) == 0 || !l.Snapshot || l.AsOf.Year() < 2026 {
			t.Errorf("%s %s: %d prefixes, snapshot %v of %s", l.CDN.Name, l.Source.URL, len(l.Prefixes), l.Snapshot, l.AsOf)
		}
	}
	for addr, want := range map[string]string{
		"162.158.106.126":     Cloudflare, // a real bingbot request came through this edge
		"104.16.0.1":          Cloudflare,
		"2606:4700:10::1":     Cloudflare,
		"151.101.65.140":      Fastly,
		"2a04:4e42::1":        Fastly,
		"130.176.1.1":         CloudFront,
		"35.191.12.3":         GoogleLB,
		"130.211.0.9":         GoogleLB,
		"2600:2d00:1:b029::1": GoogleLB,
		"185.93.1.242":        Bunny,
		"66.249.66.1":         "", // Googlebot: no CDN
		"79.139.58.98":        "",
		"::ffff:162.158.1.1":  Cloudflare,
	} {
		c := e.CDN(netip.MustParseAddr(addr))
		got := ""
		if c != nil {
			got = c.Name
		}
		if got != want {
			t.Errorf("%s: cdn %q, want %q", addr, got, want)
		}
	}
}

// TestParseList reads each layout as its publisher writes it, and
// rejects a list whole for any bad entry.
func TestParseList(t *testing.T) {
	tests := []struct {
		name, layout, body string
		want               string // prefixes joined by " ", or the error's text
	}{
		{"cloudflare v4", layoutText, "173.245.48.0/20\n103.21.244.0/22\n", "173.245.48.0/20 103.21.244.0/22"},
		{"cloudflare v6 crlf", layoutText, "2400:cb00::/32\r\n2606:4700::/32\r\n\r\n", "2400:cb00::/32 2606:4700::/32"},
		{"fastly", layoutFastly, `{"addresses":["23.235.32.0/20","151.101.0.0/16"],"ipv6_addresses":["2a04:4e40::/32"]}`, "23.235.32.0/20 151.101.0.0/16 2a04:4e40::/32"},
		{"aws cloudfront only", layoutAWS, `{"syncToken":"1","createDate":"2026-08-22-15-17-05","prefixes":[
			{"ip_prefix":"3.5.140.0/22","region":"ap-northeast-2","service":"AMAZON","network_border_group":"ap-northeast-2"},
			{"ip_prefix":"13.32.0.0/15","region":"GLOBAL","service":"CLOUDFRONT","network_border_group":"GLOBAL"},
			{"ip_prefix":"130.176.0.0/18","region":"GLOBAL","service":"CLOUDFRONT_ORIGIN_FACING","network_border_group":"GLOBAL"}],
			"ipv6_prefixes":[{"ipv6_prefix":"2600:9000::/28","region":"GLOBAL","service":"CLOUDFRONT","network_border_group":"GLOBAL"},
			{"ipv6_prefix":"2600:1f00::/24","region":"us-east-1","service":"EC2","network_border_group":"us-east-1"}]}`,
			"13.32.0.0/15 130.176.0.0/18 2600:9000::/28"},
		{"bunny", layoutJSONArray, `["185.93.1.242","2400:52e0:1500::1020:1"]`, "185.93.1.242/32 2400:52e0:1500::1020:1/128"},
		{"bad entry", layoutText, "173.245.48.0/20\nnot an address\n", `"not an address" is not an address`},
		{"host bits", layoutText, "173.245.48.1/20\n", "host bits set"},
		{"too wide", layoutText, "0.0.0.0/0\n", "wider than any CDN's range"},
		{"too wide v6", layoutFastly, `{"addresses":["23.235.32.0/20"],"ipv6_addresses":["::/0"]}`, "wider than any CDN's range"},
		{"empty", layoutText, "\n# nothing\n", "names no range"},
		{"no cloudfront", layoutAWS, `{"prefixes":[{"ip_prefix":"3.5.140.0/22","service":"AMAZON"}]}`, "names no range"},
		{"html page", layoutFastly, "<html>gone</html>", "cdn list is not valid"},
		{"trailing json", layoutJSONArray, `["185.93.1.242"] ["1.2.3.4"]`, "text after the JSON value"},
		{"zone", layoutJSONArray, `["fe80::1%eth0"]`, "is not an address"},
		{"wrong shape", layoutFastly, `["151.101.0.0/16"]`, "cdn list is not valid"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ps, err := ParseList(tc.layout, []byte(tc.body))
			var got string
			if err != nil {
				if !errors.Is(err, ErrListInvalid) {
					t.Errorf("error %v does not wrap ErrListInvalid", err)
				}
				got = err.Error()
				if !strings.Contains(got, tc.want) {
					t.Errorf("error %q, want it to say %q", got, tc.want)
				}
				return
			}
			var s []string
			for _, p := range ps {
				s = append(s, p.String())
			}
			if got = strings.Join(s, " "); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestNewSet: --trusted-proxy values, what they trust, and how a proxy
// is named.
func TestNewSet(t *testing.T) {
	s, err := NewSet(nil, []string{"Cloudflare", " private ", "203.0.113.0/24", "2001:db8::7"}, false)
	if err != nil {
		t.Fatal(err)
	}
	for addr, want := range map[string]struct {
		name    string
		trusted bool
	}{
		"162.158.106.126": {Cloudflare, true},
		"151.101.65.140":  {Fastly, false}, // an edge, not trusted
		"10.1.2.3":        {Private, true},
		"fd00::1":         {Private, true},
		"203.0.113.77":    {"203.0.113.0/24", true},
		"2001:db8::7":     {"2001:db8::7/128", true},
		"198.51.100.1":    {"", false},
		"127.0.0.1":       {"", false}, // loopback is not "private": name it
	} {
		a := netip.MustParseAddr(addr)
		name, ok := s.Proxy(a)
		if name != want.name || ok != (want.name != "") {
			t.Errorf("%s: proxy %q %v, want %q", addr, name, ok, want.name)
		}
		if got := s.Trusts(a); got != want.trusted {
			t.Errorf("%s: trusted %v, want %v", addr, got, want.trusted)
		}
		if got := s.TrustsText([]byte(addr)); got != want.trusted {
			t.Errorf("%s: trusted as text %v, want %v", addr, got, want.trusted)
		}
	}
	if s.TrustsText([]byte("010.1.2.3")) || s.TrustsText([]byte("host.example")) {
		t.Error("text that is no address is trusted")
	}
	for _, bad := range []string{"akamai", "cloudflare.com", "0.0.0.0/0", "::/8", "10.0.0.1/8"} {
		if _, err := NewSet(nil, []string{bad}, false); !errors.Is(err, ErrSpec) {
			t.Errorf("%q: err %v, want ErrSpec", bad, err)
		}
	}
	if _, err := NewSet(nil, []string{"0.0.0.0/0"}, false); err == nil || !strings.Contains(err.Error(), "--trust-xff") {
		t.Errorf("a /0 is refused with a hint to --trust-xff: %v", err)
	}
	all, _ := NewSet(nil, nil, true)
	if !all.Trusts(netip.MustParseAddr("198.51.100.1")) || all.InTrusted(netip.MustParseAddr("198.51.100.1")) || !all.TrustsText([]byte("x")) {
		t.Error("--trust-xff trusts every connecting address, and no address inside the header")
	}
	var none *Set
	if none.Trusts(netip.MustParseAddr("162.158.106.126")) || none.Reads() {
		t.Error("the nil set trusts")
	}
	if n, ok := none.Proxy(netip.MustParseAddr("162.158.106.126")); n != Cloudflare || !ok {
		t.Errorf("the nil set knows the built-in edges: %q %v", n, ok)
	}
	if !none.Overlaps(netip.MustParsePrefix("162.0.0.0/8")) || none.Overlaps(netip.MustParsePrefix("66.249.64.0/19")) {
		t.Error("overlaps")
	}
}

// TestSnapshotNote says the snapshot's age for a CDN whose lists were not
// fetched.
func TestSnapshotNote(t *testing.T) {
	var s *Set
	now := BuiltinEdges().Of(Cloudflare)[0].AsOf.Add(115 * 24 * time.Hour)
	got := s.SnapshotNote(Cloudflare, now)
	if !strings.Contains(got, "built-in snapshot of") || !strings.Contains(got, "(115 days old") {
		t.Errorf("note %q", got)
	}
	if got := s.SnapshotNote(GoogleLB, now); !strings.Contains(got, "documented") {
		t.Errorf("google-lb: %q", got)
	}
	if got := s.SnapshotNote("10.0.0.0/8", now); got != "" {
		t.Errorf("a range: %q", got)
	}
}

// TestRangesAgainstLinearScan: membership, naming and overlap answer as
// a scan of every prefix does, for random IPv4 and IPv6 sets.
func TestRangesAgainstLinearScan(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	addr := func(v6 bool) netip.Addr {
		if v6 {
			var b [16]byte
			b[0], b[1] = 0x20, 0x01
			for i := 2; i < 16; i++ {
				b[i] = byte(r.IntN(4)) // few values: prefixes nest and touch
			}
			return netip.AddrFrom16(b)
		}
		return netip.AddrFrom4([4]byte{10, byte(r.IntN(4)), byte(r.IntN(256)), byte(r.IntN(256))})
	}
	for round := 0; round < 200; round++ {
		var ps []named
		for i := 0; i < r.IntN(40); i++ {
			v6 := r.IntN(2) == 0
			bits := 8 + r.IntN(25)
			if v6 {
				bits = 16 + r.IntN(113)
			}
			p, _ := addr(v6).Prefix(bits)
			ps = append(ps, named{p, p.String()})
		}
		set := newRanges(ps)
		for i := 0; i < 200; i++ {
			a := addr(r.IntN(2) == 0)
			in, best := false, -1
			for _, n := range ps {
				if n.p.Contains(a) {
					in = true
					if best < 0 || n.p.Bits() > ps[best].p.Bits() {
						best = slices.Index(ps, n)
					}
				}
			}
			if set.contains(a) != in {
				t.Fatalf("contains(%s) = %v, want %v (%v)", a, !in, in, ps)
			}
			name, ok := set.name(a)
			if ok != in || in && name != ps[best].name {
				t.Fatalf("name(%s) = %q %v, want %v", a, name, ok, in)
			}
			q, _ := a.Prefix(8 + r.IntN(24))
			if a.Is6() {
				q, _ = a.Prefix(16 + r.IntN(112))
			}
			over := slices.ContainsFunc(ps, func(n named) bool { return n.p.Overlaps(q) })
			if set.overlaps(q) != over {
				t.Fatalf("overlaps(%s) = %v, want %v (%v)", q, !over, over, ps)
			}
		}
	}
}

// FuzzParseList: a published list, whatever its bytes, parses into valid
// ranges no wider than a CDN's, or is refused whole; nothing panics.
func FuzzParseList(f *testing.F) {
	f.Add(layoutText, "173.245.48.0/20\n2400:cb00::/32\n")
	f.Add(layoutFastly, `{"addresses":["151.101.0.0/16"],"ipv6_addresses":["2a04:4e42::/32"]}`)
	f.Add(layoutAWS, `{"prefixes":[{"ip_prefix":"13.32.0.0/15","service":"CLOUDFRONT"}],"ipv6_prefixes":[{"ipv6_prefix":"2600:9000::/28","service":"CLOUDFRONT_ORIGIN_FACING"}]}`)
	f.Add(layoutJSONArray, `["185.93.1.242","2400:52e0:1500::1020:1"]`)
	f.Fuzz(func(t *testing.T, layout, body string) {
		ps, err := ParseList(layout, []byte(body))
		if err != nil {
			if !errors.Is(err, ErrListInvalid) || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q", err)
			}
			return
		}
		if len(ps) == 0 {
			t.Fatal("an empty list accepted")
		}
		for _, p := range ps {
			if !p.IsValid() || p.Masked() != p || p.Addr().Is4In6() || p.Addr().Zone() != "" ||
				p.Addr().Is4() && p.Bits() < minBits4 || p.Addr().Is6() && p.Bits() < minBits6 {
				t.Fatalf("%q gave %v", body, p)
			}
		}
	})
}
