package watch

import (
	"context"
	"errors"
	"net/netip"
	"slices"
	"sync"
	"time"

	"github.com/lohisoft/lohibot-audit/conduct"
	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/robots"
	"github.com/lohisoft/lohibot-audit/verify"
)

// Config is what [NewFor] builds a Watcher from: the crawlers of an
// identity, each judged by its own verifiers against its own IP lists and
// held to its own promises, and the rules that say who may be blocked.
type Config struct {
	// Options are the Watcher's options; their Subjects and Guard are
	// made by NewFor.
	Options
	// Identity is the crawlers watched, their IP lists in force and their
	// verifiers (as set up for a batch run: NewFor makes fresh ones from
	// them as it goes).
	Identity *verify.Identity
	// Overrides replace every crawler's promises (SPEC §10: a conduct flag
	// given).
	Overrides conduct.Overrides
	// Robots gives the robots.txt in force for a site (nil, or a nil
	// result: not checked), for the crawlers that promise to obey it.
	Robots func(site string) *robots.Robots
	// NeverBlock are prefixes never acted on (--never-block).
	NeverBlock []netip.Prefix
	// VerdictTTL is how long a verdict stands; zero means
	// DefaultVerdictTTL.
	VerdictTTL time.Duration
	// Concurrency is how many addresses each crawler's judge verifies at
	// once; zero means DefaultConcurrency.
	Concurrency int
	// MaxAddresses bounds the addresses each crawler's judge holds; zero
	// means DefaultMaxAddresses (see JudgeOptions.MaxAddresses).
	MaxAddresses int
	// MaxViolations bounds the violations reported per site and kind
	// (conduct.Config.MaxViolations; zero: all).
	MaxViolations int
	// OptOuts are the sites that opted out of each crawler's crawl, by
	// crawler name, with OptOutGrace (conduct.Config.OptedOut); read at
	// start, not on reload.
	OptOuts     map[string]conduct.OptOuts
	OptOutGrace time.Duration
}

// setup is what NewFor made, for Reload.
type setup struct {
	mu       sync.Mutex
	robots   func(site string) *robots.Robots
	names    []string
	checkers []*VerifierChecker
	dns      *DNSHealth
}

// NewFor returns a Watcher of every crawler of c.Identity: one judge per
// crawler, an address being judged against each profile it claims with
// that crawler's DNS names and IP lists; one conduct tracker per crawler,
// held to its promises with c.Overrides (robots.txt checked for those
// that promise to obey it); and a guard that never blocks an address that
// is genuine for any crawler, or in any one's list, or in NeverBlock. ctx
// bounds the actions on spoofers (additions to the block set).
func NewFor(ctx context.Context, c Config) *Watcher {
	s := &setup{robots: c.Robots}
	robotsFor := func(site string) *robots.Robots {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.robots == nil {
			return nil
		}
		return s.robots(site)
	}
	ttl := c.VerdictTTL
	if ttl <= 0 {
		ttl = DefaultVerdictTTL
	}
	now := c.Now
	if now == nil {
		now = time.Now
	}
	var w *Watcher
	id := c.Identity
	dns := c.DNS
	if dns == nil {
		var servers []string
		for _, v := range id.Verifiers {
			for _, sv := range v.Servers {
				if !slices.Contains(servers, sv) {
					servers = append(servers, sv)
				}
			}
		}
		dns = NewDNSHealth(servers)
	}
	s.dns = dns
	subjects := make([]Subject, len(id.Profiles))
	for i, p := range id.Profiles {
		ch := &VerifierChecker{Now: now, MaxAge: ttl / 2, New: verifierFactory(id.Verifiers[i], dns.Observe)}
		s.checkers = append(s.checkers, ch)
		s.names = append(s.names, p.Name)
		name := p.Name
		// The crawler's published addresses are judged first.
		judge := NewJudge(JudgeOptions{Checker: ch, Concurrency: c.Concurrency, TTL: ttl, Now: now,
			OnVerdict: func(v Verdict) { w.OnVerdictOf(ctx, name)(v) }, Prefer: ch.Listed,
			MaxAddresses: c.MaxAddresses, Say: func(m string) { w.o.Say(name + ": " + m) }})
		cfg := conduct.ConfigOf(p, c.Overrides)
		cfg.MaxViolations = c.MaxViolations
		if oo := c.OptOuts[name]; oo != nil {
			cfg.OptedOut, cfg.OptOutGrace = oo.For, c.OptOutGrace
		}
		if p.Conduct.Robots {
			cfg.Robots = robotsFor
		}
		subjects[i] = Subject{Name: name, Tokens: p.Tokens, Judge: judge, Tracker: conduct.NewTracker(cfg)}
	}
	guard := NewGuard(nil, c.NeverBlock, func() []netip.Addr {
		if len(subjects) == 1 {
			return subjects[0].Judge.Genuine()
		}
		var out []netip.Addr
		for _, sub := range subjects {
			out = append(out, sub.Judge.Genuine()...)
		}
		return out
	})
	guard.SetLists(id.Lists, c.NeverBlock)
	guard.SetProxies(id.Proxies)
	o := c.Options
	if o.Trust == nil {
		o.Trust = id.Proxies
	}
	o.Subjects, o.Guard, o.DNS = subjects, guard, dns
	w = New(o)
	w.setup = s
	return w
}

// ErrCrawlersChanged is Reload's error for an identity of other crawlers
// than those watched.
var ErrCrawlersChanged = errors.New("the crawlers to watch changed: restart watch to watch others")

// Reload takes the grounds g loaded anew, as a SIGHUP asks: new IP lists
// and verifiers (g.Identity, of the same crawlers as the Watcher's), its
// proxies (for blocking and for the log readers, which read the lines
// after the ones being read with them), robots.txt and never-block
// prefixes: addresses are judged again as they are seen. It works on a
// Watcher made by NewFor only.
func (w *Watcher) Reload(g Grounds) error {
	id, never := g.Identity, g.NeverBlock
	s := w.setup
	if s == nil {
		return errors.New("watch: Reload needs a Watcher made by NewFor")
	}
	if !slices.Equal(crawler.Names(id.Profiles), s.names) {
		return ErrCrawlersChanged
	}
	s.mu.Lock()
	s.robots = g.Robots.For
	s.mu.Unlock()
	w.o.Guard.SetLists(id.Lists, never)
	w.o.Guard.SetProxies(id.Proxies)
	// The log readers too, from the next lines on.
	w.setReaderTrust(id.Proxies)
	for i, ch := range s.checkers {
		ch.SetNew(verifierFactory(id.Verifiers[i], s.dns.Observe))
		w.crawlers[i].Judge.Stale()
	}
	return nil
}

// verifierFactory makes fresh verifiers set up as base (servers, timeouts,
// the DNS cache, the IP list, the profile), each verifying one address at
// a time and telling onQuery of each query.
func verifierFactory(base *verify.Verifier, onQuery func(verify.DNSQuery)) func() *verify.Verifier {
	return func() *verify.Verifier {
		return &verify.Verifier{Servers: base.Servers, Timeout: base.Timeout, Retries: base.Retries,
			RetryTimeout: base.RetryTimeout, Concurrency: 1, Cache: base.Cache, Offline: base.Offline, List: base.List, Profile: base.Profile,
			Proxies: base.Proxies, OnQuery: onQuery}
	}
}
