package verify

import (
	"net/netip"
	"sort"
	"time"

	"github.com/lohisoft/lohibot-audit/parse"
)

// maxUserAgents bounds the user agents kept per address.
const maxUserAgents = 10

// Audit gathers what the log readers found: the claimed hits, per address
// and per site, and the counts of each input. Add records in any order;
// then ask for the Report. The zero Audit is ready to use.
type Audit struct {
	// Since and Until, when set, drop claimed hits outside [Since, Until).
	Since, Until time.Time

	summary  Summary
	ips      map[string]*ipAgg
	hits     []*parse.Record
	sites    map[string]int64
	inputs   []InputReport
	examples []Malformed
	formats  []string
	warnings []string
}

type ipAgg struct {
	addr        netip.Addr
	raw         string
	hits        int64
	first, last time.Time
	uas         map[string]bool
}

// Add takes one record from a log reader: a claimed hit, or a request from
// a listed address without the product token (only counted).
func (a *Audit) Add(rec *parse.Record) {
	if !rec.Claimed {
		a.summary.UnclaimedHit++
		return
	}
	if (!a.Since.IsZero() && rec.Start.Before(a.Since)) || (!a.Until.IsZero() && !rec.Start.Before(a.Until)) {
		a.summary.FilteredOut++
		return
	}
	if a.ips == nil {
		a.ips = map[string]*ipAgg{}
		a.sites = map[string]int64{}
	}
	key := rec.ClientRaw
	if rec.Client.IsValid() {
		key = rec.Client.String()
	}
	g := a.ips[key]
	if g == nil {
		g = &ipAgg{addr: rec.Client, raw: rec.ClientRaw, first: rec.Start, last: rec.Start, uas: map[string]bool{}}
		a.ips[key] = g
	}
	g.hits++
	if rec.Start.Before(g.first) {
		g.first = rec.Start
	}
	if rec.Start.After(g.last) {
		g.last = rec.Start
	}
	if len(g.uas) < maxUserAgents {
		g.uas[rec.UserAgent] = true
	}
	a.summary.ClaimedHits++
	a.sites[rec.Host]++
	a.hits = append(a.hits, conductCopy(rec))
}

// conductCopy keeps what the conduct checks read of a record, so that the
// audit holds a few dozen bytes per claimed hit rather than whole lines.
func conductCopy(rec *parse.Record) *parse.Record {
	return &parse.Record{
		File: rec.File, Line: rec.Line,
		Client: rec.Client, ClientRaw: rec.ClientRaw,
		Time: rec.Time, Start: rec.Start, End: rec.End,
		Duration: rec.Duration, HasDuration: rec.HasDuration, Resolution: rec.Resolution,
		RemoteUser: rec.RemoteUser, Target: rec.Target, Status: rec.Status,
		Host: rec.Host, RetryAfter: rec.RetryAfter, Claimed: rec.Claimed,
	}
}

// AddInput records the counts of one input once it has been read, with
// its first malformed lines.
func (a *Audit) AddInput(in InputReport, examples []*parse.LineError) {
	a.inputs = append(a.inputs, in)
	a.summary.Files++
	a.summary.Lines += in.Lines
	a.summary.Malformed += in.Malformed
	a.summary.Bytes += in.Bytes
	a.summary.MalformedClaims += in.MalformedClaims
	if in.Error != "" {
		a.summary.Incomplete = true
	}
	if in.LogFormat != "" {
		seen := false
		for _, f := range a.formats {
			seen = seen || f == in.LogFormat
		}
		if !seen {
			a.formats = append(a.formats, in.LogFormat)
		}
	}
	for _, e := range examples {
		if len(a.examples) >= parse.DefaultMaxExamples {
			break
		}
		a.examples = append(a.examples, Malformed{File: e.File, Line: e.Line, Text: e.Text, Reason: e.Reason})
	}
}

// Warn adds a run-level warning to the report.
func (a *Audit) Warn(w string) { a.warnings = append(a.warnings, w) }

// Addresses returns the valid client addresses of the claimed hits,
// sorted.
func (a *Audit) Addresses() []netip.Addr {
	out := make([]netip.Addr, 0, len(a.ips))
	for _, g := range a.ips {
		if g.addr.IsValid() {
			out = append(out, g.addr)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Less(out[j]) })
	return out
}

// Report builds the report from the verdicts (nil when identity was not
// checked: every address is then unverified with reason not-checked) and
// the conduct configuration.
func (a *Audit) Report(results map[netip.Addr]Result, conduct ConductConfig) *Report {
	r := &Report{
		Tool:              "lohibot-audit",
		Summary:           a.summary,
		IPs:               []IPReport{},
		Sites:             []SiteReport{},
		Violations:        []Violation{},
		MalformedExamples: append([]Malformed{}, a.examples...),
		Warnings:          append([]string{}, a.warnings...),
		Inputs:            append([]InputReport{}, a.inputs...),
	}
	r.Summary.LogFormat = joinFormats(a.formats)

	verdicts := map[string]Verdict{}
	for key, g := range a.ips {
		ip := IPReport{
			IP:         key,
			Hits:       g.hits,
			FirstSeen:  g.first.UTC(),
			LastSeen:   g.last.UTC(),
			PTR:        []string{},
			Forward:    []string{},
			UserAgents: sortedKeys(g.uas),
		}
		res, ok := Result{}, false
		if g.addr.IsValid() && results != nil {
			res, ok = results[g.addr]
		}
		switch {
		case !g.addr.IsValid():
			ip.Verdict, ip.Method, ip.Reason = Unverified, "", ReasonInvalidAddress
		case !ok:
			ip.Verdict, ip.Method, ip.Reason = Unverified, "", ReasonNotChecked
		default:
			ip.Verdict, ip.Method, ip.Reason = res.Verdict, res.Method, res.Reason
			ip.InIPList = res.InIPList
			if res.PTR != nil {
				ip.PTR = res.PTR
			}
			if res.Forward != nil {
				ip.Forward = res.Forward
			}
			ip.Warnings = res.Warnings
		}
		verdicts[key] = ip.Verdict
		switch ip.Verdict {
		case Genuine:
			r.Summary.GenuineHits += g.hits
		case Spoofed:
			r.Summary.SpoofedHits += g.hits
		default:
			r.Summary.UnverifiedHits += g.hits
		}
		r.IPs = append(r.IPs, ip)
	}
	sort.Slice(r.IPs, func(i, j int) bool { return ipLess(r.IPs[i].IP, r.IPs[j].IP) })

	var genuine []*parse.Record
	for _, h := range a.hits {
		key := h.ClientRaw
		if h.Client.IsValid() {
			key = h.Client.String()
		}
		if verdicts[key] == Genuine {
			genuine = append(genuine, h)
		}
	}
	if conduct.LogStart == nil {
		starts := map[string]time.Time{}
		for _, in := range a.inputs {
			if !in.FirstTime.IsZero() {
				starts[in.File] = in.FirstTime
			}
		}
		conduct.LogStart = func(file string) time.Time { return starts[file] }
	}
	violations, sites := CheckConduct(genuine, conduct)
	r.Violations = append(r.Violations, violations...)
	bySite := map[string]SiteReport{}
	for _, s := range sites {
		bySite[s.Site] = s
	}
	for site, n := range a.sites {
		s, ok := bySite[site]
		if !ok {
			s = SiteReport{Site: site}
		}
		s.ClaimedHits = n
		bySite[site] = s
	}
	for _, s := range bySite {
		if s.ChecksSkipped == nil {
			s.ChecksSkipped = []string{}
		}
		r.Sites = append(r.Sites, s)
	}
	sort.Slice(r.Sites, func(i, j int) bool { return r.Sites[i].Site < r.Sites[j].Site })
	r.Summary.Violations = len(r.Violations)
	return r
}

func joinFormats(fs []string) string {
	out := ""
	for i, f := range fs {
		if i > 0 {
			out += ","
		}
		out += f
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// ipLess orders addresses numerically, IPv4 first, and anything that is
// not an address after them as text.
func ipLess(a, b string) bool {
	pa, ea := netip.ParseAddr(a)
	pb, eb := netip.ParseAddr(b)
	switch {
	case ea == nil && eb == nil:
		return pa.Less(pb)
	case ea == nil:
		return true
	case eb == nil:
		return false
	}
	return a < b
}
