package audit

import (
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/nouns"
	"github.com/lohisoft/lohibot-audit/proxy"
)

// proxyTally counts the claimed hits whose client is a proxy (SPEC §13),
// one entry per proxy name, in the order they were met.
type proxyTally []*proxyCount

// proxyCount is what a run saw of one proxy: the claimed hits of its
// addresses, how many addresses, the first few in address order, and
// whether the operator trusts it (so only the logging is missing).
type proxyCount struct {
	name    string
	hits    int64
	addrs   int
	some    []netip.Addr
	trusted bool
}

// proxyExamples is how many addresses a warning names.
const proxyExamples = 3

func (t *proxyTally) add(name string, a netip.Addr, hits int64, trusted bool) {
	c := t.of(name)
	c.hits += hits
	c.addrs++
	c.trusted = c.trusted || trusted
	c.example(a)
}

// of returns the count of the proxy named name, adding it when new.
func (t *proxyTally) of(name string) *proxyCount {
	for _, x := range *t {
		if x.name == name {
			return x
		}
	}
	c := &proxyCount{name: name}
	*t = append(*t, c)
	return c
}

// example keeps a among the first addresses, in address order.
func (c *proxyCount) example(a netip.Addr) {
	if i, found := slices.BinarySearchFunc(c.some, a, netip.Addr.Compare); !found && i < proxyExamples {
		c.some = slices.Insert(c.some, i, a)
		if len(c.some) > proxyExamples {
			c.some = c.some[:proxyExamples]
		}
	}
}

// merge adds u's counts to t (the audits of several crawlers).
func (t *proxyTally) merge(u proxyTally) {
	for _, c := range u {
		x := t.of(c.name)
		x.hits += c.hits
		x.addrs += c.addrs
		x.trusted = x.trusted || c.trusted
		for _, a := range c.some {
			x.example(a)
		}
	}
}

// warnings says, one warning per proxy, how many claimed hits came
// through it, that they stay unverified and are never blocked, and how to
// have their real clients judged; with the age of the built-in snapshot
// when it stands in for a CDN's list.
func (t proxyTally) warnings(set *proxy.Set, now time.Time) []string {
	var out []string
	for _, c := range t {
		var some []string
		for _, a := range c.some {
			some = append(some, a.String())
		}
		if c.addrs > len(c.some) {
			some = append(some, "…")
		}
		hits := nouns.Count(c.hits, "claimed hit", "claimed hits")
		from := fmt.Sprintf("%s (%s)", nouns.Count(c.addrs, "address", "addresses"), strings.Join(some, ", "))
		var w string
		if cdn := proxy.LookupCDN(c.name); cdn != nil && !c.trusted {
			w = fmt.Sprintf("proxy: %s from %s came through %s edges: the log records the edge, not who claimed to be the crawler, so they stay unverified (proxy) and are never blocked; to judge the real clients, %s",
				hits, from, cdn.Title, proxy.HowToLog(c.name, false))
		} else {
			w = fmt.Sprintf("proxy: %s from %s came through %s without a usable real client in the logged header (absent, not an address, or a trusted proxy's own): they stay unverified (proxy) and are never blocked; %s",
				hits, from, proxyWords(c.name), proxy.HowToLog(c.name, true))
		}
		if note := set.SnapshotNote(c.name, now); note != "" {
			w += "; " + note
		}
		out = append(out, w)
	}
	return out
}

// proxyWords names a trusted proxy in a warning.
func proxyWords(name string) string {
	switch {
	case name == "--trust-xff":
		return "proxies (--trust-xff: every connecting address is one)"
	case name == proxy.Private:
		return "private proxies (--trusted-proxy private)"
	case proxy.LookupCDN(name) != nil:
		return proxy.LookupCDN(name).Title + " edges (--trusted-proxy " + name + ")"
	}
	return "the trusted proxy " + name
}
