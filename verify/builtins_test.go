package verify

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/internal/dnstest"
	"github.com/miekg/dns"
)

// operatorServer serves lists at their operators' own URLs from one
// httptest TLS server: the client it returns connects there whatever the
// host, and trusts the server's certificate. bodies maps each URL to the
// list served (a URL not in it answers 404).
func operatorServer(t *testing.T, bodies map[string]string) (*http.Client, func(url string) int) {
	t.Helper()
	var mu sync.Mutex
	hits := map[string]int{}
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u := "https://" + r.Host + r.URL.Path
		mu.Lock()
		hits[u]++
		mu.Unlock()
		body, ok := bodies[u]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	addr := srv.Listener.Addr().String()
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, addr)
		},
		TLSClientConfig: &tls.Config{RootCAs: pool, ServerName: "example.com"},
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}, func(url string) int {
		mu.Lock()
		defer mu.Unlock()
		return hits[url]
	}
}

// operatorLayout is a list in the layout the operators publish (Google's,
// which OpenAI, Anthropic, Perplexity, Apple, Bing and DuckDuckGo share).
func operatorLayout(prefixes ...string) string {
	var items []string
	for _, p := range prefixes {
		key := "ipv4Prefix"
		if strings.Contains(p, ":") {
			key = "ipv6Prefix"
		}
		items = append(items, fmt.Sprintf(`{"%s": "%s"}`, key, p))
	}
	return `{"creationTime": "2026-12-01T10:00:00.000000", "prefixes": [` + strings.Join(items, ", ") + "]}"
}

// TestBuiltinProfiles verifies each built-in crawler the way its operator
// says: against a loopback DNS zone (a genuine host name under each
// suffix, one of them answered over TCP after a truncated UDP answer,
// and an impostor's name under another domain) and against its lists in
// their published layout at their own URLs from an httptest TLS server
// (a listed address, an unlisted one); and offline, by the built-in
// snapshot of each list that has one.
func TestBuiltinProfiles(t *testing.T) {
	now := time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)
	for i, name := range crawler.BuiltinNames() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p, _ := crawler.Builtin(name)
			listed := fmt.Sprintf("198.51.100.%d", 10+i)
			listed6 := fmt.Sprintf("2001:db8:%x::7", 0x100+i)
			bodies := map[string]string{}
			for j, u := range p.IPLists {
				if j == 0 {
					bodies[u] = operatorLayout(listed+"/32", listed6[:len(listed6)-1]+"/64")
				} else {
					bodies[u] = operatorLayout(fmt.Sprintf("198.51.101.%d/32", j))
				}
			}
			client, hits := operatorServer(t, bodies)
			ld := &ListLoader{Fetcher: &IPListFetcher{Client: client}, Mode: ListFetchNow, Now: func() time.Time { return now }}
			lists, err := ld.Load(context.Background(), p, "")
			if err != nil {
				t.Fatal(err)
			}
			for _, l := range lists.Loads {
				if l.Status != 200 || hits(l.Source) != 1 {
					t.Errorf("%s: status %d after %d requests (%v)", l.Source, l.Status, hits(l.Source), l.FetchErr)
				}
			}
			if len(lists.Warnings) != 0 {
				t.Errorf("warnings %q", lists.Warnings)
			}

			// The zone: for each suffix a genuine name, and impostors.
			z := dnstest.NewZone(t)
			type want struct {
				verdict Verdict
				method  string
				reason  string
			}
			cases := map[string]want{}
			for k, s := range p.FCrDNS {
				ip := fmt.Sprintf("203.0.113.%d", 10+k)
				host := fmt.Sprintf("crawl-203-0-113-%d.%s", 10+k, s)
				z.Add(t, host+". 300 IN A "+ip)
				z.PTR(t, ip, host)
				cases[ip] = want{Genuine, MethodFCrDNS, ""}
				if k == 0 {
					// Over TCP: the UDP answer about it comes truncated.
					arpa, _ := dns.ReverseAddr(ip)
					z.Truncate(arpa)
				}
			}
			z.PTR(t, "192.0.2.66", "crawl-192-0-2-66.evil.example")
			if len(p.FCrDNS) > 0 {
				// The impostor's own reverse zone naming a host of the
				// crawler's domain: the forward lookup does not confirm it.
				z.PTR(t, "192.0.2.67", "crawl-192-0-2-67."+p.FCrDNS[0])
				cases["192.0.2.66"] = want{Spoofed, MethodFCrDNS, ReasonPTRMismatch}
				cases["192.0.2.67"] = want{Spoofed, MethodFCrDNS, ReasonForwardMismatch}
			} else {
				cases["192.0.2.66"] = want{Spoofed, MethodIPList, ReasonNotInIPList}
			}
			if len(p.IPLists) > 0 {
				// Listed (without a host name of the crawler, when it has
				// suffixes: the list decides, with a warning).
				cases[listed] = want{Genuine, MethodIPList, ""}
				cases[listed6] = want{Genuine, MethodIPList, ""}
			}
			server := dnstest.Serve(t, z)
			v := &Verifier{Servers: []string{server}, Timeout: dnsTestHang, Profile: p, List: lists.List}
			var addrs []netip.Addr
			for ip := range cases {
				addrs = append(addrs, netip.MustParseAddr(ip))
			}
			for _, r := range v.Verify(context.Background(), addrs) {
				w := cases[r.Addr.String()]
				if r.Verdict != w.verdict || r.Method != w.method || r.Reason != w.reason {
					t.Errorf("%s: %s/%s/%s, want %s/%s/%s (ptr %v, forward %v, dns %s)", r.Addr, r.Verdict, r.Method, r.Reason,
						w.verdict, w.method, w.reason, r.PTR, r.Forward, r.DNSError)
				}
			}
			if len(p.FCrDNS) > 0 && z.TCPCount() == 0 {
				t.Error("no query came over TCP")
			}

			// Offline, with no cache: each list's built-in snapshot.
			off, err := (&ListLoader{Offline: true, Now: func() time.Time { return now }}).Load(context.Background(), p, "")
			if err != nil {
				t.Fatal(err)
			}
			snapped := 0
			for _, u := range p.IPLists {
				snap, ok := crawler.SnapshotOf(u)
				if !ok {
					continue
				}
				snapped++
				sl, err := ParseIPList(snap.Data)
				if err != nil {
					t.Fatalf("snapshot of %s: %v", u, err)
				}
				a := sl.Prefixes[len(sl.Prefixes)/2].Addr()
				ov := &Verifier{Offline: true, Profile: p, List: off.List}
				if r := ov.Verify(context.Background(), []netip.Addr{a})[0]; r.Verdict != Genuine || r.Method != MethodIPList {
					t.Errorf("offline, %s of the snapshot of %s: %s/%s/%s", a, u, r.Verdict, r.Method, r.Reason)
				}
			}
			if snapped > 0 {
				said := strings.Join(off.Warnings, "\n")
				if !strings.Contains(said, "built-in snapshot") || !strings.Contains(said, " days old") {
					t.Errorf("offline warnings %q do not give the snapshot's age", off.Warnings)
				}
				if off.List.Snapshot.IsZero() || !strings.Contains(off.List.Source, "(built-in snapshot of ") {
					t.Errorf("offline list from %q, snapshot %v", off.List.Source, off.List.Snapshot)
				}
			}
			ov := &Verifier{Offline: true, Profile: p, List: off.List}
			r := ov.Verify(context.Background(), []netip.Addr{netip.MustParseAddr("192.0.2.66")})[0]
			switch {
			case !off.List.Snapshot.IsZero() && (r.Verdict != Unverified || r.Reason != ReasonNotInSnapshot):
				// A snapshot may be older than the crawler's address.
				t.Errorf("offline, an address not in the snapshot: %s/%s, want unverified (not-in-snapshot)", r.Verdict, r.Reason)
			case len(off.List.Prefixes) > 0 && off.List.Snapshot.IsZero() && (r.Verdict != Spoofed || r.Reason != ReasonNotInIPList):
				t.Errorf("offline, an unlisted address: %s/%s", r.Verdict, r.Reason)
			case len(off.List.Prefixes) == 0 && (r.Verdict != Unverified || r.Reason != ReasonNoIPList):
				t.Errorf("offline without any list: %s/%s, want unverified (no-ip-list)", r.Verdict, r.Reason)
			}
		})
	}
}

// TestSnapshotsParse: every built-in snapshot is a valid list in its
// operator's layout, as the list parser takes a fetched one.
func TestSnapshotsParse(t *testing.T) {
	for _, s := range crawler.Snapshots() {
		l, err := ParseIPList(s.Data)
		if err != nil {
			t.Errorf("snapshot of %s: %v", s.URL, err)
			continue
		}
		if len(l.Prefixes) < 4 {
			t.Errorf("snapshot of %s: %d prefixes", s.URL, len(l.Prefixes))
		}
	}
}

// TestFetchFailureFallsBackToSnapshot: a list that cannot be fetched and
// has no cached copy leaves its built-in snapshot in force, and the
// warning says so with its age; `ips update` would say the same.
func TestFetchFailureFallsBackToSnapshot(t *testing.T) {
	p, _ := crawler.Builtin("gptbot")
	client, hits := operatorServer(t, nil) // every list: 404
	now := time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)
	ld := &ListLoader{Fetcher: &IPListFetcher{Client: client}, Mode: ListFetchNow, Now: func() time.Time { return now }}
	got, err := ld.Load(context.Background(), p, "")
	if err != nil {
		t.Fatal(err)
	}
	if hits("https://openai.com/gptbot.json") != 1 || got.Loads[0].FetchErr == nil || !got.Loads[0].Snapshot {
		t.Fatalf("load %+v after %d requests", got.Loads[0], hits("https://openai.com/gptbot.json"))
	}
	want := "ip list server answered with an error status: https://openai.com/gptbot.json answered 404 Not Found (cannot fetch); its built-in snapshot (2026-05-11, 206 days old) stays in force"
	if len(got.Warnings) != 1 || got.Warnings[0] != want {
		t.Errorf("warnings %q, want %q", got.Warnings, want)
	}
	if !got.List.Contains(netip.MustParseAddr("132.196.86.1")) || got.List.Snapshot.IsZero() {
		t.Errorf("list in force %s", got.List.Source)
	}
}
