package verify

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"net"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/proxy"
	"github.com/miekg/dns"
)

// Identity judges the addresses that claim to be the crawlers of one run:
// a Verifier per profile, all sharing one resolver, the DNS answers of the
// run and the DNS cache, with each crawler's IP list in force. Build it
// with NewIdentity; it is safe for concurrent use once built.
type Identity struct {
	// Profiles are the crawlers, in the order given; profile numbers in
	// Classify and Settled index it.
	Profiles []*crawler.Profile
	// Lists are the IP lists in force, one per profile.
	Lists []*IPList
	// Verifiers verify addresses, one per profile.
	Verifiers []*Verifier
	// Cache is the DNS cache, saved after each Classify; nil keeps
	// nothing.
	Cache *DNSCache
	// Proxies are the CDN edges and trusted proxies of the run (base's):
	// their addresses are unverified with reason proxy.
	Proxies *proxy.Set
	// Watch, when set, is called as each Classify starts, with the
	// source of its progress; the function it returns is called when it
	// ends (for a progress line on a terminal).
	Watch func(progress func() Progress) (stop func())

	mu       sync.Mutex
	warnings []string
	quiet    map[string]bool
}

// NewIdentity builds an Identity for profiles (at least one) with lists,
// the IP list in force for each (nil: its built-in list). base holds the
// DNS settings (Servers, Timeout, Retries, Concurrency, RetryTimeout,
// Cache, Offline) and the Proxies; its Profile and List are ignored.
func NewIdentity(base *Verifier, profiles []*crawler.Profile, lists []*IPList) *Identity {
	id := &Identity{Profiles: profiles, Cache: base.Cache, Proxies: base.Proxies, quiet: map[string]bool{}}
	root := &Verifier{Servers: base.Servers, Timeout: base.Timeout, Retries: base.Retries,
		Concurrency: base.Concurrency, RetryTimeout: base.RetryTimeout, Cache: base.Cache,
		Offline: base.Offline, Proxies: base.Proxies, Now: base.Now, after: base.after}
	for i, p := range profiles {
		var l *IPList
		if i < len(lists) {
			l = lists[i]
		}
		if l == nil {
			l = BuiltinList(p)
		}
		id.Lists = append(id.Lists, l)
		if i == 0 {
			root.Profile, root.List = p, l
			id.Verifiers = append(id.Verifiers, root)
			continue
		}
		id.Verifiers = append(id.Verifiers, root.For(p, l))
	}
	return id
}

// Warn adds a run-level warning for the user, once.
func (id *Identity) Warn(w string) {
	id.mu.Lock()
	defer id.mu.Unlock()
	if !id.quiet[w] && !slices.Contains(id.warnings, w) {
		id.warnings = append(id.warnings, w)
	}
}

// Quiet keeps a verifier warning from being added: the caller has said it
// better.
func (id *Identity) Quiet(w string) {
	id.mu.Lock()
	defer id.mu.Unlock()
	id.quiet[w] = true
}

// Warnings returns the warnings so far, each once, in the order they
// arose.
func (id *Identity) Warnings() []string {
	id.mu.Lock()
	defer id.mu.Unlock()
	return slices.Clone(id.warnings)
}

// Listed returns the prefixes of every crawler's list in force, sorted and
// deduplicated: the addresses whose requests a log reader keeps.
func (id *Identity) Listed() []netip.Prefix {
	var out []netip.Prefix
	for _, l := range id.Lists {
		out = append(out, l.Prefixes...)
	}
	slices.SortFunc(out, ipComparePrefix)
	return slices.Compact(out)
}

// Settled is Verifiers[profile].Settled: the verdict of an address that
// needs no DNS.
func (id *Identity) Settled(profile int, a netip.Addr) (Result, bool) {
	return id.Verifiers[profile].Settled(a)
}

// Classify verifies addrs as claims to be Profiles[profile] and returns
// each one's result, keyed by the address as given and by its unmapped
// form. The verifiers' run-level warnings, what kept addresses unverified
// and forged answers are added to the warnings, and the DNS cache is
// saved.
func (id *Identity) Classify(ctx context.Context, profile int, addrs []netip.Addr) map[netip.Addr]Result {
	v := id.Verifiers[profile]
	stop := func() {}
	if id.Watch != nil {
		stop = id.Watch(v.Progress)
	}
	results := v.Verify(ctx, addrs)
	stop()
	out := make(map[netip.Addr]Result, len(addrs))
	for i, a := range addrs {
		out[a] = results[i]
		out[results[i].Addr] = results[i]
	}
	for _, w := range v.Warnings() {
		id.Warn(w)
	}
	if w := UnverifiedWarning(out); w != "" {
		id.Warn(w)
	}
	if n := v.IgnoredAnswers(); n > 0 {
		id.Warn(fmt.Sprintf("dns: %d packets that did not answer their query (another id or question) were ignored: forged answers racing the resolver's, or a broken resolver", n))
	}
	if err := id.Cache.Save(); err != nil {
		id.Warn(fmt.Sprintf("dns cache: %v; answers were not kept for the next run", err))
	}
	return out
}

// ClassifyEach verifies addrs as claims to be each of Profiles in turn
// (Classify): the results of Profiles[i] are the i-th map.
func (id *Identity) ClassifyEach(ctx context.Context, addrs []netip.Addr) []map[netip.Addr]Result {
	out := make([]map[netip.Addr]Result, len(id.Profiles))
	for i := range id.Profiles {
		out[i] = id.Classify(ctx, i, addrs)
	}
	return out
}

// UnverifiedWarning says how many addresses stayed unverified because DNS
// could not answer, and why, or "" when none did, or when the only reasons
// are that there was no resolver to ask, or none working (a warning of its
// own says that).
func UnverifiedWarning(results map[netip.Addr]Result) string {
	kinds := map[string]int{}
	seen := map[netip.Addr]bool{}
	n := 0
	for _, r := range results {
		if seen[r.Addr] || r.Verdict != Unverified || r.Reason != ReasonDNSError || r.DNSFailure == DNSFailureCanceled {
			continue
		}
		seen[r.Addr] = true
		kind := r.DNSFailure
		if kind == "" {
			kind = DNSFailureOther
		}
		kinds[kind]++
		n++
	}
	if n == kinds[DNSFailureUnreachable]+kinds[DNSFailureNoResolver]+kinds[DNSFailureBrokenResolver] {
		return ""
	}
	names := slices.Collect(maps.Keys(kinds))
	slices.SortFunc(names, func(a, b string) int {
		if c := cmp.Compare(kinds[b], kinds[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	var why []string
	for _, k := range names {
		why = append(why, fmt.Sprintf("%s %d", k, kinds[k]))
	}
	noun := "addresses stay"
	if n == 1 {
		noun = "address stays"
	}
	return fmt.Sprintf("dns: %d %s unverified, DNS could not answer for them (%s); nftables rules never block unverified addresses, but the cloudflare and modsecurity block-spoofed rules stop them, since they refuse the token from every address but the genuine ones",
		n, noun, strings.Join(why, ", "))
}

// DefaultResolvConf is where the system's resolvers are read from when a
// run names none.
const DefaultResolvConf = "/etc/resolv.conf"

// SystemServers returns the nameservers of the resolv.conf file at path
// (DefaultResolvConf when ""), as HOST:PORT; an error when it cannot be
// read or names none.
func SystemServers(path string) ([]string, error) {
	if path == "" {
		path = DefaultResolvConf
	}
	conf, err := dns.ClientConfigFromFile(path)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", path, fail.PathCause(err))
	}
	var out []string
	for _, s := range conf.Servers {
		if a, err := netip.ParseAddr(s); err == nil {
			out = append(out, net.JoinHostPort(a.String(), conf.Port))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no nameserver in %s", path)
	}
	return out, nil
}

// IdentityConfig is what [LoadIdentity] builds an Identity from: the
// crawlers, where their IP lists come from, and how DNS is asked.
type IdentityConfig struct {
	// Profiles are the crawlers, one or more.
	Profiles []*crawler.Profile
	// Loader loads each crawler's IP lists (fetched, revalidated, cached
	// or built in, as it says); ListOverride, when not "", is the list (a
	// URL or a file) that replaces a crawler's own.
	Loader       *ListLoader
	ListOverride string
	// Servers are the DNS servers asked (HOST:PORT); none means those of
	// ResolvConf (DefaultResolvConf when ""), and when it names none the
	// IP lists decide, with a warning.
	Servers    []string
	ResolvConf string
	// Timeout, Retries, Concurrency, Offline and Proxies are the
	// Verifier's.
	Timeout     time.Duration
	Retries     int
	Concurrency int
	Offline     bool
	Proxies     *proxy.Set
	// CacheDir, when set, keeps DNS answers between runs.
	CacheDir string
	// Now is the clock of the DNS cache and of the evidence (when each
	// question was asked); nil means time.Now.
	Now func() time.Time
	// Warnings are said first, as the Identity's own.
	Warnings []string
}

// LoadIdentity loads the IP lists of c.Profiles and builds their
// verifiers. Only a list file that cannot be read is an error
// (*ListFileError); a list that cannot be had, a resolv.conf without a
// nameserver or a DNS cache that cannot be opened is a warning of the
// Identity, with a fallback in force. It also returns the warnings that
// were already said within their period (Lists.Repeated): a report
// carries them, a terminal need not hear them again.
func LoadIdentity(ctx context.Context, c IdentityConfig) (id *Identity, repeated []string, err error) {
	warnings := slices.Clone(c.Warnings)
	lists := make([]*IPList, len(c.Profiles))
	for i, p := range c.Profiles {
		ll, err := c.Loader.Load(ctx, p, c.ListOverride)
		if err != nil {
			return nil, nil, err
		}
		lists[i] = ll.List
		warnings = append(warnings, ll.Warnings...)
		repeated = append(repeated, ll.Repeated...)
	}
	base := &Verifier{Timeout: c.Timeout, Retries: c.Retries, Concurrency: c.Concurrency, Offline: c.Offline, Proxies: c.Proxies, Now: c.Now}
	var quiet []string
	if !c.Offline {
		base.Servers = c.Servers
		if len(base.Servers) == 0 {
			base.Servers, err = SystemServers(c.ResolvConf)
			if err != nil {
				warnings = append(warnings, fmt.Sprintf("dns: %v; give a server with --resolver HOST:PORT; the ip list decides", err))
				quiet = append(quiet, NoResolverWarning)
			}
		}
		if c.CacheDir != "" {
			now := c.Now
			if now == nil {
				now = time.Now
			}
			cache, err := OpenDNSCache(c.CacheDir, now)
			if err != nil {
				warnings = append(warnings, fmt.Sprintf("dns cache: %v", err))
			}
			base.Cache = cache
		}
	}
	id = NewIdentity(base, c.Profiles, lists)
	for _, w := range quiet {
		id.Quiet(w)
	}
	for _, w := range warnings {
		id.Warn(w)
	}
	return id, repeated, nil
}
