package cmd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/internal/progress"
	"github.com/lohisoft/lohibot-audit/internal/urlarg"
	"github.com/lohisoft/lohibot-audit/proxy"
	"github.com/lohisoft/lohibot-audit/verify"
)

// identityMaxConcurrency is the most addresses --dns-concurrency lets be
// verified at once: more would flood the resolver (and each needs a
// socket).
const identityMaxConcurrency = 1024

// newIdentityFor checks the identity flags and loads the identity of
// profiles (verify.LoadIdentity): their IP lists fetched, revalidated and
// cached as --ip-list, --offline, --cache-dir and --no-cache say
// (env.HTTPClient overrides the HTTP client), their verifiers asking
// --resolver (else the system's resolvers) as --dns-timeout, --dns-retries
// and --dns-concurrency say. Bad flags are a usage error; a list that
// cannot be had is a warning, with the cached or built-in list in force.
func newIdentityFor(ctx context.Context, env *Env, o *auditOptions, profiles []*crawler.Profile) (*verify.Identity, error) {
	if err := identityCheckFlags(o); err != nil {
		return nil, err
	}
	servers, err := identityServers(o.Resolvers)
	if err != nil {
		return nil, err
	}
	override, err := identityListOverride(o, profiles)
	if err != nil {
		return nil, err
	}
	dir, warn := identityCacheDir(env, o)
	proxies, pw, err := identityProxies(o, dir)
	if err != nil {
		return nil, err
	}
	cfg := verify.IdentityConfig{
		Profiles:     profiles,
		Loader:       identityLoader(env, o, dir, verify.ListAuto),
		ListOverride: override,
		Servers:      servers,
		Timeout:      o.DNSTimeout,
		Retries:      o.DNSRetries,
		Concurrency:  o.DNSConcurrency,
		Offline:      o.Offline,
		Proxies:      proxies,
		CacheDir:     dir,
		Now:          env.Now,
	}
	if warn != "" {
		cfg.Warnings = []string{warn}
	}
	cfg.Warnings = append(cfg.Warnings, pw...)
	vid, repeated, err := verify.LoadIdentity(ctx, cfg)
	if err != nil {
		return nil, listFileError(err)
	}
	for _, w := range repeated {
		if env.repeated == nil {
			env.repeated = map[string]bool{}
		}
		env.repeated[w] = true
	}
	if progressWanted(env, o) {
		vid.Watch = progress.Verification(env.Stderr, progressOptions(env))
	}
	return vid, nil
}

// identityProxies is the proxies of a run: the CDN edge lists as `ips
// update` cached them in dir (else the built-in snapshot), and what
// --trusted-proxy and --trust-xff trust. A --trusted-proxy value that
// names nothing is a usage error.
func identityProxies(o *auditOptions, dir string) (*proxy.Set, []string, error) {
	edges, warnings := (&proxy.Loader{CacheDir: dir}).Load()
	s, err := proxy.NewSet(edges, o.TrustedProxies, o.TrustXFF)
	if err != nil {
		return nil, nil, usageError("%v", err)
	}
	return s, warnings, nil
}

// identityListOverride is the --ip-list value that replaces the profiles'
// own lists: "" for none (each profile's lists), the value when one
// crawler is audited; with several, a usage error.
func identityListOverride(o *auditOptions, profiles []*crawler.Profile) (string, error) {
	v := strings.TrimSpace(o.IPList)
	if v == "" {
		return "", nil
	}
	if len(profiles) > 1 {
		return "", &exitError{code: ExitUsage, err: withHint(
			fmt.Errorf("--ip-list %s with %d crawlers: it would stand for every crawler's list", v, len(profiles)),
			"give one --crawler with --ip-list, or name the lists in a profile file (ip_lists)")}
	}
	return v, nil
}

// identityLoader is the IP list loader the flags ask for.
func identityLoader(env *Env, o *auditOptions, dir string, mode verify.ListMode) *verify.ListLoader {
	return &verify.ListLoader{
		Fetcher:  &verify.IPListFetcher{Client: env.HTTPClient, UserAgent: "lohibot-audit/" + Version},
		CacheDir: dir,
		Now:      env.Now,
		Mode:     mode,
		Offline:  o.Offline,
	}
}

// listFileError maps an IP list file that cannot be read to its exit code.
func listFileError(err error) error {
	var fe *verify.ListFileError
	if !errors.As(err, &fe) {
		return err
	}
	if fe.Partial {
		return &exitError{code: ExitIncomplete, err: fmt.Errorf("cannot read --ip-list %s whole: %w", fe.Path, fe.Err)}
	}
	if fe.Err.Error() == "it is a directory" {
		return usageError("cannot read --ip-list %s: it is a directory", fe.Path)
	}
	return &exitError{code: ExitUsage, err: withHint(
		fmt.Errorf("cannot read --ip-list %s: %w", fe.Path, fe.Err),
		"give a file, or an https:// URL")}
}

// identityCheckFlags rejects flag values that make no sense.
func identityCheckFlags(o *auditOptions) error {
	if o.DNSTimeout <= 0 || o.DNSTimeout > time.Minute {
		return usageError("--dns-timeout %s: give a duration above 0 and at most 1m, such as 2s", o.DNSTimeout)
	}
	if o.DNSRetries < 0 || o.DNSRetries > 10 {
		return usageError("--dns-retries %d: give a number from 0 to 10", o.DNSRetries)
	}
	if o.DNSConcurrency < 1 || o.DNSConcurrency > identityMaxConcurrency {
		return usageError("--dns-concurrency %d: give a number from 1 to %d, such as %d", o.DNSConcurrency, identityMaxConcurrency, verify.DefaultDNSConcurrency)
	}
	if strings.TrimSpace(o.IPList) == "" {
		return nil // each crawler's own lists
	}
	if err := urlarg.Check(o.IPList, "https"); err != nil {
		return &exitError{code: ExitUsage, err: withHint(
			fmt.Errorf("--ip-list %q: %w", o.IPList, err),
			"the list is fetched over https only: give its https:// URL, or download it and give the file")}
	}
	return nil
}

// identityServers checks --resolver values: an IP address with a port
// (IPv6 in brackets), or a bare IP address for port 53.
func identityServers(values []string) ([]string, error) {
	var out []string
	for _, v := range values {
		host, port, err := net.SplitHostPort(v)
		if err != nil {
			host, port = strings.Trim(v, "[]"), "53"
		}
		a, aerr := netip.ParseAddr(host)
		p, perr := strconv.ParseUint(port, 10, 16)
		if aerr != nil || perr != nil || p == 0 {
			return nil, &exitError{code: ExitUsage, err: withHint(
				fmt.Errorf("--resolver %q is not an IP address and port", v),
				"give HOST:PORT with HOST an IP address, such as 127.0.0.1:53 or [::1]:53")}
		}
		out = append(out, net.JoinHostPort(a.String(), strconv.FormatUint(p, 10)))
	}
	return out, nil
}

// identityCacheDir is --cache-dir, else $XDG_CACHE_HOME/lohibot-audit,
// else $HOME/.cache/lohibot-audit; "" with --no-cache, or with a warning
// when there is no place for it.
func identityCacheDir(env *Env, o *auditOptions) (dir, warning string) {
	switch {
	case o.NoCache:
		return "", ""
	case o.CacheDir != "":
		return o.CacheDir, ""
	}
	if x := env.Getenv("XDG_CACHE_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "lohibot-audit"), ""
	}
	if h := env.Getenv("HOME"); filepath.IsAbs(h) {
		return filepath.Join(h, ".cache", "lohibot-audit"), ""
	}
	return "", "cache: neither $XDG_CACHE_HOME nor $HOME is set; nothing is cached between runs (set --cache-dir)"
}

// ipListIsURL reports whether an --ip-list value names a URL rather than a
// file.
func ipListIsURL(s string) bool { return urlarg.IsURL(s) }

// The IP list modes, as the commands name them.
const (
	ipListAuto     = verify.ListAuto
	ipListNoFetch  = verify.ListNoFetch
	ipListFetchNow = verify.ListFetchNow
)
