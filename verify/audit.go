package verify

import (
	"maps"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lohisoft/lohibot-audit/parse"
)

// Limits of what an audit keeps.
const (
	// maxUserAgents bounds the user agents kept per address.
	maxUserAgents = 10
	// coverageGap is the longest quiet time between two inputs that still
	// counts as logged: rotated logs follow each other, but a missing
	// rotation must not look like a stretch of time without requests.
	coverageGap = time.Hour
)

// Audit gathers what the log readers found: the claimed hits, per address
// and per site, and the counts of each input. Add records in any order;
// then ask for the Report. The zero Audit is ready to use.
//
// Memory: an address keeps counts and a few user agents; its hits are
// kept (about a hundred bytes each) only while its verdict may still be
// genuine, since only the genuine crawler's hits are checked for conduct.
type Audit struct {
	// Since and Until, when set, drop claimed hits outside [Since, Until).
	Since, Until time.Time
	// Settled, when set, gives an address's verdict when it needs no DNS
	// (see [Verifier.Settled]); the hits of an address settled as spoofed
	// are counted and not kept.
	Settled func(netip.Addr) (Result, bool)

	summary  Summary
	ips      map[string]*ipAgg
	sites    map[string]int64
	files    []string // file names, indexed by auditHit.file
	fileIdx  map[string]int32
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
	settled     *Result
	kept        []auditHit // while the address may be genuine
}

// auditHit is what the conduct checks need of a claimed hit.
type auditHit struct {
	logged, start, end int64 // Unix nanoseconds
	dur                int64
	line               int64
	res                int32 // nanoseconds, at most a second
	status             int16
	hasDur             bool
	file               int32
	path, user, retry  string
	site               string
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
		a.fileIdx = map[string]int32{}
	}
	key := clientKey(rec)
	g := a.ips[key]
	if g == nil {
		g = &ipAgg{addr: rec.Client, raw: rec.ClientRaw, first: rec.Start, last: rec.Start, uas: map[string]bool{}}
		if a.Settled != nil && rec.Client.IsValid() {
			if res, ok := a.Settled(rec.Client); ok {
				g.settled = &res
			}
		}
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
	if g.settled != nil && g.settled.Verdict != Genuine {
		return
	}
	fi, ok := a.fileIdx[rec.File]
	if !ok {
		fi = int32(len(a.files))
		a.files = append(a.files, rec.File)
		a.fileIdx[rec.File] = fi
	}
	g.kept = append(g.kept, auditHit{
		logged: unixNano(rec.Time), start: unixNano(rec.Start), end: unixNano(rec.End),
		dur: int64(rec.Duration), hasDur: rec.HasDuration, res: int32(min(rec.Resolution, time.Second)),
		line: rec.Line, status: int16(rec.Status), file: fi,
		path: rec.Target, user: rec.RemoteUser, retry: rec.RetryAfter, site: rec.Host,
	})
}

// clientKey is how a record's client is named in the report: the address,
// or what was logged when it is not one.
func clientKey(rec *parse.Record) string {
	if rec.Client.IsValid() {
		return rec.Client.String()
	}
	return rec.ClientRaw
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromUnixNano(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}

// keptHits counts the hits kept for the conduct checks.
func (a *Audit) keptHits() int {
	n := 0
	for _, g := range a.ips {
		n += len(g.kept)
	}
	return n
}

// record rebuilds the record the conduct checks read.
func (a *Audit) record(g *ipAgg, h *auditHit) parse.Record {
	return parse.Record{
		File: a.files[h.file], Line: h.line,
		Client: g.addr, ClientRaw: g.raw,
		Time: fromUnixNano(h.logged), Start: fromUnixNano(h.start), End: fromUnixNano(h.end),
		Duration: time.Duration(h.dur), HasDuration: h.hasDur, Resolution: time.Duration(h.res),
		RemoteUser: h.user, Target: h.path, Status: int(h.status),
		Host: h.site, RetryAfter: h.retry, Claimed: true,
	}
}

// AddInput records the counts of one input once it has been read, with
// its first malformed lines.
func (a *Audit) AddInput(in InputReport, examples []*parse.LineError) {
	a.inputs = append(a.inputs, in)
	a.summary.Files++
	a.summary.Lines += in.Lines
	a.summary.Malformed += in.Malformed
	a.summary.MalformedClaims += in.MalformedClaims
	a.summary.Bytes += in.Bytes
	if in.Error != "" {
		a.summary.Incomplete = true
	}
	if in.LogFormat != "" && !slices.Contains(a.formats, in.LogFormat) {
		a.formats = append(a.formats, in.LogFormat)
	}
	for _, e := range examples {
		if len(a.examples) >= parse.DefaultMaxExamples {
			break
		}
		a.examples = append(a.examples, Malformed{File: e.File, Line: e.Line, Text: validUTF8(e.Text), Reason: e.Reason})
	}
}

// Warn adds a run-level warning to the report.
func (a *Audit) Warn(w string) { a.warnings = append(a.warnings, w) }

// Addresses returns the valid client addresses of the claimed hits whose
// verdict needs DNS, sorted.
func (a *Audit) Addresses() []netip.Addr {
	out := make([]netip.Addr, 0, len(a.ips))
	for _, g := range a.ips {
		if g.addr.IsValid() && g.settled == nil {
			out = append(out, g.addr)
		}
	}
	slices.SortFunc(out, netip.Addr.Compare)
	return out
}

// Report builds the report from the verdicts (for the addresses not yet
// settled; nil when identity was not checked: those addresses are then
// unverified with reason not-checked) and the conduct configuration.
func (a *Audit) Report(results map[netip.Addr]Result, conduct ConductConfig) *Report {
	r := &Report{
		Tool:              "lohibot-audit",
		Summary:           a.summary,
		IPs:               make([]IPReport, 0, len(a.ips)),
		Sites:             []SiteReport{},
		Violations:        []Violation{},
		MalformedExamples: append([]Malformed{}, a.examples...),
		Warnings:          append([]string{}, a.warnings...),
		Inputs:            append([]InputReport{}, a.inputs...),
	}
	r.Summary.LogFormat = strings.Join(a.formats, ",")

	var genuine []*parse.Record
	pool := make([]parse.Record, 0, a.keptHits())
	for key, g := range a.ips {
		ip := IPReport{
			IP:         validUTF8(key),
			Hits:       g.hits,
			FirstSeen:  g.first.UTC(),
			LastSeen:   g.last.UTC(),
			PTR:        []string{},
			Forward:    []string{},
			UserAgents: []string{},
		}
		for _, ua := range slices.Sorted(maps.Keys(g.uas)) {
			ip.UserAgents = append(ip.UserAgents, validUTF8(ua))
		}
		res, ok := Result{}, false
		switch {
		case g.settled != nil:
			res, ok = *g.settled, true
		case g.addr.IsValid() && results != nil:
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
			ip.DNSFailure = res.DNSFailure
		}
		switch ip.Verdict {
		case Genuine:
			r.Summary.GenuineHits += g.hits
			for i := range g.kept {
				pool = append(pool, a.record(g, &g.kept[i]))
				genuine = append(genuine, &pool[len(pool)-1])
			}
		case Spoofed:
			r.Summary.SpoofedHits += g.hits
		default:
			r.Summary.UnverifiedHits += g.hits
		}
		r.IPs = append(r.IPs, ip)
	}
	sortIPReports(r.IPs)

	if conduct.LogStart == nil {
		starts := map[string]time.Time{}
		for _, in := range a.inputs {
			if !in.FirstTime.IsZero() {
				starts[in.File] = a.clampSince(in.FirstTime)
			}
		}
		conduct.LogStart = func(file string) time.Time { return starts[file] }
	}
	if conduct.Covered == nil {
		conduct.Covered = a.covered
	}
	violations, sites := CheckConduct(genuine, conduct)
	for _, v := range violations {
		v.Path, v.Detail = validUTF8(v.Path), validUTF8(v.Detail)
		r.Violations = append(r.Violations, v)
	}
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
		s.Site = validUTF8(s.Site)
		r.Sites = append(r.Sites, s)
	}
	sort.Slice(r.Sites, func(i, j int) bool { return r.Sites[i].Site < r.Sites[j].Site })
	r.Summary.Violations = len(r.Violations)
	return r
}

// clampSince moves a time to --since: claimed hits before it are not read,
// so the logs, as far as the audit knows, begin there.
func (a *Audit) clampSince(t time.Time) time.Time {
	if !a.Since.IsZero() && t.Before(a.Since) {
		return a.Since
	}
	return t
}

// covered reports whether the inputs that log site's requests cover all of
// [from, to]. An input covers the span from its first to its last
// well-formed line; one input follows another when it begins within
// coverageGap of the other's end, unless the other could not be read
// whole. An input covers the sites of its virtual hosts when its format
// logs them, and otherwise only its own site.
func (a *Audit) covered(site string, from, to time.Time) bool {
	type span struct {
		start, end time.Time
		cut        bool // the input ended early: nothing follows it
	}
	var spans []span
	for _, in := range a.inputs {
		if in.FirstTime.IsZero() || in.LastTime.IsZero() || !(in.HostLogged || in.Site == site) {
			continue
		}
		start := a.clampSince(in.FirstTime)
		end := in.LastTime.Add(time.Second) // the last second is logged whole
		if !start.Before(end) {
			continue
		}
		spans = append(spans, span{start, end, in.Error != ""})
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].start.Before(spans[j].start) })
	for i := 0; i < len(spans); {
		s := spans[i]
		j := i + 1
		for j < len(spans) && !s.cut && !spans[j].start.After(s.end.Add(coverageGap)) {
			if spans[j].end.After(s.end) {
				s.end, s.cut = spans[j].end, spans[j].cut
			} else {
				s.cut = s.cut || spans[j].cut
			}
			j++
		}
		if !s.start.After(from) && !s.end.Before(to) {
			return true
		}
		i = j
	}
	return false
}

// validUTF8 replaces bytes that are not UTF-8 so that every output format
// carries text (YAML would otherwise write binary).
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}

// sortIPReports orders addresses numerically, IPv4 first, and anything
// that is not an address after them as text.
func sortIPReports(ips []IPReport) {
	keys := make(map[string]netip.Addr, len(ips))
	for _, ip := range ips {
		if a, err := netip.ParseAddr(ip.IP); err == nil {
			keys[ip.IP] = a
		}
	}
	slices.SortFunc(ips, func(x, y IPReport) int {
		ax, okx := keys[x.IP]
		ay, oky := keys[y.IP]
		switch {
		case okx && oky:
			return ax.Compare(ay)
		case okx:
			return -1
		case oky:
			return 1
		}
		return strings.Compare(x.IP, y.IP)
	})
}
