package verify

import (
	"context"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/internal/fail"
)

func goodSettings() *Settings {
	return &Settings{DNSTimeout: 2 * time.Second, DNSRetries: 2, DNSConcurrency: DefaultDNSConcurrency}
}

func TestSettingsCheck(t *testing.T) {
	if err := goodSettings().Check(); err != nil {
		t.Fatalf("the defaults: %v", err)
	}
	for _, tc := range []struct {
		name string
		set  func(*Settings)
		msg  string
		hint bool
	}{
		{"timeout 0", func(s *Settings) { s.DNSTimeout = 0 }, "--dns-timeout 0s: give a duration above 0 and at most 1m", false},
		{"timeout 2m", func(s *Settings) { s.DNSTimeout = 2 * time.Minute }, "--dns-timeout 2m0s", false},
		{"retries", func(s *Settings) { s.DNSRetries = 11 }, "--dns-retries 11: give a number from 0 to 10", false},
		{"concurrency", func(s *Settings) { s.DNSConcurrency = MaxDNSConcurrency + 1 }, "--dns-concurrency 1025: give a number from 1 to 1024", false},
		{"http list", func(s *Settings) { s.IPList = "http://example.com/ips.json" }, `--ip-list "http://example.com/ips.json"`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := goodSettings()
			tc.set(s)
			err := s.Check()
			if fail.KindOf(err) != fail.Usage || !strings.HasPrefix(err.Error(), tc.msg) {
				t.Fatalf("Check = %v, want a usage error starting %q", err, tc.msg)
			}
			if (fail.HintOf(err) != "") != tc.hint {
				t.Errorf("hint %q, want one: %v", fail.HintOf(err), tc.hint)
			}
		})
	}
	s := goodSettings()
	s.IPList = "ips.json" // a file is fine
	if err := s.Check(); err != nil {
		t.Errorf("a file list: %v", err)
	}
}

func TestServers(t *testing.T) {
	got, err := Servers([]string{"127.0.0.1", "[::1]:5353", "192.0.2.1:53", "2001:db8::53"})
	if want := "127.0.0.1:53 [::1]:5353 192.0.2.1:53 [2001:db8::53]:53"; err != nil || strings.Join(got, " ") != want {
		t.Errorf("Servers = %q, %v; want %s", got, err, want)
	}
	for _, bad := range []string{"dns.example:53", "127.0.0.1:0", "127.0.0.1:99999", ""} {
		if _, err := Servers([]string{bad}); fail.KindOf(err) != fail.Usage || fail.HintOf(err) == "" {
			t.Errorf("Servers(%q) = %v, want a usage error with a hint", bad, err)
		}
	}
}

func TestSettingsListOverride(t *testing.T) {
	s := goodSettings()
	if v, err := s.ListOverride(3); v != "" || err != nil {
		t.Errorf("no --ip-list: %q, %v", v, err)
	}
	s.IPList = " https://example.com/ips.json "
	if v, err := s.ListOverride(1); v != "https://example.com/ips.json" || err != nil {
		t.Errorf("one crawler: %q, %v", v, err)
	}
	if _, err := s.ListOverride(2); fail.KindOf(err) != fail.Usage || !strings.Contains(err.Error(), "with 2 crawlers") {
		t.Errorf("two crawlers: %v, want a usage error", err)
	}
}

// TestSettingsLists: --crawler resolves to profiles (the default crawler
// without one) with the --ip-list in force; fetching them now refuses
// --offline and an --ip-list file.
func TestSettingsLists(t *testing.T) {
	s := goodSettings()
	ps, override, err := s.Lists(nil)
	if err != nil || len(ps) != 1 || ps[0].Name != crawler.Default || override != "" {
		t.Errorf("no --crawler: %v, %q, %v", ps, override, err)
	}
	if _, _, err := s.Lists([]string{"no-such-crawler"}); fail.KindOf(err) != fail.Usage {
		t.Errorf("an unknown crawler: %v, want a usage error", err)
	}
	s.IPList = "ips.json"
	if _, override, err := s.Lists(nil); override != "ips.json" || err != nil {
		t.Errorf("--ip-list file: %q, %v", override, err)
	}
	if _, _, err := s.ListsToFetch(nil); fail.KindOf(err) != fail.Usage || err.Error() != "--ip-list ips.json is a file: there is nothing to fetch" {
		t.Errorf("fetching an --ip-list file: %v", err)
	}
	s.IPList = "https://example.com/ips.json"
	if ps, override, err := s.ListsToFetch(nil); len(ps) != 1 || override != s.IPList || err != nil {
		t.Errorf("fetching an --ip-list URL: %v, %q, %v", ps, override, err)
	}
	s.Offline = true
	if _, _, err := s.ListsToFetch(nil); fail.KindOf(err) != fail.Usage || !strings.Contains(err.Error(), "cannot run with --offline") {
		t.Errorf("fetching --offline: %v", err)
	}
}

func TestSettingsCache(t *testing.T) {
	env := func(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }
	for _, tc := range []struct {
		name     string
		s        Settings
		dir      string
		warnings bool
	}{
		{"no cache", Settings{NoCache: true, CacheDir: "/x"}, "", false},
		{"flag", Settings{CacheDir: "/x", Getenv: env(map[string]string{"HOME": "/home/a"})}, "/x", false},
		{"xdg", Settings{Getenv: env(map[string]string{"XDG_CACHE_HOME": "/c", "HOME": "/home/a"})}, "/c/lohibot-audit", false},
		{"relative xdg", Settings{Getenv: env(map[string]string{"XDG_CACHE_HOME": "c", "HOME": "/home/a"})}, "/home/a/.cache/lohibot-audit", false},
		{"nothing", Settings{}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, warning := tc.s.Cache()
			if dir != tc.dir || (warning != "") != tc.warnings {
				t.Errorf("Cache = %q, %q; want %q, a warning: %v", dir, warning, tc.dir, tc.warnings)
			}
		})
	}
}

// A list file that cannot be read stops the run: a directory or a
// missing file is a usage error, said with the flag.
func TestSettingsIdentityListFile(t *testing.T) {
	dir := t.TempDir()
	p, _ := crawler.Builtin(crawler.Default)
	for _, tc := range []struct {
		list, msg string
	}{
		{dir, "cannot read --ip-list " + dir + ": it is a directory"},
		{filepath.Join(dir, "nope.json"), "cannot read --ip-list " + filepath.Join(dir, "nope.json") + ": "},
	} {
		s := goodSettings()
		s.IPList, s.Offline, s.NoCache, s.Resolvers = tc.list, true, true, []string{"127.0.0.1:53"}
		_, _, err := s.Identity(context.Background(), []*crawler.Profile{p})
		if fail.KindOf(err) != fail.Usage || !strings.HasPrefix(err.Error(), tc.msg) {
			t.Errorf("--ip-list %s: %v, want a usage error starting %q", tc.list, err, tc.msg)
		}
	}
	good := filepath.Join(dir, "ips.json")
	if err := os.WriteFile(good, []byte(`{"prefixes":[{"ipv4Prefix":"192.0.2.0/24"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	s := goodSettings()
	s.IPList, s.Offline, s.NoCache, s.Resolvers = good, true, true, []string{"127.0.0.1:53"}
	id, _, err := s.Identity(context.Background(), []*crawler.Profile{p})
	if err != nil || len(id.Lists) != 1 || len(id.Lists[0].Prefixes) != 1 {
		t.Fatalf("Identity with a list file = %v, %v", id, err)
	}
}

// TestSettingsProxiesFor: the proxies of values other than the settings'
// own, over the cached (else built-in) CDN edges.
func TestSettingsProxiesFor(t *testing.T) {
	s := &Settings{NoCache: true, TrustedProxies: []string{"private"}}
	set, err := s.ProxiesFor([]string{"203.0.113.0/24"}, false)
	if err != nil || !set.InTrusted(netip.MustParseAddr("203.0.113.9")) || set.InTrusted(netip.MustParseAddr("10.0.0.1")) || set.All() {
		t.Errorf("ProxiesFor(203.0.113.0/24) = %v, %v; want that range trusted, not the settings' own", set.Specs(), err)
	}
	if set, err := s.ProxiesFor(nil, true); err != nil || !set.All() {
		t.Errorf("ProxiesFor(--trust-xff) = %v, %v; want every address trusted", set, err)
	}
	if _, err := s.ProxiesFor([]string{"no-such-cdn"}, false); err == nil {
		t.Error("a value that names nothing: no error")
	}
}
