package crowdsec

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/internal/interrupt"
	"github.com/lohisoft/lohibot-audit/internal/nouns"
)

// Agent is who pushes: the program's version, named in each request's
// User-Agent and each alert's metadata, and its clock.
type Agent struct {
	// Version is the program's version.
	Version string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Client is a client of the machine c that tells the Local API of the
// scenarios it pushes for.
func (a Agent) Client(c Credentials, scenarios []string) *Client {
	return &Client{Credentials: c, UserAgent: "lohibot-audit/" + a.Version, Scenarios: scenarios, Now: a.Now}
}

// Pusher pushes, through the machine c, decisions of ttl for the
// scenarios of bans (ScenariosOf).
func (a Agent) Pusher(c Credentials, scenarios []string, ttl time.Duration) *Pusher {
	return &Pusher{Client: a.Client(c, scenarios), TTL: ttl, Version: a.Version, Now: a.Now}
}

// Queue is the queue a running watch pushes the spoofers of the crawlers
// named to, through the machine c, each decision lasting ttl; say tells of
// an outage and of its end.
func (a Agent) Queue(c Credentials, crawlers []string, ttl time.Duration, say func(string)) *Queue {
	scenarios := make([]string, len(crawlers))
	for i, n := range crawlers {
		scenarios[i] = Scenario(n)
	}
	p := a.Pusher(c, scenarios, ttl)
	// A listing of every decision takes long on a Local API that holds
	// many: a running watch looks each spoofer up.
	p.LookupEach = -1
	return &Queue{Pusher: p, Say: say}
}

// Push pushes bans through the machine c, each decision lasting ttl
// (Pusher, for the scenarios of bans), for the command line: cancelled,
// it returns interrupt.ErrInterrupted; cut short otherwise, Unfinished.
func (a Agent) Push(ctx context.Context, c Credentials, ttl time.Duration, bans []Ban) (Result, error) {
	res, err := a.Pusher(c, ScenariosOf(bans), ttl).Push(ctx, bans)
	if err != nil {
		if ctx.Err() != nil {
			return res, interrupt.ErrInterrupted
		}
		return res, res.Unfinished(len(bans), err)
	}
	return res, nil
}

// ScenariosOf are the scenarios of bans, each once, in the order first
// met.
func ScenariosOf(bans []Ban) []string {
	var scenarios []string
	for _, b := range bans {
		if s := Scenario(b.Crawler); !slices.Contains(scenarios, s) {
			scenarios = append(scenarios, s)
		}
	}
	return scenarios
}

// Summary says what a push did, for people: "3 decisions added, 1
// extended, 0 in force already".
func (r Result) Summary() string {
	parts := []string{
		nouns.Count(r.Added, "decision", "decisions") + " added",
		fmt.Sprintf("%d extended", r.Extended),
		fmt.Sprintf("%d in force already", r.Kept),
	}
	if r.Removed > 0 {
		parts = append(parts, nouns.Count(r.Removed, "older decision", "older decisions")+" ended")
	}
	return strings.Join(parts, ", ")
}

// Unfinished words a push of bans that stopped at err, after r, for the
// command line: the decisions are not all in force (internal/fail's
// Unwritten), and running again finishes the job, as Push never pushes
// a decision twice.
func (r Result) Unfinished(bans int, err error) error {
	return fail.New(fail.Unwritten,
		fmt.Errorf("crowdsec: %d of %s in force, then: %w", len(r.Done), nouns.Count(bans, "decision", "decisions"), err),
		"check that the Local API runs and takes this machine's login (cscli machines list); run again then: nothing is pushed twice")
}
