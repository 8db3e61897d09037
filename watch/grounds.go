package watch

import (
	"context"
	"net/netip"

	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/emit"
	"github.com/lohisoft/lohibot-audit/internal/interrupt"
	"github.com/lohisoft/lohibot-audit/robots"
	"github.com/lohisoft/lohibot-audit/verify"
)

// Grounds are what a watch judges claimants against and what it spares:
// the crawlers' identity (their IP lists, verifiers and trusted proxies),
// the robots.txt in force and the never-block prefixes. A watch loads
// them at start and again on SIGHUP (Sources.Load), the same way both
// times.
type Grounds struct {
	Identity   *verify.Identity
	Robots     *robots.Set
	NeverBlock []netip.Prefix
}

// Warnings are what loading g found amiss and went on without:
// robots.txt's, then the identity's.
func (g Grounds) Warnings() []string {
	return append(g.Robots.Warnings(), g.Identity.Warnings()...)
}

// Sources are where a watch's Grounds come from, as its command line and
// config file give them.
type Sources struct {
	// NeverBlock are the --never-block values.
	NeverBlock []string
	// Robots are the --robots values, read by RobotsLoader.
	Robots       []string
	RobotsLoader *robots.Loader
	// Identity loads the identity of the crawlers watched (as
	// verify.Settings.Identity does, set up by the command).
	Identity func(ctx context.Context, profiles []*crawler.Profile) (*verify.Identity, error)
}

// Check checks the values s reads, before a watch touches anything (its
// state directory, the network): the never-block values (a usage error
// for one that is neither an address nor a CIDR) and the robots.txt
// values.
func (s Sources) Check() error {
	_, err := s.check()
	return err
}

// check is Check, and the never-block prefixes.
func (s Sources) check() ([]netip.Prefix, error) {
	never, err := emit.NeverBlockFlag(s.NeverBlock)
	if err != nil {
		return nil, err
	}
	return never, robots.CheckValues(s.Robots)
}

// Load checks s (Check), then reads the robots.txt sources (a URL that
// cannot be fetched now is a warning) and the identity of profiles, in
// that order; the first error ends it. Cancelled, it returns
// interrupt.ErrInterrupted.
func (s Sources) Load(ctx context.Context, profiles []*crawler.Profile) (Grounds, error) {
	never, err := s.check()
	if err != nil {
		return Grounds{}, err
	}
	rs, err := s.RobotsLoader.LoadSet(ctx, s.Robots)
	if err != nil {
		return Grounds{}, interrupt.Cause(ctx, err)
	}
	id, err := s.Identity(ctx, profiles)
	if err != nil {
		return Grounds{}, err
	}
	return Grounds{Identity: id, Robots: rs, NeverBlock: never}, nil
}
