package verify

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/internal/urlarg"
	"github.com/lohisoft/lohibot-audit/proxy"
)

// MaxDNSConcurrency is the most addresses --dns-concurrency lets be
// verified at once: more would flood the resolver (and each needs a
// socket).
const MaxDNSConcurrency = 1024

// Settings are the identity settings of a run as the command line and the
// config file give them: how the IP lists are had (--ip-list, --offline,
// --cache-dir, --no-cache), which resolvers are asked and how
// (--resolver, --dns-timeout, --dns-retries, --dns-concurrency), and which
// proxies are trusted (--trusted-proxy, --trust-xff). Their errors name
// the flags and are usage errors (internal/fail).
type Settings struct {
	IPList         string
	Offline        bool
	CacheDir       string
	NoCache        bool
	Resolvers      []string
	DNSTimeout     time.Duration
	DNSRetries     int
	DNSConcurrency int
	TrustedProxies []string
	TrustXFF       bool
	// Getenv finds the cache's default place ($XDG_CACHE_HOME, $HOME).
	Getenv func(string) string
	// Client, when set, fetches the IP lists; UserAgent names the program.
	Client    *http.Client
	UserAgent string
	Now       func() time.Time
}

// Check rejects values that make no sense, before anything is fetched.
func (s *Settings) Check() error {
	if s.DNSTimeout <= 0 || s.DNSTimeout > time.Minute {
		return fail.Usagef("--dns-timeout %s: give a duration above 0 and at most 1m, such as 2s", s.DNSTimeout)
	}
	if s.DNSRetries < 0 || s.DNSRetries > 10 {
		return fail.Usagef("--dns-retries %d: give a number from 0 to 10", s.DNSRetries)
	}
	if s.DNSConcurrency < 1 || s.DNSConcurrency > MaxDNSConcurrency {
		return fail.Usagef("--dns-concurrency %d: give a number from 1 to %d, such as %d", s.DNSConcurrency, MaxDNSConcurrency, DefaultDNSConcurrency)
	}
	if strings.TrimSpace(s.IPList) == "" {
		return nil // each crawler's own lists
	}
	if err := urlarg.Check(s.IPList, "https"); err != nil {
		return fail.Hinted(fmt.Errorf("--ip-list %q: %w", s.IPList, err),
			"the list is fetched over https only: give its https:// URL, or download it and give the file")
	}
	return nil
}

// Servers checks --resolver values: an IP address with a port (IPv6 in
// brackets), or a bare IP address for port 53.
func Servers(values []string) ([]string, error) {
	var out []string
	for _, v := range values {
		host, port, err := net.SplitHostPort(v)
		if err != nil {
			host, port = strings.Trim(v, "[]"), "53"
		}
		a, aerr := netip.ParseAddr(host)
		p, perr := strconv.ParseUint(port, 10, 16)
		if aerr != nil || perr != nil || p == 0 {
			return nil, fail.Hinted(fmt.Errorf("--resolver %q is not an IP address and port", v),
				"give HOST:PORT with HOST an IP address, such as 127.0.0.1:53 or [::1]:53")
		}
		out = append(out, net.JoinHostPort(a.String(), strconv.FormatUint(p, 10)))
	}
	return out, nil
}

// ListOverride is the --ip-list value that replaces the lists of
// crawlers: "" for none (each crawler's own lists), the value when one
// crawler is audited; with several, a usage error.
func (s *Settings) ListOverride(crawlers int) (string, error) {
	v := strings.TrimSpace(s.IPList)
	if v == "" {
		return "", nil
	}
	if crawlers > 1 {
		return "", fail.Hinted(fmt.Errorf("--ip-list %s with %d crawlers: it would stand for every crawler's list", v, crawlers),
			"give one --crawler with --ip-list, or name the lists in a profile file (ip_lists)")
	}
	return v, nil
}

// Lists resolves the crawlers --crawler names (crawler.Resolve) and the
// --ip-list that replaces their lists ("" for their own; ListOverride).
func (s *Settings) Lists(names []string) ([]*crawler.Profile, string, error) {
	profiles, err := crawler.Resolve(names)
	if err != nil {
		return nil, "", err
	}
	override, err := s.ListOverride(len(profiles))
	return profiles, override, err
}

// ListsToFetch is Lists for fetching the lists now (`ips update`): with
// --offline, or an --ip-list that is a file, there is nothing to fetch, a
// usage error.
func (s *Settings) ListsToFetch(names []string) ([]*crawler.Profile, string, error) {
	profiles, override, err := s.Lists(names)
	switch {
	case err != nil:
		return nil, "", err
	case s.Offline:
		return nil, "", fail.Usagef("ips update fetches the list: it cannot run with --offline")
	case override != "" && !urlarg.IsURL(override):
		return nil, "", fail.Usagef("--ip-list %s is a file: there is nothing to fetch", override)
	}
	return profiles, override, nil
}

// Cache is --cache-dir, else $XDG_CACHE_HOME/lohibot-audit, else
// $HOME/.cache/lohibot-audit; "" with --no-cache, or with a warning when
// there is no place for it.
func (s *Settings) Cache() (dir, warning string) {
	switch {
	case s.NoCache:
		return "", ""
	case s.CacheDir != "":
		return s.CacheDir, ""
	}
	getenv := s.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	if x := getenv("XDG_CACHE_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "lohibot-audit"), ""
	}
	if h := getenv("HOME"); filepath.IsAbs(h) {
		return filepath.Join(h, ".cache", "lohibot-audit"), ""
	}
	return "", "cache: neither $XDG_CACHE_HOME nor $HOME is set; nothing is cached between runs (set --cache-dir)"
}

// Proxies are the proxies of a run: the CDN edge lists as `ips update`
// cached them in dir (else the built-in snapshot), and what
// --trusted-proxy and --trust-xff trust, with the loader's warnings. A
// --trusted-proxy value that names nothing is a usage error.
func (s *Settings) Proxies(dir string) (*proxy.Set, []string, error) {
	set, warnings, err := (&proxy.Loader{CacheDir: dir}).Set(s.TrustedProxies, s.TrustXFF)
	if err != nil {
		return nil, nil, fail.Usagef("%v", err)
	}
	return set, warnings, nil
}

// Loader is the IP list loader the settings ask for, caching in dir.
func (s *Settings) Loader(dir string, mode ListMode) *ListLoader {
	return &ListLoader{
		Fetcher:  &IPListFetcher{Client: s.Client, UserAgent: s.UserAgent},
		CacheDir: dir,
		Now:      s.Now,
		Mode:     mode,
		Offline:  s.Offline,
	}
}

// Identity checks the settings and loads the identity of profiles
// (LoadIdentity): their IP lists fetched, revalidated and cached as the
// settings say, their verifiers asking --resolver (else the system's
// resolvers). A list that cannot be had is a warning, with the cached or
// built-in list in force; a list file that cannot be read is an error
// (ListFail).
func (s *Settings) Identity(ctx context.Context, profiles []*crawler.Profile) (id *Identity, repeated []string, err error) {
	if err := s.Check(); err != nil {
		return nil, nil, err
	}
	servers, err := Servers(s.Resolvers)
	if err != nil {
		return nil, nil, err
	}
	override, err := s.ListOverride(len(profiles))
	if err != nil {
		return nil, nil, err
	}
	dir, warn := s.Cache()
	proxies, pw, err := s.Proxies(dir)
	if err != nil {
		return nil, nil, err
	}
	cfg := IdentityConfig{
		Profiles:     profiles,
		Loader:       s.Loader(dir, ListAuto),
		ListOverride: override,
		Servers:      servers,
		Timeout:      s.DNSTimeout,
		Retries:      s.DNSRetries,
		Concurrency:  s.DNSConcurrency,
		Offline:      s.Offline,
		Proxies:      proxies,
		CacheDir:     dir,
		Now:          s.Now,
	}
	if warn != "" {
		cfg.Warnings = []string{warn}
	}
	cfg.Warnings = append(cfg.Warnings, pw...)
	id, repeated, err = LoadIdentity(ctx, cfg)
	return id, repeated, ListFail(err)
}

// ListFail words an IP list file that cannot be read (*ListFileError)
// for the command line: a file read in part is an input not read whole
// (fail.Incomplete), else a usage error. Other errors are returned as
// they are.
func ListFail(err error) error {
	var fe *ListFileError
	if !errors.As(err, &fe) {
		return err
	}
	if fe.Partial {
		return fail.New(fail.Incomplete, fmt.Errorf("cannot read --ip-list %s whole: %w", fe.Path, fe.Err), "")
	}
	if fe.Err.Error() == "it is a directory" {
		return fail.Usagef("cannot read --ip-list %s: it is a directory", fe.Path)
	}
	return fail.Hinted(fmt.Errorf("cannot read --ip-list %s: %w", fe.Path, fe.Err), "give a file, or an https:// URL")
}

// ProxiesFor are the proxies that trusted (--trusted-proxy values) and
// trustXFF (--trust-xff) trust when they are not the settings' own (a
// merge: the snapshots'), over the CDN edge lists as `ips update` cached
// them where the settings say (else the built-in snapshot).
func (s *Settings) ProxiesFor(trusted []string, trustXFF bool) (*proxy.Set, error) {
	dir, _ := s.Cache()
	set, _, err := (&proxy.Loader{CacheDir: dir}).Set(trusted, trustXFF)
	return set, err
}
