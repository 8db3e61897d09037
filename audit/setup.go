package audit

import (
	"context"
	"time"

	"github.com/lohisoft/lohibot-audit/conduct"
	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/internal/interrupt"
	"github.com/lohisoft/lohibot-audit/optout"
	"github.com/lohisoft/lohibot-audit/robots"
	"github.com/lohisoft/lohibot-audit/verify"
)

// The phases of a Setup's loading, as OnPhase is told them, before
// those of the run.
const (
	PhaseRobots Phase = "robots"  // reading (fetching) robots.txt
	PhaseIPList Phase = "ip-list" // loading (fetching) the IP lists
)

// Setup is what a run checks the crawlers against, as the command line
// gives it (--crawler, the identity flags, --robots, --opted-out), to be
// checked whole and then loaded before any input is read. Its errors are
// of the kinds of internal/fail, worded for the flags.
type Setup struct {
	// Profiles are the crawlers audited (crawler.Resolve of --crawler);
	// nil when they are not known yet (a merge whose snapshots say
	// which), and then --opted-out is checked once they are (OptOuts).
	Profiles []*crawler.Profile
	// Identity are the identity settings: how the IP lists are had, the
	// resolvers asked. nil loads no identity (a merge: the verdicts are
	// the snapshots').
	Identity *verify.Settings
	// Robots are the --robots values, read by RobotsLoader.
	Robots       []string
	RobotsLoader *robots.Loader
	// OptedOut are the --opted-out values, OptOutGrace --opt-out-grace.
	OptedOut    []string
	OptOutGrace time.Duration
	// Now is the time a duration in an --opted-out TIME is back from.
	Now time.Time
	// OnPhase, when set, is told PhaseRobots and PhaseIPList as each load
	// begins.
	OnPhase func(Phase)
}

// Loaded is what a Setup loaded.
type Loaded struct {
	// OptOuts are the opted-out sites of each crawler, by name.
	OptOuts map[string]conduct.OptOuts
	Robots  *robots.Set
	// Identity is the crawlers' identity (nil without Setup.Identity);
	// Repeated, its warnings already said within their period
	// (verify.Settings.Identity).
	Identity *verify.Identity
	Repeated []string
}

// Check checks every value that robots.txt and the IP lists are fetched
// with, or that the fetches are followed by, before any of them is made:
// a usage error never comes after a request went out.
func (s *Setup) Check() error {
	if s.Identity != nil {
		if err := s.Identity.Check(); err != nil {
			return err
		}
		if _, err := verify.Servers(s.Identity.Resolvers); err != nil {
			return err
		}
		if _, err := s.Identity.ListOverride(len(s.Profiles)); err != nil {
			return err
		}
	}
	if err := robots.CheckValues(s.Robots); err != nil {
		return err
	}
	if s.Identity != nil && s.Identity.Offline {
		if err := robots.CheckOffline(s.Robots); err != nil {
			return err
		}
	}
	if s.Profiles != nil {
		if _, err := s.OptOuts(s.Profiles); err != nil {
			return err
		}
	}
	return nil
}

// Load checks the setup (Check), then reads robots.txt and loads the
// identity of the crawlers. A run cancelled while they load ends with
// interrupt.ErrInterrupted: a fetch cut short leaves a fallback list in
// force, and nothing is to be read with it.
func (s *Setup) Load(ctx context.Context) (*Loaded, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	l := &Loaded{}
	if s.Profiles != nil {
		l.OptOuts, _ = s.OptOuts(s.Profiles) // checked above
	}
	s.phase(PhaseRobots)
	rs, err := s.RobotsLoader.LoadSet(ctx, s.Robots)
	if err != nil {
		return nil, interrupt.Cause(ctx, err)
	}
	l.Robots = rs
	if s.Identity != nil {
		s.phase(PhaseIPList)
		if l.Identity, l.Repeated, err = s.Identity.Identity(ctx, s.Profiles); err != nil {
			return nil, err
		}
	}
	if ctx.Err() != nil {
		return nil, interrupt.ErrInterrupted
	}
	return l, nil
}

// OptOuts reads the --opted-out values for the crawlers of profiles
// (optout.ParseOptedOut), TIME as --since reads it (ParseBound): the
// crawlers' opted-out sites, by name.
func (s *Setup) OptOuts(profiles []*crawler.Profile) (map[string]conduct.OptOuts, error) {
	return optout.ParseOptedOut(s.OptedOut, crawler.Names(profiles), s.OptOutGrace, func(v string) (time.Time, error) {
		return ParseBound("opted-out", v, s.Now)
	})
}

func (s *Setup) phase(p Phase) {
	if s.OnPhase != nil {
		s.OnPhase(p)
	}
}
