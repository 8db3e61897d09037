package verify

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/dnstest"
	"github.com/miekg/dns"
)

// cacheTestClock is a settable clock.
type cacheTestClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *cacheTestClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *cacheTestClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestDNSCacheBetweenRuns(t *testing.T) {
	z := newDNSTestZone(t,
		"98.58.139.79.in-addr.arpa. 600 IN PTR crawler1.bot.lohisoft.com.",
		"crawler1.bot.lohisoft.com. 604800 IN A 79.139.58.98", // a week: capped at 24 h
		"121.58.139.79.in-addr.arpa. 0 IN PTR crawler2.bot.lohisoft.com.",
		"crawler2.bot.lohisoft.com. 3600 IN A 79.139.58.121",
	)
	addr := dnstest.Serve(t, z)
	dir := t.TempDir()
	clock := &cacheTestClock{t: time.Now()}
	a := netip.MustParseAddr("79.139.58.98")
	b := netip.MustParseAddr("79.139.58.121")
	nx := netip.MustParseAddr("203.0.113.1") // NXDOMAIN with a SOA: 300 s

	run := func() []Result {
		t.Helper()
		c, err := OpenDNSCache(dir, clock.now)
		if err != nil {
			t.Fatalf("open cache: %v", err)
		}
		v := &Verifier{Profile: lohiProfile, Servers: []string{addr}, Cache: c, Timeout: dnsTestHang, after: z.after}
		res := v.Verify(context.Background(), []netip.Addr{a, b, nx})
		if err := c.Save(); err != nil {
			t.Fatalf("save cache: %v", err)
		}
		return res
	}
	steps := []struct {
		name    string
		advance time.Duration
		// queries expected during this run, per question
		want map[string]int
	}{
		// A run that gets a negative answer from the resolver checks it
		// once against the root zone ("NS ").
		{name: "first run asks everything", want: map[string]int{"NS ": 1,
			"PTR 98.58.139.79.in-addr.arpa": 1, "A crawler1.bot.lohisoft.com": 1,
			"PTR 121.58.139.79.in-addr.arpa": 1, "A crawler2.bot.lohisoft.com": 1, "PTR 1.113.0.203.in-addr.arpa": 1}},
		{name: "second run: only the TTL 0 answer again", advance: time.Minute, want: map[string]int{
			"PTR 121.58.139.79.in-addr.arpa": 1}},
		{name: "after 10 min the PTR and the negative answer expired", advance: 10 * time.Minute, want: map[string]int{"NS ": 1,
			"PTR 98.58.139.79.in-addr.arpa": 1, "PTR 121.58.139.79.in-addr.arpa": 1, "PTR 1.113.0.203.in-addr.arpa": 1}},
		{name: "after 25 h even the week-long A record is asked again", advance: 25 * time.Hour, want: map[string]int{"NS ": 1,
			"PTR 98.58.139.79.in-addr.arpa": 1, "A crawler1.bot.lohisoft.com": 1,
			"PTR 121.58.139.79.in-addr.arpa": 1, "A crawler2.bot.lohisoft.com": 1, "PTR 1.113.0.203.in-addr.arpa": 1}},
	}
	before := map[string]int{}
	for _, st := range steps {
		clock.add(st.advance)
		res := run()
		if res[0].Verdict != Genuine || res[1].Verdict != Genuine || res[2].Verdict != Spoofed || res[2].Reason != ReasonNoPTR {
			t.Fatalf("%s: verdicts %+v", st.name, res)
		}
		got := map[string]int{}
		for k, n := range z.Queries() {
			if d := n - before[k]; d > 0 {
				got[k[:len(k)-1]] = d // without the trailing dot
			}
			before[k] = n
		}
		if !mapsEqual(got, st.want) {
			t.Errorf("%s: queries %v, want %v", st.name, got, st.want)
		}
	}
}

// TestDNSCacheNegativeWithoutSOA checks that a negative answer without a
// SOA (so without a TTL) is kept for the floor, no longer.
func TestDNSCacheNegativeWithoutSOA(t *testing.T) {
	z := newDNSTestZone(t)
	z.NoSOA(true)
	addr := dnstest.Serve(t, z)
	dir := t.TempDir()
	clock := &cacheTestClock{t: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
	a := netip.MustParseAddr("203.0.113.1")
	for _, step := range []struct {
		advance time.Duration
		asked   int
	}{{0, 1}, {dnsNoSOANegativeTTL - time.Minute, 1}, {2 * time.Minute, 2}} {
		clock.add(step.advance)
		c, err := OpenDNSCache(dir, clock.now)
		if err != nil {
			t.Fatal(err)
		}
		v := &Verifier{Profile: lohiProfile, Servers: []string{addr}, Cache: c, Timeout: dnsTestHang, after: z.after}
		if r := v.Verify(context.Background(), []netip.Addr{a})[0]; r.Verdict != Spoofed || r.Reason != ReasonNoPTR {
			t.Fatalf("%+v", r)
		}
		if err := c.Save(); err != nil {
			t.Fatal(err)
		}
		if n := z.Count(dns.TypePTR, "1.113.0.203.in-addr.arpa"); n != step.asked {
			t.Errorf("after %s: asked %d times, want %d", step.advance, n, step.asked)
		}
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestDNSCacheCorrupt(t *testing.T) {
	tests := []struct {
		name    string
		content string
	}{
		{"garbage", "\x00\x01not json"},
		{"wrong format", `{"format": 99, "entries": {}}`},
		{"empty", ""},
		{"truncated", `{"format": 1, "entries": {"PTR 1.2.3.4.in-addr.arpa.": {"rcode": 0, "values": ["a.`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "dns.json")
			if err := os.WriteFile(path, []byte(tc.content), 0o600); err != nil {
				t.Fatal(err)
			}
			c, err := OpenDNSCache(dir, nil)
			if !errors.Is(err, ErrCacheCorrupt) || c == nil || c.Len() != 0 {
				t.Fatalf("err = %v, cache %v: want ErrCacheCorrupt and an empty, usable cache", err, c)
			}
			c.put(dnsKey("a.example", dns.TypeA), dnsLookup{Values: []string{"192.0.2.1"}, TTL: 60}, time.Now())
			if err := c.Save(); err != nil {
				t.Fatal(err)
			}
			c2, err := OpenDNSCache(dir, nil)
			if err != nil || c2.Len() != 1 {
				t.Fatalf("after save: err %v, %d entries, want the corrupt file replaced", err, c2.Len())
			}
		})
	}
}

func TestDNSCacheDistrustsEntries(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	f := cacheDNSFile{Format: cacheFormat, Entries: map[string]cacheDNSEntry{
		"A ok.example.":       {Values: []string{"192.0.2.1"}, Expires: now.Add(time.Hour).Unix()},
		"A expired.example.":  {Values: []string{"192.0.2.1"}, Expires: now.Add(-time.Second).Unix()},
		"A forever.example.":  {Values: []string{"192.0.2.1"}, Expires: now.Add(48 * time.Hour).Unix()},
		"A badaddr.example.":  {Values: []string{"192.0.2.300"}, Expires: now.Add(time.Hour).Unix()},
		"A v6.example.":       {Values: []string{"2001:db8::1"}, Expires: now.Add(time.Hour).Unix()},
		"PTR badname.arpa.":   {Values: []string{"a..b"}, Expires: now.Add(time.Hour).Unix()},
		"MX mx.example.":      {Values: []string{"mail.example."}, Expires: now.Add(time.Hour).Unix()},
		"A servfail.example.": {Rcode: dns.RcodeServerFailure, Expires: now.Add(time.Hour).Unix()},
	}}
	data, _ := json.Marshal(f)
	os.WriteFile(filepath.Join(dir, "dns.json"), data, 0o600)
	c, err := OpenDNSCache(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.Len() != 1 {
		t.Fatalf("kept %d entries, want only the valid one: %v", c.Len(), c.entries)
	}
	if _, _, ok := c.get("A ok.example."); !ok {
		t.Fatal("the valid entry is missing")
	}
}

func TestDNSCacheConcurrentRuns(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			c, _ := OpenDNSCache(dir, nil)
			for j := range 50 {
				c.put(dnsKey(netip.AddrFrom4([4]byte{192, 0, byte(i), byte(j)}).String()+".example", dns.TypeA),
					dnsLookup{Values: []string{"192.0.2.1"}, TTL: 600}, time.Now())
			}
			if err := c.Save(); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	c, err := OpenDNSCache(dir, nil)
	if err != nil {
		t.Fatalf("after concurrent saves: %v", err)
	}
	if c.Len() < 50 {
		t.Fatalf("%d entries, want at least one run's 50", c.Len())
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".*.tmp*"))
	if len(left) != 0 {
		t.Fatalf("temporary files left behind: %v", left)
	}
	// The cache says which addresses were looked up: only its owner reads it.
	if fi, err := os.Stat(filepath.Join(dir, "dns.json")); err != nil {
		t.Fatal(err)
	} else if fi.Mode().Perm() != 0o600 {
		t.Fatalf("dns.json has mode %v, want 0600", fi.Mode().Perm())
	}
}

func TestIPListCache(t *testing.T) {
	dir := t.TempDir()
	src := "https://lohisoft.com/bot/ips.json"
	if _, err := LoadCachedIPList(dir, src); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("empty dir: err = %v, want fs.ErrNotExist", err)
	}
	fetched := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
	e := &IPListCacheEntry{Source: src, ETag: `"v1"`, Fetched: fetched, Body: json.RawMessage(`["79.139.58.98"]`)}
	if err := SaveCachedIPList(dir, e); err != nil {
		t.Fatal(err)
	}
	got, err := LoadCachedIPList(dir, src)
	if err != nil {
		t.Fatal(err)
	}
	l, err := got.List()
	if err != nil || l.String() != "79.139.58.98" || l.Source != src || !l.Fetched.Equal(fetched) || got.ETag != `"v1"` {
		t.Fatalf("got %+v / %v (%v)", got, l, err)
	}
	if _, err := LoadCachedIPList(dir, "https://other.example/ips.json"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("another source: err = %v, want fs.ErrNotExist", err)
	}
	os.WriteFile(cacheIPListPath(dir, src), []byte(`{"source": "`+src+`", "body": [] }`), 0o600)
	if _, err := LoadCachedIPList(dir, src); !errors.Is(err, ErrCacheCorrupt) {
		t.Fatalf("corrupt: err = %v, want ErrCacheCorrupt", err)
	}
}

// FuzzDNSCacheFile checks that any cache file opens without a panic and
// that only well-formed, unexpired entries within the TTL cap survive.
func FuzzDNSCacheFile(f *testing.F) {
	now := time.Now().Unix()
	f.Add([]byte(`{"format":1,"entries":{"A a.example.":{"rcode":0,"values":["192.0.2.1"],"expires":` + strconv.FormatInt(now+60, 10) + `}}}`))
	f.Add([]byte(`{"format":1,"entries":{"PTR 1.2.0.192.in-addr.arpa.":{"rcode":3,"expires":` + strconv.FormatInt(now+60, 10) + `}}}`))
	f.Add([]byte(`{"format":1,"entries":{"AAAA b.example.":{"rcode":0,"values":["2001:db8::1","x"],"expires":1}}}`))
	f.Add([]byte("{garbage"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "dns.json"), data, 0o600); err != nil {
			t.Fatal(err)
		}
		c, err := OpenDNSCache(dir, nil)
		if c == nil {
			t.Fatal("nil cache")
		}
		if err != nil && c.Len() != 0 {
			t.Fatal("a rejected file left entries")
		}
		for k, e := range c.entries {
			if !cacheValidEntry(k, e, time.Now().Add(-time.Minute)) {
				t.Fatalf("kept invalid entry %q: %+v", k, e)
			}
			if time.Until(time.Unix(e.Expires, 0)) > dnsMaxTTL {
				t.Fatalf("kept an entry beyond the TTL cap: %+v", e)
			}
		}
	})
}
