package verify

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strings"
	"sync"

	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/proxy"
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
		Offline: base.Offline, Proxies: base.Proxies, after: base.after}
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
