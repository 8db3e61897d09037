package proxy

import (
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"sync"
	"time"
)

// Set is the proxies a run knows: the CDN edges in force, always, and the
// ranges --trusted-proxy names, whose requests carry the real client in a
// logged header. A claimant whose connecting address is in either is never
// judged by that address (SPEC §13). The nil *Set knows the built-in
// snapshot's edges and trusts nothing. A Set is immutable and safe for
// concurrent use.
type Set struct {
	edges *Edges
	// trusted are the ranges --trusted-proxy names; all says every
	// connecting address is a proxy of the operator's (--trust-xff).
	trusted *ranges
	all     bool
	// any is edges and trusted together, each range with its name.
	any   *ranges
	specs []string
}

// ErrSpec means a --trusted-proxy value names nothing known.
var ErrSpec = errors.New("invalid --trusted-proxy")

// privateRanges are what --trusted-proxy private stands for.
var privateRanges = []netip.Prefix{
	netip.MustParsePrefix("10.0.0.0/8"),
	netip.MustParsePrefix("172.16.0.0/12"),
	netip.MustParsePrefix("192.168.0.0/16"),
	netip.MustParsePrefix("fc00::/7"),
}

// NewSet returns the set of the edges in force (nil: the built-in
// snapshot's), the --trusted-proxy values specs (a built-in CDN's name,
// "private", or an address or range; case and spaces do not matter) and
// all for --trust-xff. A value that is none of these, or a range wider
// than /8 (IPv4) or /16 (IPv6), is an error wrapping ErrSpec.
func NewSet(edges *Edges, specs []string, all bool) (*Set, error) {
	if edges == nil {
		edges = BuiltinEdges()
	}
	s := &Set{edges: edges, all: all}
	var trusted []named
	for _, spec := range specs {
		v := strings.ToLower(strings.TrimSpace(spec))
		switch {
		case v == Private:
			for _, p := range privateRanges {
				trusted = append(trusted, named{p, Private})
			}
		case LookupCDN(v) != nil:
			for _, p := range edges.prefixesOf(v) {
				trusted = append(trusted, named{p, v})
			}
		default:
			p, err := parseEntry(v)
			if err != nil {
				if errors.Is(err, ErrListInvalid) && strings.Contains(err.Error(), "wider") {
					return nil, fmt.Errorf("%w: %q is wider than /%d (IPv4) or /%d (IPv6); if every connecting address is a proxy you run, use --trust-xff", ErrSpec, spec, minBits4, minBits6)
				}
				return nil, fmt.Errorf("%w: %q is neither a CDN (%s), %s, nor an address or range such as 203.0.113.0/24", ErrSpec, spec, strings.Join(Names()[:len(Names())-1], ", "), Private)
			}
			trusted = append(trusted, named{p, p.String()})
		}
		s.specs = append(s.specs, v)
	}
	s.trusted = newRanges(trusted)
	var every []named
	every = append(every, trusted...)
	for _, l := range edges.Lists {
		for _, p := range l.Prefixes {
			every = append(every, named{p, l.CDN.Name})
		}
	}
	s.any = newRanges(every)
	return s, nil
}

// setOf is s, or the set of the built-in snapshot's edges for nil.
func (s *Set) setOf() *Set {
	if s != nil {
		return s
	}
	builtinSetOnce.Do(func() { builtinSet, _ = NewSet(nil, nil, false) })
	return builtinSet
}

var (
	builtinSetOnce sync.Once
	builtinSet     *Set
)

// Proxy returns the name of the proxy a is (the CDN whose edge it is, or
// the --trusted-proxy value that names it: "private", "203.0.113.0/24"),
// and whether it is one. A range --trusted-proxy names wins over a CDN's
// that holds it.
func (s *Set) Proxy(a netip.Addr) (string, bool) {
	return s.setOf().any.name(a)
}

// CDN returns the CDN whose edge a is, or nil.
func (s *Set) CDN(a netip.Addr) *CDN { return s.setOf().edges.CDN(a) }

// Trusts reports whether a request from connecting address a carries its
// real client in a logged header: a is in a range --trusted-proxy names,
// or --trust-xff trusts every connecting address.
func (s *Set) Trusts(a netip.Addr) bool {
	return s != nil && (s.all || s.trusted.contains(a))
}

// TrustsText is Trusts for the address written in b (a log field),
// without allocating for IPv4.
func (s *Set) TrustsText(b []byte) bool {
	if s == nil {
		return false
	}
	if s.all {
		return true
	}
	return s.trusted.containsText(b)
}

// InTrusted reports whether a is in a range --trusted-proxy names (what
// an X-Forwarded-For walk passes over), --trust-xff aside.
func (s *Set) InTrusted(a netip.Addr) bool { return s != nil && s.trusted.contains(a) }

// Reads reports whether any request's real client is read from a header:
// --trust-xff, or some --trusted-proxy range.
func (s *Set) Reads() bool { return s != nil && (s.all || !s.trusted.empty()) }

// All reports whether --trust-xff trusts every connecting address.
func (s *Set) All() bool { return s != nil && s.all }

// Specs returns the --trusted-proxy values, normalised.
func (s *Set) Specs() []string {
	if s == nil {
		return nil
	}
	return slices.Clone(s.specs)
}

// Prefixes returns every range of the set: the edges in force and the
// trusted ranges, sorted.
func (s *Set) Prefixes() []netip.Prefix { return slices.Clone(s.setOf().any.prefixes) }

// Overlaps reports whether any address of p is a CDN edge or trusted
// proxy.
func (s *Set) Overlaps(p netip.Prefix) bool { return s.setOf().any.overlaps(p) }

// Edges returns the edges in force.
func (s *Set) Edges() *Edges { return s.setOf().edges }

// SnapshotNote says, for the proxy named name (a CDN's name), when the
// built-in snapshot stands in for its published lists: "cloudflare's
// ranges are the built-in snapshot of 2026-08-11 (115 days old; run
// 'lohibot-audit ips update' to fetch them)"; "" when its lists were
// fetched, or name is no CDN.
func (s *Set) SnapshotNote(name string, now time.Time) string {
	var snap time.Time
	fetchable := false
	for _, l := range s.setOf().edges.Of(name) {
		if l.Snapshot {
			snap = l.AsOf
			fetchable = fetchable || l.Source.Fetch
		}
	}
	if snap.IsZero() {
		return ""
	}
	if !fetchable {
		return fmt.Sprintf("%s's ranges are the ones documented as of %s", name, snap.Format(time.DateOnly))
	}
	return fmt.Sprintf("%s's ranges are the built-in snapshot of %s (%s old; 'lohibot-audit ips update' fetches the current ones)", name, snap.Format(time.DateOnly), days(now.Sub(snap)))
}

// HowToLog says how to have the real client of requests through the
// proxy named name judged: the header to log, in nginx's and Apache's
// words, and the --trusted-proxy value. trusted says name is trusted
// already (then only the logging is missing).
func HowToLog(name string, trusted bool) string {
	header := "X-Forwarded-For"
	if c := LookupCDN(name); c != nil {
		header = c.Header
	}
	nginx := "$http_" + strings.ReplaceAll(strings.ToLower(header), "-", "_")
	how := fmt.Sprintf("log the real client (%s in nginx's log_format, %%{%s}i in Apache's LogFormat)", nginx, header)
	if trusted {
		return how + " as the proxy sets it"
	}
	return how + " and add --trusted-proxy " + name
}

// days says a duration in whole days.
func days(d time.Duration) string {
	n := int(d / (24 * time.Hour))
	if n == 1 {
		return "1 day"
	}
	if n < 0 {
		n = 0
	}
	return fmt.Sprintf("%d days", n)
}
