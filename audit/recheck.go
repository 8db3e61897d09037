package audit

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/nouns"
	"github.com/lohisoft/lohibot-audit/verify"
)

// Recheck completes a report whose verdicts could not all be had (a run
// during a DNS outage) or whose evidence has expired: it asks again about
// every unverified address, and every address whose DNS answers have
// passed their TTL, and gives the report with the new verdicts (SPEC §15).
//
// What a recheck changes, and what it cannot:
//
//   - Each address asked again gets the new verdict with its evidence,
//     except that an address that had a verdict (genuine or spoofed) and
//     now gets none because DNS cannot answer keeps the one it had: a
//     failed question does not undo an answer.
//   - The summary's genuine, spoofed and unverified hits (and each
//     crawler's) are counted again from the addresses, so they agree with
//     them; the claimed hits, lines and inputs are the first run's.
//   - Conduct is not checked again: a report holds no requests, only
//     their counts per address. Sites and violations stay those of the
//     first run; a warning says how many hits of newly genuine addresses
//     were never checked, and how many of addresses no longer genuine may
//     be in the violations, and that running logs again over the same
//     logs checks them.
type Recheck struct {
	// Now is the time the evidence is judged against.
	Now time.Time
	// Crawlers name the report's crawlers in the order Classify numbers
	// them; for a report of one crawler (no summary.crawlers), one name,
	// which the addresses' empty crawler field stands for.
	Crawlers []string
	// Classify verifies addresses as claims to be the crawler numbered
	// crawler, keyed by the address (see verify.Identity.Classify).
	Classify func(ctx context.Context, crawler int, addrs []netip.Addr) map[netip.Addr]verify.Result
	// Lists are the IP lists in force for each crawler now: their
	// evidence joins the report's ip_lists.
	Lists []*verify.IPList
}

// RecheckStats says what a recheck did.
type RecheckStats struct {
	// Asked is how many addresses were asked about again; Unverified and
	// Expired how many of them for each reason.
	Asked, Unverified, Expired int
	// Changed is how many got another verdict; Kept how many kept theirs
	// because DNS could not answer this time.
	Changed, Kept int
	// NewGenuine and NewGenuineHits count the addresses that became
	// genuine and their hits (never checked for conduct); LostGenuine and
	// LostGenuineHits those that were genuine and are not now.
	NewGenuine, LostGenuine         int
	NewGenuineHits, LostGenuineHits int64
	// StillUnverified counts the addresses left unverified.
	StillUnverified int
}

// recheckSkip are the reasons of unverified addresses that asking again
// cannot change: a client that is no address, a CDN's or a trusted
// proxy's address.
var recheckSkip = []string{verify.ReasonNotAnAddress, verify.ReasonProxy}

// Run rechecks rep, in place: rep must hold its addresses in IPs (a
// report decoded from JSON). It returns what it did; the report gains its
// warnings, the lists' evidence and the time it was made. Only ctx ending
// is an error: the report is then as it was.
func (o *Recheck) Run(ctx context.Context, rep *Report) (RecheckStats, error) {
	var st RecheckStats
	if rep.lazy != nil || rep.parts != nil {
		return st, fmt.Errorf("audit: recheck needs a report with its addresses in IPs")
	}
	index := map[string]int{}
	for i, name := range o.Crawlers {
		index[name] = i
	}
	one := len(rep.Summary.Crawlers) == 0
	todo := make([][]int, len(o.Crawlers)) // indices into rep.IPs, per crawler
	addrs := make([][]netip.Addr, len(o.Crawlers))
	for i := range rep.IPs {
		ip := &rep.IPs[i]
		unverified := ip.Verdict == verify.Unverified && !slices.Contains(recheckSkip, ip.Reason)
		expired := !unverified && ip.EvidenceExpired(o.Now)
		if !unverified && !expired {
			continue
		}
		a, err := netip.ParseAddr(ip.IP)
		if err != nil {
			continue
		}
		c, ok := 0, true
		if !one {
			c, ok = index[ip.Crawler]
		}
		if !ok || c >= len(o.Crawlers) {
			continue
		}
		todo[c] = append(todo[c], i)
		addrs[c] = append(addrs[c], a.Unmap().WithZone(""))
		st.Asked++
		if unverified {
			st.Unverified++
		} else {
			st.Expired++
		}
	}
	results := make([]map[netip.Addr]verify.Result, len(o.Crawlers))
	for c := range o.Crawlers {
		if len(addrs[c]) > 0 {
			results[c] = o.Classify(ctx, c, addrs[c])
		}
		if err := ctx.Err(); err != nil {
			return RecheckStats{}, err
		}
	}
	for c, idx := range todo {
		for k, i := range idx {
			r, ok := results[c][addrs[c][k]]
			if !ok {
				continue
			}
			st.apply(&rep.IPs[i], r)
		}
	}
	rep.recount()
	for c, l := range o.Lists {
		name := ""
		if !one && c < len(o.Crawlers) {
			name = o.Crawlers[c]
		}
		for _, e := range ListEvidenceOf(name, l) {
			if !slices.Contains(rep.IPLists, e) {
				rep.IPLists = append(rep.IPLists, e)
			}
		}
	}
	rep.Warnings = append(rep.Warnings, st.warnings()...)
	rep.GeneratedAt = o.Now
	return st, nil
}

// apply puts the new result r into ip, counting what changed.
func (st *RecheckStats) apply(ip *IPReport, r verify.Result) {
	was := ip.Verdict
	if r.Verdict == verify.Unverified && was != verify.Unverified {
		st.Kept++
		return
	}
	n := IPReportOf(r)
	ip.Verdict, ip.Method, ip.Reason = n.Verdict, n.Method, n.Reason
	ip.PTR, ip.Forward, ip.InIPList = n.PTR, n.Forward, n.InIPList
	ip.Warnings, ip.DNSFailure, ip.DNS = n.Warnings, n.DNSFailure, n.DNS
	if ip.Verdict == verify.Unverified {
		st.StillUnverified++
	}
	if ip.Verdict == was {
		return
	}
	st.Changed++
	switch {
	case ip.Verdict == verify.Genuine:
		st.NewGenuine++
		st.NewGenuineHits += ip.Hits
	case was == verify.Genuine:
		st.LostGenuine++
		st.LostGenuineHits += ip.Hits
	}
}

// recount counts the summary's hits by verdict again from the addresses,
// for the report and for each of its crawlers.
func (rep *Report) recount() {
	s := &rep.Summary
	s.GenuineHits, s.SpoofedHits, s.UnverifiedHits = 0, 0, 0
	per := map[string]*CrawlerSummary{}
	for i := range s.Crawlers {
		c := &s.Crawlers[i]
		c.GenuineHits, c.SpoofedHits, c.UnverifiedHits = 0, 0, 0
		per[c.Name] = c
	}
	for _, ip := range rep.IPs {
		add := func(g, sp, u *int64) {
			switch ip.Verdict {
			case verify.Genuine:
				*g += ip.Hits
			case verify.Spoofed:
				*sp += ip.Hits
			default:
				*u += ip.Hits
			}
		}
		add(&s.GenuineHits, &s.SpoofedHits, &s.UnverifiedHits)
		if c := per[ip.Crawler]; c != nil {
			add(&c.GenuineHits, &c.SpoofedHits, &c.UnverifiedHits)
		}
	}
}

// warnings say what the recheck did and what it could not check.
func (st *RecheckStats) warnings() []string {
	out := []string{fmt.Sprintf("recheck: %s asked again (%d unverified, %d with expired evidence): %d changed verdict, %d still unverified, %d kept the verdict they had as DNS could not answer",
		nouns.Count(st.Asked, "address", "addresses"), st.Unverified, st.Expired, st.Changed, st.StillUnverified, st.Kept)}
	if st.NewGenuine > 0 {
		out = append(out, fmt.Sprintf("recheck: %s genuine now, with %s whose conduct was not checked (a report holds no requests): sites and violations are the first run's; run logs again over the same logs to check them",
			nouns.Count(st.NewGenuine, "address is", "addresses are"), nouns.Count(st.NewGenuineHits, "hit", "hits")))
	}
	if st.LostGenuine > 0 {
		out = append(out, fmt.Sprintf("recheck: %s genuine no longer, with %s that the first run's sites and violations may count as the crawler's; run logs again over the same logs to leave them out",
			nouns.Count(st.LostGenuine, "address is", "addresses are"), nouns.Count(st.LostGenuineHits, "hit", "hits")))
	}
	return out
}
