package emit

import (
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"time"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/crowdsec"
)

// CrowdSecOptions shape the crowdsec target. The zero value gives the
// defaults.
type CrowdSecOptions struct {
	// TTL is each decision's duration; zero means DefaultTTL. It must be
	// between 1s and MaxTTL.
	TTL time.Duration
}

// ttl checks and fills in the TTL.
func (o CrowdSecOptions) ttl() (time.Duration, error) {
	if o.TTL == 0 {
		return DefaultTTL, nil
	}
	if o.TTL < time.Second || o.TTL > MaxTTL {
		return 0, fmt.Errorf("%w: ttl %s: give a duration from 1s to 365d", ErrBadOption, o.TTL)
	}
	return o.TTL, nil
}

// CrowdSecDecision is one CrowdSec decision the safety rules allow: a
// spoofing address (scope Ip), or the /64 of spoofing IPv6 addresses
// (scope Range) when no part of it is protected.
type CrowdSecDecision struct {
	// Prefix is the address (a single-address prefix) or the /64.
	Prefix netip.Prefix
	// Crawler is the crawler claimed (the first, for an address that
	// claimed several).
	Crawler string
	// Spoofers are the spoofing addresses it covers, sorted.
	Spoofers []netip.Addr
}

// crowdSecV6Bits is the width IPv6 spoofers are also banned at, as a
// Cloudflare list holds them: one host often has a whole /64.
const crowdSecV6Bits = 64

// CrowdSecDecisions applies the safety rules of [NewPlan] to in and returns
// the decisions to push, sorted by prefix: each spoofing address that the
// rules block, and for IPv6 also its /64, planned as a whole (left out
// when any part of it is protected, the address then banned alone). The
// plan is that of the addresses; a note counts the /64s left out. Only
// BlockSpoofed is a mode of this target.
func CrowdSecDecisions(in Input) ([]CrowdSecDecision, *Plan, error) {
	mode, err := ParseMode(string(in.Mode))
	if err != nil {
		return nil, nil, err
	}
	if mode != BlockSpoofed {
		return nil, nil, fmt.Errorf("%w: the crowdsec target bans spoofers only: use --mode block-spoofed", ErrBadOption)
	}
	addrs, err := newPlan(in, planLimits{v6Bits: 128})
	if err != nil {
		return nil, nil, err
	}
	ranges, err := newPlan(in, planLimits{v6Bits: crowdSecV6Bits})
	if err != nil {
		return nil, nil, err
	}
	type part struct {
		name          string
		spoofed       []netip.Addr
		addrs, ranges []netip.Prefix
	}
	crawlers := in.Crawlers
	if len(crawlers) == 0 {
		crawlers = []CrawlerInput{{}}
	}
	parts := make([]part, len(crawlers))
	for i, c := range crawlers {
		parts[i] = part{nameOr(c.Name), c.Spoofed, addrs.Crawlers[i].Block, ranges.Crawlers[i].Block}
	}
	byPrefix := map[netip.Prefix]*CrowdSecDecision{}
	var out []*CrowdSecDecision
	add := func(q netip.Prefix, name string, a netip.Addr) {
		d := byPrefix[q]
		if d == nil {
			d = &CrowdSecDecision{Prefix: q, Crawler: name}
			byPrefix[q] = d
			out = append(out, d)
		}
		d.Spoofers = append(d.Spoofers, a)
	}
	alone := 0
	for _, pt := range parts {
		banned := map[netip.Prefix]bool{}
		for _, q := range pt.addrs {
			banned[q] = true
		}
		wide := map[netip.Prefix]bool{}
		for _, q := range pt.ranges {
			if q.Addr().Is6() {
				wide[q] = true
			}
		}
		for _, a := range pt.spoofed {
			if a = normAddr(a); !a.IsValid() {
				continue
			}
			q := netip.PrefixFrom(a, a.BitLen())
			if !banned[q] {
				continue
			}
			add(q, pt.name, a)
			if a.Is6() {
				if w := widen(q, crowdSecV6Bits); wide[w] {
					add(w, pt.name, a)
				} else {
					alone++
				}
			}
		}
	}
	slices.SortFunc(out, func(a, b *CrowdSecDecision) int { return comparePrefix(a.Prefix, b.Prefix) })
	decisions := make([]CrowdSecDecision, len(out))
	for i, d := range out {
		slices.SortFunc(d.Spoofers, func(a, b netip.Addr) int { return a.Compare(b) })
		d.Spoofers = slices.Compact(d.Spoofers)
		decisions[i] = *d
	}
	if alone > 0 {
		addrs.Notes = append(addrs.Notes, fmt.Sprintf("%s banned by address alone: part of its /64 is an address no decision may ban", plural(alone, "IPv6 spoofer is", "IPv6 spoofers are")))
	}
	return decisions, addrs, nil
}

// CrowdSecBans is CrowdSecDecisions with each decision's evidence, from
// in.Evidence, ready to push.
func CrowdSecBans(in Input) ([]crowdsec.Ban, *Plan, error) {
	ds, plan, err := CrowdSecDecisions(in)
	if err != nil {
		return nil, nil, err
	}
	bans := make([]crowdsec.Ban, len(ds))
	for i, d := range ds {
		b := crowdsec.Ban{Prefix: d.Prefix, Crawler: d.Crawler}
		for _, a := range d.Spoofers {
			ev := slices.Clone(in.Evidence[a])
			// The evidence of the crawler the decision names first.
			slices.SortStableFunc(ev, func(x, y crowdsec.Evidence) int {
				if (x.Crawler == d.Crawler) == (y.Crawler == d.Crawler) {
					return 0
				}
				if x.Crawler == d.Crawler {
					return -1
				}
				return 1
			})
			if len(ev) == 0 {
				ev = []crowdsec.Evidence{{Addr: a, Crawler: d.Crawler}}
			}
			b.Evidence = append(b.Evidence, ev...)
		}
		bans[i] = b
	}
	return bans, plan, nil
}

// CrowdSec writes, for a dry run, the body of the POST /v1/alerts request
// that would push in's decisions to a CrowdSec Local API with nothing of
// ours in force: a JSON array of alerts, one decision each (see package
// crowdsec), made at in.Generated.
func CrowdSec(w io.Writer, in Input, o CrowdSecOptions) (*Plan, error) {
	ttl, err := o.ttl()
	if err != nil {
		return nil, err
	}
	bans, plan, err := CrowdSecBans(in)
	if err != nil {
		return nil, err
	}
	alerts := make([]crowdsec.Alert, len(bans))
	for i, b := range bans {
		alerts[i] = crowdsec.NewAlert(b, ttl, in.Generated, in.Version)
	}
	data, err := json.MarshalIndent(alerts, "", "  ")
	if err != nil {
		return nil, err
	}
	if _, err := w.Write(append(data, '\n')); err != nil {
		return nil, err
	}
	return plan, nil
}

// nameOr is a crawler's name for a decision's scenario: name, or the
// default crawler's when the input names none.
func nameOr(name string) string {
	if name == "" {
		return crawler.Default
	}
	return name
}

// EvidenceOf is the CrowdSec evidence of a report's spoofing address addr,
// which claimed the crawler named name (the report's crawler field, or the
// default crawler, when name is empty).
func EvidenceOf(r audit.IPReport, addr netip.Addr, name string) crowdsec.Evidence {
	if name == "" {
		name = nameOr(r.Crawler)
	}
	e := crowdsec.Evidence{Addr: addr, Crawler: name, Reason: r.Reason, PTR: r.PTR, Forward: r.Forward,
		Hits: r.Hits, FirstSeen: r.FirstSeen, LastSeen: r.LastSeen}
	if len(r.UserAgents) > 0 {
		e.UserAgent = r.UserAgents[0]
	}
	return e
}
