package verify

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/internal/dnstest"
	"github.com/miekg/dns"
)

// crawlersZone is a loopback zone with a genuine Googlebot (IPv4 and
// IPv6), a fake one as seen in the wild (a crawl-…googlebot.com PTR name
// in the impostor's own reverse zone, whose forward lookup finds nothing),
// a genuine Bingbot, LohiSoftBot, and a crawler of a profile file.
func crawlersZone(t *testing.T) (*dnstest.Zone, string) {
	t.Helper()
	z := dnstest.NewZone(t,
		"crawl-66-249-66-1.googlebot.com. 3600 IN A 66.249.66.1",
		"crawl-2001-4860-4801-10--1.googlebot.com. 3600 IN AAAA 2001:4860:4801:10::1",
		"msnbot-157-55-39-1.search.msn.com. 3600 IN A 157.55.39.1",
		"crawler1.bot.lohisoft.com. 3600 IN A 79.139.58.98",
		"bot7.crawl.example.net. 3600 IN A 192.0.2.77",
	)
	z.PTR(t, "66.249.66.1", "crawl-66-249-66-1.googlebot.com")
	z.PTR(t, "2001:4860:4801:10::1", "crawl-2001-4860-4801-10--1.googlebot.com")
	z.PTR(t, "203.0.113.50", "crawl-66-249-66-9.googlebot.com")
	z.PTR(t, "157.55.39.1", "msnbot-157-55-39-1.search.msn.com")
	z.PTR(t, "79.139.58.98", "crawler1.bot.lohisoft.com")
	z.PTR(t, "192.0.2.77", "bot7.crawl.example.net")
	return z, dnstest.Serve(t, z)
}

func mustProfiles(t *testing.T, values ...string) []*crawler.Profile {
	t.Helper()
	ps, err := crawler.Resolve(values)
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

func TestIdentityCrawlers(t *testing.T) {
	z, server := crawlersZone(t)
	profiles := mustProfiles(t, "lohisoftbot", "googlebot", "bingbot", "../crawler/testdata/examplebot.yaml")
	id := NewIdentity(&Verifier{Servers: []string{server}, Timeout: dnsTestHang}, profiles, nil)
	const (
		lohi = iota
		google
		bing
		example
	)
	type want struct {
		verdict Verdict
		method  string
		reason  string
	}
	for _, tc := range []struct {
		profile int
		ip      string
		want    want
	}{
		{google, "66.249.66.1", want{Genuine, MethodFCrDNS, ""}},
		{google, "2001:4860:4801:10::1", want{Genuine, MethodFCrDNS, ""}},
		{google, "203.0.113.50", want{Spoofed, MethodFCrDNS, ReasonForwardMismatch}},
		{google, "157.55.39.1", want{Spoofed, MethodFCrDNS, ReasonPTRMismatch}},
		{google, "198.51.100.9", want{Spoofed, MethodFCrDNS, ReasonNoPTR}},
		{bing, "157.55.39.1", want{Genuine, MethodFCrDNS, ""}},
		{bing, "66.249.66.1", want{Spoofed, MethodFCrDNS, ReasonPTRMismatch}},
		{lohi, "79.139.58.98", want{Genuine, MethodFCrDNS, ""}},
		{lohi, "66.249.66.1", want{Spoofed, MethodFCrDNS, ReasonPTRMismatch}},
		// LohiSoftBot makes no IPv6 requests: no DNS needed.
		{lohi, "2001:4860:4801:10::1", want{Spoofed, MethodIPList, ReasonIPv6}},
		{example, "192.0.2.77", want{Genuine, MethodFCrDNS, ""}},
		// examplebot's built-in list covers 192.0.2.10 without DNS telling.
		{example, "192.0.2.10", want{Genuine, MethodIPList, ""}},
		{example, "66.249.66.1", want{Spoofed, MethodFCrDNS, ReasonPTRMismatch}},
	} {
		a := netip.MustParseAddr(tc.ip)
		got := id.Classify(context.Background(), tc.profile, []netip.Addr{a})[a]
		if (want{got.Verdict, got.Method, got.Reason}) != tc.want {
			t.Errorf("%s as %s: %s/%s/%s (ptr %v, forward %v, %s), want %v", tc.ip, profiles[tc.profile].Name,
				got.Verdict, got.Method, got.Reason, got.PTR, got.Forward, got.DNSError, tc.want)
		}
	}
	// The crawlers of a run share the answers: each address's PTR was
	// asked once, however many crawlers it was judged for.
	for _, ip := range []string{"66.249.66.1", "157.55.39.1"} {
		arpa, _ := dns.ReverseAddr(ip)
		if n := z.Count(dns.TypePTR, arpa); n != 1 {
			t.Errorf("PTR of %s asked %d times, want 1", ip, n)
		}
	}
	if w := id.Warnings(); len(w) != 0 {
		t.Errorf("warnings %q", w)
	}
}

// TestIdentityOffline: without DNS the lists decide; a crawler with no
// list at all leaves its claims unverified, never spoofed.
func TestIdentityOffline(t *testing.T) {
	profiles := mustProfiles(t, "lohisoftbot", "googlebot")
	google := &IPList{Prefixes: []netip.Prefix{netip.MustParsePrefix("66.249.64.0/27")}, Source: "test"}
	for _, tc := range []struct {
		name    string
		lists   []*IPList
		profile int
		ip      string
		verdict Verdict
		reason  string
	}{
		{"listed", []*IPList{nil, google}, 1, "66.249.64.3", Genuine, ""},
		{"not listed", []*IPList{nil, google}, 1, "203.0.113.50", Spoofed, ReasonNotInIPList},
		{"no list", nil, 1, "66.249.64.3", Unverified, ReasonNoIPList},
		{"lohisoftbot built-in", nil, 0, "79.139.58.121", Genuine, ""},
		{"lohisoftbot not listed", nil, 0, "203.0.113.50", Spoofed, ReasonNotInIPList},
	} {
		id := NewIdentity(&Verifier{Offline: true}, profiles, tc.lists)
		a := netip.MustParseAddr(tc.ip)
		got := id.Classify(context.Background(), tc.profile, []netip.Addr{a})[a]
		if got.Verdict != tc.verdict || got.Reason != tc.reason || got.Method != MethodIPList {
			t.Errorf("%s: %s/%s/%s, want %s/ip-list/%s", tc.name, got.Verdict, got.Method, got.Reason, tc.verdict, tc.reason)
		}
	}
}

func TestNameUnder(t *testing.T) {
	suffixes := []string{"googlebot.com", "Google.com."}
	for name, want := range map[string]bool{
		"crawl-66-249-66-1.googlebot.com":    true,
		"CRAWL-66-249-66-1.GOOGLEBOT.COM.":   true,
		"rate-limited-proxy-1.google.com":    true,
		"googlebot.com":                      false,
		"crawl-1.googlebot.com.evil.example": false,
		"crawl-1.notgooglebot.com":           false,
		// An escaped dot: the label "crawl.googlebot" under com.
		`crawl\.googlebot.com`:   false,
		"crawl-1.search.msn.com": false,
		"":                       false,
		"msnbot-157-55-39-1.search.msn.com.local": false,
	} {
		if got := NameUnder(name, suffixes); got != want {
			t.Errorf("NameUnder(%q) = %v, want %v", name, got, want)
		}
	}
	if NameUnder("a.b.example", nil) {
		t.Error("a name is under no suffix at all")
	}
}

// TestKeepNamesPerSuffix: a PTR answer cut down for several crawlers keeps
// enough names under each crawler's suffix to judge it.
func TestKeepNamesPerSuffix(t *testing.T) {
	var values []string
	for i := range 40 {
		values = append(values, "a"+string(rune('a'+i%26))+string(rune('a'+i/26))+".bot.lohisoft.com.")
	}
	values = append(values, "crawl-1.googlebot.com.")
	suffixes := fqdns([]string{"bot.lohisoft.com", "googlebot.com"})
	kept := fcrdnsKeepNames(values, suffixes)
	if !slices.Contains(kept, "crawl-1.googlebot.com") {
		t.Errorf("the googlebot name was dropped: %v", kept)
	}
	names, more := fcrdnsNames(kept, suffixes[1:])
	if !slices.Contains(names, "crawl-1.googlebot.com") || more {
		t.Errorf("names for googlebot %v (more %v)", names, more)
	}
	if _, more := fcrdnsNames(kept, suffixes[:1]); !more {
		t.Error("the excess of lohisoft names does not show")
	}
}

// TestLoadIdentityResolvConf: without a server, the nameservers of
// resolv.conf are asked; one that names none, or cannot be read, is one
// warning of the identity (not the verifier's own "no resolver" too), and
// the IP list decides. A list file loaded is each crawler's list.
func TestLoadIdentityResolvConf(t *testing.T) {
	dir := t.TempDir()
	listFile := filepath.Join(dir, "ips.json")
	if err := os.WriteFile(listFile, []byte(`["79.139.58.98"]`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, content string
		servers       []string
		warning       string
	}{
		{"two nameservers", "nameserver 192.0.2.53\nnameserver 2001:db8::53\noptions ndots:2\n", []string{"192.0.2.53:53", "[2001:db8::53]:53"}, ""},
		{"no nameserver", "search example.com\noptions ndots:2\n", nil, "dns: no nameserver in "},
		{"missing file", "", nil, "dns: cannot read "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conf := filepath.Join(t.TempDir(), "resolv.conf")
			if tc.content != "" {
				if err := os.WriteFile(conf, []byte(tc.content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if tc.servers != nil {
				got, err := SystemServers(conf)
				if err != nil || !slices.Equal(got, tc.servers) {
					t.Errorf("SystemServers = %q, %v; want %q", got, err, tc.servers)
				}
				return
			}
			id, _, err := LoadIdentity(context.Background(), IdentityConfig{
				Profiles:     mustProfiles(t),
				Loader:       &ListLoader{Mode: ListNoFetch},
				ListOverride: listFile,
				ResolvConf:   conf,
				Warnings:     []string{"said first"},
			})
			if err != nil {
				t.Fatal(err)
			}
			w := id.Warnings()
			if len(w) != 2 || w[0] != "said first" || !strings.HasPrefix(w[1], tc.warning) {
				t.Errorf("warnings %q, want \"said first\" and one starting %q", w, tc.warning)
			}
			r := id.Classify(context.Background(), 0, []netip.Addr{netip.MustParseAddr("79.139.58.98")})
			if got := r[netip.MustParseAddr("79.139.58.98")]; got.Verdict != Genuine || got.Method != MethodIPList {
				t.Errorf("listed address: %+v, want genuine by the IP list", got)
			}
			if slices.Contains(id.Warnings(), NoResolverWarning) {
				t.Errorf("warnings %q: the verifier's own no-resolver warning is said too", id.Warnings())
			}
		})
	}
}

// TestClassifyEach: each crawler's verdicts on the same addresses, in the
// order of the profiles.
func TestClassifyEach(t *testing.T) {
	profiles := mustProfiles(t, "lohisoftbot", "googlebot")
	google := &IPList{Prefixes: []netip.Prefix{netip.MustParsePrefix("66.249.64.0/27")}, Source: "test"}
	id := NewIdentity(&Verifier{Offline: true}, profiles, []*IPList{nil, google})
	lohi, goog := netip.MustParseAddr("79.139.58.121"), netip.MustParseAddr("66.249.64.3")
	got := id.ClassifyEach(context.Background(), []netip.Addr{lohi, goog})
	if len(got) != 2 {
		t.Fatalf("%d result maps, want one a profile (2)", len(got))
	}
	for i, want := range []map[netip.Addr]Verdict{{lohi: Genuine, goog: Spoofed}, {lohi: Spoofed, goog: Genuine}} {
		for a, v := range want {
			if r := got[i][a]; r.Verdict != v {
				t.Errorf("%s as %s: %s, want %s", a, profiles[i].Name, r.Verdict, v)
			}
		}
	}
}
