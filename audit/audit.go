package audit

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"iter"
	"net/netip"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/lohisoft/lohibot-audit/conduct"
	"github.com/lohisoft/lohibot-audit/internal/hitstore"
	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/lohisoft/lohibot-audit/proxy"
	"github.com/lohisoft/lohibot-audit/verify"
)

// Limits of what an audit keeps.
const (
	// maxUserAgents bounds the user agents kept per address.
	maxUserAgents = 10
	// maxClientText is how many bytes of a user agent, or of a client
	// field that is not an address, the report keeps: a user agent is
	// rarely longer than 200 bytes and a host name never longer than 253,
	// and a botnet must not make each of a million addresses cost
	// kilobytes.
	maxClientText = 256
)

// Audit gathers what the log readers found: the claimed hits, per address
// and per site, and the counts of each input. Add the records of an input
// in the order the log holds them (in time order but for lines up to
// [conduct.Disorder] out of place, as a server writes them), then
// AddInput; then ask for the Report, and Close. The zero Audit is ready
// to use.
//
// Memory: an address costs about 75 bytes (a 64-byte entry with its
// counts and first and last times, and its place in an index), and up to
// ten user agents, each cut at 256 bytes and kept once however many
// addresses send it. A hit is kept only while its address may still be
// genuine, since only the genuine crawler's hits are checked for conduct
// (the hits of an address settled as spoofed without DNS are only
// counted), in about 15 bytes and the bytes of its request target, in the
// order it was added (internal/hitstore): the first 8 MiB in memory, the
// rest in a temporary file, so that memory does not grow with the hits.
// Sites, files, remote users and Retry-After values are kept once each.
type Audit struct {
	// Since and Until, when set, drop claimed hits outside [Since, Until)
	// (and claimed hits without a time, which cannot be placed).
	Since, Until time.Time
	// Settled, when set, gives an address's verdict when it needs no DNS
	// (see [verify.Verifier.Settled]); the hits of an address settled as spoofed
	// are counted and not kept, unless KeepAll is set.
	Settled func(netip.Addr) (verify.Result, bool)
	// KeepAll keeps every claimed hit, for eachHit.
	KeepAll bool
	// Crawler, when set, names the crawler audited in the report's
	// addresses, sites and violations (an audit of several crawlers).
	Crawler string
	// Proxies names the proxies of hits a trusted proxy forwarded
	// without a usable real client (parse.Record.Proxy); nil: the
	// built-in CDN edges only.
	Proxies *proxy.Set

	summary Summary

	clients
	byAddr addrIndex
	// recent are the entry numbers of addresses seen lately, by a few
	// bits of the address (the genuine crawler's few addresses come again
	// and again): found without hashing the address or reading the
	// index. Made with the first address.
	recent *[recentAddrs]recentAddr
	// recentUAs are pairs of an entry number and a user agent's id seen
	// lately, by a few of their bits: the address's user agents hold the
	// user agent, or can hold no more.
	recentUAs *[recentAddrs]recentUA
	byRaw     map[string]uint32 // clients that are no address, or have a zone
	settleIx  map[resultKey]uint32

	hits hitstore.Store // by input, one segment each
	// The segment of each file's kept hits (by file id, -1 for none),
	// the file of the last hit kept, the hits kept of each segment, and
	// whether a file's hits are in two segments: the conduct checks'
	// first passes split over the cores by segment only when none is.
	fileSeg                      []int32
	lastKept                     uint32
	segHits                      []int64
	filesSpan                    bool
	users, retries, sites, files interner
	pairs                        table[hitPair]
	siteHits                     []int64 // claimed hits per site, by site id

	inputs     []InputReport
	inputSince []time.Time // by input, when set: where its run's Since cut it
	examples   []Malformed
	formats    []string
	warnings   []string
	// proxied are the claimed hits of proxies, as the last Report found
	// them.
	proxied proxyTally
}

// clients is what an audit knows of the clients that claimed to be the
// crawler: all a report needs once the audit is gone.
type clients struct {
	addrs    chunked[addrEntry]
	raws     []string            // names of the clientRaw entries, by addrEntry.raw
	extraUAs map[uint32][]uint32 // user agents of an address after its first
	uas      interner
	settled  []verify.Result // distinct verdicts given by Settled
}

// Kinds of client, in addrEntry.kind.
const (
	clientRaw = iota // not an address (a host name), or an address with a zone
	clientV4
	clientV6
	// clientProxy is a trusted proxy's address, of hits it forwarded
	// without a usable real client: never judged (its name is in raws,
	// its address in ip).
	clientProxy
)

// addrKey is an address without a zone, as a key without pointers.
type addrKey struct {
	ip [16]byte
	v4 bool
}

// addrEntry is what an audit knows of one client.
type addrEntry struct {
	hits                int64
	firstSec, lastSec   int64 // first and last start times seen, when timed
	firstNsec, lastNsec int32
	ua                  uint32 // id of its first user agent; 0 before any
	settled             uint32 // 1 + index into Audit.settled; 0 when DNS decides
	raw                 uint32 // clientRaw, clientProxy: index into Audit.raws
	ip                  [16]byte
	kind                uint8
	timed               bool // a hit of the address had a time
}

// recentAddrs is how many addresses Audit.recent holds.
const recentAddrs = 64

// recentAddr is an address seen lately and its entry number.
type recentAddr struct {
	k   addrKey
	i   uint32
	set bool
}

// recentUA is an entry number and the id of a user agent.
type recentUA struct{ i, ua uint32 }

// resultKey tells settled verdicts apart (the address aside), so that a
// million spoofers share a handful of Results.
type resultKey struct {
	verdict                  verify.Verdict
	method, reason, dnsError string
	ptr, forward, warnings   string
	inIPList                 bool
}

func resultKeyOf(r *verify.Result) resultKey {
	return resultKey{
		verdict: r.Verdict, method: r.Method, reason: r.Reason, dnsError: r.DNSError,
		ptr: strings.Join(r.PTR, "\x00"), forward: strings.Join(r.Forward, "\x00"),
		warnings: strings.Join(r.Warnings, "\x00"), inIPList: r.InIPList,
	}
}

// hitPair is a remote user and a Retry-After value, as interner ids.
type hitPair struct{ user, retry uint32 }

// Add takes one record from a log reader: a claimed hit, or a request from
// a listed address without the product token (only counted). A record has
// a time when its Resolution is above zero, as the log reader sets it.
// Its strings are copied as far as they are kept: the record may be
// reused. It reports whether the record was taken as a claimed hit (not
// left out by Since and Until).
func (a *Audit) Add(rec *parse.Record) bool {
	var p pendingHit
	if !a.take(rec, &p) {
		return false
	}
	a.store(&p)
	return true
}

// pendingHit is a claimed hit an audit has taken in (take) and is yet to
// store (store): what storing needs of the record, its strings as the
// record holds them.
type pendingHit struct {
	h                       hitstore.Hit // but for Site, File and Pair
	site, file, user, retry string
	keep                    bool // kept in the store, not only counted
}

// take is the first half of Add: the record's address, its counts and
// user agent. It fills in p for store, and reports whether the record is
// a claimed hit taken in. Apart from Warn and addInput, take and store
// change disjoint parts of the audit: the stores of hits taken before
// may run at the same time as a take, in another goroutine, in the order
// the hits were taken.
func (a *Audit) take(rec *parse.Record, p *pendingHit) bool {
	if !rec.Claimed {
		a.summary.UnclaimedHit++
		return false
	}
	timed := rec.Resolution > 0
	if (!a.Since.IsZero() || !a.Until.IsZero()) &&
		(!timed || (!a.Since.IsZero() && rec.Start.Before(a.Since)) || (!a.Until.IsZero() && !rec.Start.Before(a.Until))) {
		a.summary.FilteredOut++
		return false
	}
	i := a.entry(rec)
	e := a.addrs.at(int(i))
	e.hits++
	if timed {
		sec, nsec := rec.Start.Unix(), int32(rec.Start.Nanosecond())
		if !e.timed || sec < e.firstSec || sec == e.firstSec && nsec < e.firstNsec {
			e.firstSec, e.firstNsec = sec, nsec
		}
		if !e.timed || sec > e.lastSec || sec == e.lastSec && nsec > e.lastNsec {
			e.lastSec, e.lastNsec = sec, nsec
		}
		e.timed = true
	}
	a.addUserAgent(i, e, rec.UserAgent)
	a.summary.ClaimedHits++
	p.site = rec.Host
	if e.settled != 0 && a.settled[e.settled-1].Verdict != verify.Genuine && !a.KeepAll {
		p.keep = false
		return true
	}
	p.keep = true
	p.h = hitstore.Hit{
		Addr: i, Line: rec.Line, Status: rec.Status, Target: rec.Target,
		HasDuration: rec.HasDuration, Duration: rec.Duration,
		StartLogged: rec.HasDuration && rec.Start.Equal(rec.Time),
	}
	if timed {
		p.h.Timed, p.h.Time, p.h.Resolution = true, rec.Time, min(rec.Resolution, time.Second)
	}
	p.file, p.user, p.retry = rec.File, rec.RemoteUser, rec.RetryAfter
	return true
}

// store is the second half of Add: the hit's site is counted, and the hit
// kept.
func (a *Audit) store(p *pendingHit) {
	site := a.sites.id(p.site)
	for int(site) >= len(a.siteHits) {
		a.siteHits = append(a.siteHits, 0)
	}
	a.siteHits[site]++
	if !p.keep {
		return
	}
	h := &p.h
	h.Site, h.File = site, a.files.id(p.file)
	if p.user != "" || p.retry != "" {
		h.Pair = a.pairs.id(hitPair{a.users.id(p.user), a.retries.id(p.retry)})
	}
	a.hits.Add(h)
	a.noteKept(h.File)
}

// noteKept notes a hit of file f kept in the current segment.
func (a *Audit) noteKept(f uint32) {
	seg := a.hits.Segments() - 1
	for len(a.segHits) <= seg {
		a.segHits = append(a.segHits, 0)
	}
	a.segHits[seg]++
	if f == a.lastKept {
		return
	}
	a.lastKept = f
	for int(f) >= len(a.fileSeg) {
		a.fileSeg = append(a.fileSeg, -1)
	}
	if s := a.fileSeg[f]; s >= 0 && int(s) != seg {
		a.filesSpan = true
	}
	a.fileSeg[f] = int32(seg)
}

// entry returns the index of the record's client, adding it when new.
func (a *Audit) entry(rec *parse.Record) uint32 {
	c := rec.Client
	if rec.Proxy && c.IsValid() {
		c = c.Unmap().WithZone("")
		key := "proxy " + c.String()
		if i, ok := a.byRaw[key]; ok {
			return i
		}
		if a.byRaw == nil {
			a.byRaw = map[string]uint32{}
		}
		a.raws = append(a.raws, c.String())
		i := uint32(a.addrs.push(addrEntry{kind: clientProxy, raw: uint32(len(a.raws) - 1), ip: c.As16()}))
		a.byRaw[key] = i
		return i
	}
	if c.IsValid() && c.Zone() == "" {
		k := addrKey{ip: c.As16(), v4: c.Is4()}
		if a.recent == nil {
			a.recent = new([recentAddrs]recentAddr)
		}
		r := &a.recent[int(k.ip[15]^k.ip[14]<<3^k.ip[13]<<5)%recentAddrs]
		if r.set && r.k == k {
			return r.i
		}
		i, slot, ok := a.byAddr.lookup(k, &a.addrs)
		if !ok {
			e := addrEntry{ip: k.ip, kind: clientV6}
			if k.v4 {
				e.kind = clientV4
			}
			i = uint32(a.addrs.push(e))
			a.byAddr.insert(k, i, slot, &a.addrs)
			a.settle(i, c)
		}
		*r = recentAddr{k: k, i: i, set: true}
		return i
	}
	name := rec.ClientRaw
	if c.IsValid() {
		name = c.String()
	} else {
		name = cutText(name, maxClientText)
	}
	if i, ok := a.byRaw[name]; ok {
		return i
	}
	if a.byRaw == nil {
		a.byRaw = map[string]uint32{}
	}
	name = strings.Clone(name)
	a.raws = append(a.raws, name)
	i := uint32(a.addrs.push(addrEntry{kind: clientRaw, raw: uint32(len(a.raws) - 1)}))
	a.byRaw[name] = i
	if c.IsValid() {
		a.settle(i, c)
	}
	return i
}

// settle asks Settled for the verdict of a new address.
func (a *Audit) settle(i uint32, addr netip.Addr) {
	if a.Settled == nil {
		return
	}
	res, ok := a.Settled(addr)
	if !ok {
		return
	}
	k := resultKeyOf(&res)
	n, ok := a.settleIx[k]
	if !ok {
		if a.settleIx == nil {
			a.settleIx = map[resultKey]uint32{}
		}
		res.Addr = netip.Addr{}
		a.settled = append(a.settled, res)
		n = uint32(len(a.settled))
		a.settleIx[k] = n
	}
	a.addrs.at(int(i)).settled = n
}

// addUserAgent notes a user agent of the address, up to maxUserAgents.
func (a *Audit) addUserAgent(i uint32, e *addrEntry, ua string) {
	id := a.uas.id(cutText(ua, maxClientText))
	switch {
	case e.ua == 0:
		e.ua = id
		return
	case e.ua == id:
		return
	}
	// The genuine crawler's few addresses send the same few user agents
	// again and again.
	if a.recentUAs == nil {
		a.recentUAs = new([recentAddrs]recentUA)
	}
	r := &a.recentUAs[(i^id*7)%recentAddrs]
	if *r == (recentUA{i: i, ua: id}) {
		return
	}
	*r = recentUA{i: i, ua: id} // as noted below, or never to be
	more := a.extraUAs[i]
	if 1+len(more) >= maxUserAgents || slices.Contains(more, id) {
		return
	}
	if a.extraUAs == nil {
		a.extraUAs = map[uint32][]uint32{}
	}
	a.extraUAs[i] = append(more, id)
}

// cutText cuts s to at most max bytes at a character boundary, marking the
// cut with "…".
func cutText(s string, max int) string {
	if len(s) <= max {
		return s
	}
	n := max - len("…")
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// addrOf returns the address of an entry, or false for a client that is
// not an address.
func (a *clients) addrOf(e *addrEntry) (netip.Addr, bool) {
	switch e.kind {
	case clientV4:
		return netip.AddrFrom4([4]byte(e.ip[12:])), true
	case clientV6:
		return netip.AddrFrom16(e.ip), true
	case clientProxy:
		return netip.Addr{}, false
	}
	addr, err := netip.ParseAddr(a.raws[e.raw])
	return addr, err == nil
}

// proxyAddr returns the address of a clientProxy entry.
func (e *addrEntry) proxyAddr() netip.Addr { return netip.AddrFrom16(e.ip).Unmap() }

// name is how the report names an entry's client: the address, or what
// was logged when it is not one.
func (a *clients) name(e *addrEntry) string {
	if e.kind == clientRaw || e.kind == clientProxy {
		return a.raws[e.raw]
	}
	addr, _ := a.addrOf(e)
	return addr.String()
}

// AddInput records the counts of one input once it has been read, with
// its first malformed lines.
func (a *Audit) AddInput(in InputReport, examples []*parse.LineError) {
	a.addInput(in, malformedOf(examples), time.Time{})
}

// malformedOf is how the report shows malformed lines.
func malformedOf(examples []*parse.LineError) []Malformed {
	out := make([]Malformed, len(examples))
	for i, e := range examples {
		out[i] = Malformed{File: e.File, Line: e.Line, Text: validUTF8(e.Text), Reason: e.Reason}
	}
	return out
}

// addInput is AddInput; since, when set, is where the input's claimed
// hits were cut by the run that read it (a snapshot's --since: see
// coverage), in place of the audit's Since.
func (a *Audit) addInput(in InputReport, examples []Malformed, since time.Time) {
	a.hits.EndSegment()
	a.lastKept = 0
	a.inputs = append(a.inputs, in)
	if !since.IsZero() {
		for len(a.inputSince) < len(a.inputs)-1 {
			a.inputSince = append(a.inputSince, time.Time{})
		}
		a.inputSince = append(a.inputSince, since)
	}
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
		a.examples = append(a.examples, e)
	}
}

// Warn adds a run-level warning to the report.
func (a *Audit) Warn(w string) { a.warnings = append(a.warnings, w) }

// Addresses returns the valid client addresses of the claimed hits whose
// verdict needs DNS, sorted.
func (a *Audit) Addresses() []netip.Addr {
	var out []netip.Addr
	for i := 0; i < a.addrs.len(); i++ {
		e := a.addrs.at(i)
		if e.settled != 0 {
			continue
		}
		if addr, ok := a.addrOf(e); ok {
			out = append(out, addr)
		}
	}
	slices.SortFunc(out, netip.Addr.Compare)
	return out
}

// result returns the verdict of entry i: settled, from results, or none.
func (a *clients) result(e *addrEntry, results map[netip.Addr]verify.Result) (*verify.Result, bool) {
	if e.settled != 0 {
		return &a.settled[e.settled-1], true
	}
	if results == nil {
		return nil, false
	}
	addr, ok := a.addrOf(e)
	if !ok {
		return nil, false
	}
	res, ok := results[addr]
	return &res, ok
}

// verdictOf returns the verdict the report gives entry e.
func (a *clients) verdictOf(e *addrEntry, results map[netip.Addr]verify.Result) verify.Verdict {
	if _, ok := a.addrOf(e); !ok {
		return verify.Unverified
	}
	if res, ok := a.result(e, results); ok {
		return res.Verdict
	}
	return verify.Unverified
}

// Report builds the report from the verdicts (for the addresses not yet
// settled; nil when identity was not checked: those addresses are then
// unverified with reason not-checked) and the conduct configuration.
//
// The report's addresses are made one at a time as they are read
// ([Report.AllIPs]), from the audit: leave the audit alone while the
// report is in use. The conduct checks run site by site, so that only
// one site's hits are ever expanded at once.
func (a *Audit) Report(results map[netip.Addr]verify.Result, cfg conduct.Config) *Report {
	r := &Report{
		Tool:              "lohibot-audit",
		SchemaVersion:     SchemaVersion,
		Summary:           a.summary,
		IPs:               []IPReport{}, // made one at a time: see AllIPs
		Sites:             []SiteReport{},
		Violations:        []Violation{},
		MalformedExamples: append([]Malformed{}, a.examples...),
		Warnings:          append([]string{}, a.warnings...),
		Inputs:            append([]InputReport{}, a.inputs...),
	}
	r.Summary.LogFormat = strings.Join(a.formats, ",")

	n := a.addrs.len()
	genuine := make([]bool, n)
	view := ipView{c: a.clients, proxies: a.Proxies}
	a.proxied = nil
	for i := 0; i < n; i++ {
		e := a.addrs.at(i)
		if e.kind == clientProxy {
			a.proxied.add(view.proxyName(e.proxyAddr()), e.proxyAddr(), e.hits, true)
		} else if res, ok := a.result(e, results); ok && res.Reason == verify.ReasonProxy {
			addr, _ := a.addrOf(e)
			a.proxied.add(res.Proxy, addr, e.hits, a.Proxies.Trusts(addr))
		}
		switch a.verdictOf(e, results) {
		case verify.Genuine:
			genuine[i] = true
			r.Summary.GenuineHits += e.hits
		case verify.Spoofed:
			r.Summary.SpoofedHits += e.hits
		default:
			r.Summary.UnverifiedHits += e.hits
		}
	}
	// The view keeps the clients, not the audit: once the caller lets go
	// of the audit, its hits are garbage while the report is written.
	r.lazy = &ipView{c: a.clients, results: results, crawler: a.Crawler, proxies: a.Proxies}
	// The addresses are put in order beside the conduct checks.
	ordered := make(chan []uint32, 1)
	go func() { ordered <- a.ipOrder() }()

	cfg = a.coverage().Apply(cfg)
	// r.Sites in the order of their names as the report shows them; pos
	// gives a site id's place in it.
	sites := make([]uint32, 0, a.sites.count())
	for id := 1; id <= a.sites.count(); id++ {
		sites = append(sites, uint32(id))
	}
	valid := func(id uint32) string { return validUTF8(a.sites.name(id)) }
	slices.SortFunc(sites, func(x, y uint32) int {
		if c := strings.Compare(valid(x), valid(y)); c != 0 {
			return c
		}
		return strings.Compare(a.sites.name(x), a.sites.name(y))
	})
	pos := make([]int32, a.sites.count()+1)
	r.Sites = make([]SiteReport, len(sites))
	none := []string{}
	for i, id := range sites {
		pos[id] = int32(i)
		r.Sites[i] = SiteReport{Site: valid(id), Crawler: a.Crawler, ClaimedHits: a.siteHits[id], ChecksSkipped: none}
	}
	a.checkConduct(genuine, cfg, r, pos)
	r.lazy.order = <-ordered
	for i := range r.Violations {
		r.Violations[i].Crawler = a.Crawler
	}
	for _, s := range r.Sites {
		r.Summary.Violations += s.Violations
		for _, n := range s.ViolationsLeftOut {
			r.Summary.ViolationsLeftOut += n
		}
	}
	if w := a.hits.Warning(); w != "" {
		r.Warnings = append(r.Warnings, w)
	}
	return r
}

// checkConduct runs the conduct checks on the genuine addresses' hits,
// input by input merged by time (conduct.Checker), adds the violations
// and warnings to r and fills in the site reports (r.Sites[pos[site
// id]]).
func (a *Audit) checkConduct(genuine []bool, cfg conduct.Config, r *Report, pos []int32) {
	if !slices.Contains(genuine, true) {
		return
	}
	c := conduct.NewChecker(cfg)
	// The checks learn each file's time units from all its hits, then
	// where each file begins; only then can they take the hits in order.
	if groups := a.surveyGroups(); groups != nil {
		a.surveyAtOnce(c, genuine, groups, r)
	} else {
		for _, pass := range []func(*conduct.Hit){c.Measure, c.Anchor} {
			a.eachGenuine(genuine, pass, r)
		}
	}
	skips := map[string][]string{} // sites share their lists of skipped checks
	c.EachSite(func(rep conduct.SiteReport) {
		k := strings.Join(rep.ChecksSkipped, ",")
		if shared, ok := skips[k]; ok {
			rep.ChecksSkipped = shared
		} else {
			skips[k] = rep.ChecksSkipped
		}
		if len(rep.NotPromised) > 0 {
			// The same few checks for every site: one slice for all.
			k := "not promised: " + strings.Join(rep.NotPromised, ",")
			if shared, ok := skips[k]; ok {
				rep.NotPromised = shared
			} else {
				skips[k] = rep.NotPromised
			}
		}
		s := &r.Sites[pos[a.sites.ids[rep.Site]]]
		s.Pages, s.RobotsFetches, s.ChecksSkipped = rep.Pages, rep.RobotsFetches, rep.ChecksSkipped
		s.Violations, s.ViolationsLeftOut, s.NotPromised = rep.Violations, rep.ViolationsLeftOut, rep.NotPromised
		s.RobotsNotes = rep.RobotsNotes
	})
	var sources []*hitSource
	res := c.Run(func() []conduct.Source {
		for _, src := range sources {
			a.readFailed(src.r, r)
		}
		sources = make([]*hitSource, a.hits.Segments())
		in := make([]conduct.Source, len(sources))
		for seg := range sources {
			// Each its own names: Run may read the sources at once.
			sources[seg] = a.source(seg, genuine, map[uint32]string{}, false)
			in[seg] = sources[seg]
		}
		return in
	})
	for _, src := range sources {
		a.readFailed(src.r, r)
	}
	for _, v := range res.Violations {
		v.Path, v.Detail, v.RobotsRule, v.RobotsVersion = validUTF8(v.Path), validUTF8(v.Detail), validUTF8(v.RobotsRule), validUTF8(v.RobotsVersion)
		r.Violations = append(r.Violations, v)
	}
	r.Warnings = append(r.Warnings, res.Warnings...)
}

// eachGenuine calls pass with the times, sites and files of the genuine
// addresses' hits, input by input, in order (then adds a warning for
// each input not read back whole): they are read back and decoded in a
// goroutine of their own, a few batches ahead.
func (a *Audit) eachGenuine(genuine []bool, pass func(*conduct.Hit), r *Report) {
	srcs := make([]*hitSource, a.hits.Segments())
	for seg := range srcs {
		srcs[seg] = a.source(seg, genuine, nil, true)
	}
	const batch, ahead = 1024, 4
	full := make(chan []conduct.Hit, ahead)
	free := make(chan []conduct.Hit, ahead+2)
	go func() {
		defer close(full)
		var b []conduct.Hit
		for _, src := range srcs {
			for {
				if b == nil {
					select {
					case b = <-free:
					default:
						b = make([]conduct.Hit, 0, batch)
					}
				}
				b = b[:len(b)+1]
				if !src.Next(&b[len(b)-1]) {
					b = b[:len(b)-1]
					break
				}
				if len(b) == batch {
					full <- b
					b = nil
				}
			}
		}
		if len(b) > 0 {
			full <- b
		}
	}()
	for b := range full {
		for i := range b {
			pass(&b[i])
		}
		select {
		case free <- b[:0]:
		default:
		}
	}
	for _, src := range srcs {
		a.readFailed(src.r, r)
	}
}

// surveyGroups deals the segments over two groups of about as many
// hits, for the conduct checks' first passes to run at once: nil when
// they cannot (a file's hits in two segments), or need not (one core,
// one segment).
func (a *Audit) surveyGroups() [][]int {
	n := a.hits.Segments()
	if a.filesSpan || n < 2 || runtime.GOMAXPROCS(0) < 2 {
		return nil
	}
	segs := make([]int, n)
	for i := range segs {
		segs[i] = i
	}
	hitsOf := func(seg int) int64 {
		if seg < len(a.segHits) {
			return a.segHits[seg]
		}
		return 0
	}
	// The largest first, each to the group with fewer hits so far.
	slices.SortStableFunc(segs, func(x, y int) int { return cmp.Compare(hitsOf(y), hitsOf(x)) })
	groups := make([][]int, 2)
	var sum [2]int64
	for _, seg := range segs {
		g := 0
		if sum[1] < sum[0] {
			g = 1
		}
		groups[g] = append(groups[g], seg)
		sum[g] += hitsOf(seg)
	}
	if sum[0] == 0 || sum[1] == 0 {
		return nil
	}
	return groups
}

// surveyAtOnce runs the conduct checks' first passes (Measure, then
// Anchor) over the genuine addresses' hits, each group of segments in a
// goroutine of its own (conduct.Survey): no file has hits in two groups.
func (a *Audit) surveyAtOnce(c *conduct.Checker, genuine []bool, groups [][]int, r *Report) {
	surveys := make([]*conduct.Survey, len(groups))
	srcs := make([][2][]*hitSource, len(groups))
	for g, segs := range groups {
		surveys[g] = c.NewSurvey()
		for p := range srcs[g] {
			for _, seg := range segs {
				srcs[g][p] = append(srcs[g][p], a.source(seg, genuine, nil, true))
			}
		}
	}
	var wg sync.WaitGroup
	for g, sv := range surveys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var h conduct.Hit
			for p, pass := range []func(*conduct.Hit){sv.Measure, sv.Anchor} {
				for _, src := range srcs[g][p] {
					for src.Next(&h) {
						pass(&h)
					}
				}
			}
		}()
	}
	wg.Wait()
	c.Join(surveys...)
	for _, g := range srcs {
		for _, p := range g {
			for _, src := range p {
				a.readFailed(src.r, r)
			}
		}
	}
}

// readFailed adds a warning when the hits could not be read back whole.
func (a *Audit) readFailed(rd *hitstore.Reader, r *Report) {
	if err := rd.Err(); err != nil {
		w := fmt.Sprintf("the conduct checks are incomplete: %v", err)
		if !slices.Contains(r.Warnings, w) {
			r.Warnings = append(r.Warnings, w)
		}
	}
}

// hitSource gives the kept hits of one input whose address is genuine,
// for the conduct checks.
type hitSource struct {
	a          *Audit
	r          *hitstore.Reader
	genuine    []bool
	names      map[uint32]string
	skipTarget bool
	buf        hitstore.Hit
}

func (a *Audit) source(seg int, genuine []bool, names map[uint32]string, skipTarget bool) *hitSource {
	return &hitSource{a: a, r: a.hits.Reader(seg), genuine: genuine, names: names, skipTarget: skipTarget}
}

// Only gives the hits of the sites keep holds alone, leaving the others'
// undecoded (conduct.SiteSource).
func (s *hitSource) Only(keep func(site string) bool) {
	memo := make([]int8, s.a.sites.count()+1) // 0 not asked, 1 kept, 2 left out
	s.r.SkipSite = func(id uint32) bool {
		if int(id) >= len(memo) {
			return !keep(s.a.sites.name(id))
		}
		if memo[id] == 0 {
			memo[id] = 2
			if keep(s.a.sites.name(id)) {
				memo[id] = 1
			}
		}
		return memo[id] == 2
	}
}

func (s *hitSource) Next(h *conduct.Hit) bool {
	for s.r.Next(&s.buf, s.skipTarget) {
		if !s.genuine[s.buf.Addr] {
			continue
		}
		if s.skipTarget {
			// Measure and Anchor read the times, sites and files only.
			b := &s.buf
			*h = conduct.Hit{Site: s.a.sites.name(b.Site), SiteID: b.Site, File: s.a.files.name(b.File), Line: b.Line,
				Time: b.Time, Resolution: b.Resolution, Duration: b.Duration, HasDuration: b.HasDuration, StartLogged: b.StartLogged}
			return true
		}
		*h = s.a.conductHit(&s.buf, s.names)
		return true
	}
	return false
}

// conductHit expands a kept hit for the conduct checks; names caches the
// names of the addresses.
func (a *Audit) conductHit(h *hitstore.Hit, names map[uint32]string) conduct.Hit {
	ip, ok := names[h.Addr]
	if !ok {
		ip = a.name(a.addrs.at(int(h.Addr)))
		names[h.Addr] = ip
	}
	pair := a.pairs.name(h.Pair)
	return conduct.Hit{
		Site: a.sites.name(h.Site), SiteID: h.Site, File: a.files.name(h.File), Line: h.Line, IP: ip, Target: h.Target,
		RemoteUser: a.users.name(pair.user), RetryAfter: a.retries.name(pair.retry), Status: h.Status,
		Time: h.Time, Resolution: h.Resolution, Duration: h.Duration, HasDuration: h.HasDuration, StartLogged: h.StartLogged,
	}
}

// ipOrder returns the entries in report order: addresses numerically,
// IPv4 first, then whatever is not an address, as text.
func (a *clients) ipOrder() []uint32 { return a.ipOrderBy(true) }

// ipOrderBy is ipOrder; byKey lets it sort most plain IPv4 addresses by
// a key (ipOrderByKey), as it does unless tests compare the two.
func (a *clients) ipOrderBy(byKey bool) []uint32 {
	n := a.addrs.len()
	// Clients logged with a zone are addresses too. Two clients that are
	// no address compare alike when their texts differ only in bytes
	// that are not UTF-8: then the order is the one a sort of every
	// entry gives.
	zoned := map[uint32]netip.Addr{}
	ties := false
	for i := 0; i < n; i++ {
		if e := a.addrs.at(i); e.kind == clientRaw {
			if addr, ok := a.addrOf(e); ok {
				zoned[uint32(i)] = addr
			} else if !utf8.ValidString(a.raws[e.raw]) {
				ties = true
			}
		}
	}
	key := func(i uint32) (netip.Addr, bool) {
		e := a.addrs.at(int(i))
		switch e.kind {
		case clientProxy:
			return e.proxyAddr(), true
		case clientRaw:
			addr, ok := zoned[i]
			return addr, ok
		}
		return a.addrOf(e)
	}
	plain := func(e *addrEntry) bool { return e.kind == clientV4 || e.kind == clientV6 }
	compare := func(x, y uint32) int {
		if ex, ey := a.addrs.at(int(x)), a.addrs.at(int(y)); plain(ex) && plain(ey) {
			// netip.Addr.Compare without building the addresses: IPv4
			// first, then the 16 bytes.
			if ex.kind != ey.kind {
				return cmp.Compare(ex.kind, ey.kind)
			}
			return bytes.Compare(ex.ip[:], ey.ip[:])
		}
		ax, okx := key(x)
		ay, oky := key(y)
		switch {
		case okx && oky:
			if c := ax.Compare(ay); c != 0 {
				return c
			}
			// An address as a client, then as a proxy.
			return cmp.Compare(a.addrs.at(int(x)).kind, a.addrs.at(int(y)).kind)
		case okx:
			return -1
		case oky:
			return 1
		}
		return strings.Compare(validUTF8(a.raws[a.addrs.at(int(x)).raw]), validUTF8(a.raws[a.addrs.at(int(y)).raw]))
	}
	if byKey && !ties {
		if order := a.ipOrderByKey(compare); order != nil {
			return order
		}
	}
	order := make([]uint32, n)
	for i := range order {
		order[i] = uint32(i)
	}
	slices.SortFunc(order, compare)
	return order
}

// ipOrderByKey is ipOrder for an audit whose entries are mostly plain
// IPv4 addresses (a botnet's): those are sorted by a key, their address
// and entry number, without reading the entries again, and merged with
// the others, sorted by compare. It returns nil for other audits. The
// keys are let go once the order is made: the report keeps the order
// only.
func (a *clients) ipOrderByKey(compare func(x, y uint32) int) []uint32 {
	n := a.addrs.len()
	if n == 0 {
		return nil
	}
	keys := make([]uint64, 0, n)
	var others []uint32
	for i := 0; i < n; i++ {
		if e := a.addrs.at(i); e.kind == clientV4 {
			keys = append(keys, uint64(binary.BigEndian.Uint32(e.ip[12:]))<<32|uint64(i))
		} else if others = append(others, uint32(i)); len(others) > n/2 {
			return nil
		}
	}
	slices.Sort(keys)
	slices.SortFunc(others, compare)
	order := make([]uint32, 0, n)
	for len(keys) > 0 || len(others) > 0 {
		if len(keys) > 0 && (len(others) == 0 || compare(uint32(keys[0]), others[0]) < 0) {
			order, keys = append(order, uint32(keys[0])), keys[1:]
		} else {
			order, others = append(order, others[0]), others[1:]
		}
	}
	return order
}

// ipView makes a report's addresses from the audit, one at a time.
type ipView struct {
	c       clients
	results map[netip.Addr]verify.Result
	order   []uint32
	crawler string
	proxies *proxy.Set
}

// all yields the addresses in report order.
// all yields the addresses in report order. Past a few thousand, they
// are made in a goroutine of their own, a few batches ahead of the
// caller writing them out.
func (v *ipView) all() iter.Seq[IPReport] {
	return func(yield func(IPReport) bool) {
		if len(v.order) < 4*ipBatch {
			for _, i := range v.order {
				if !yield(v.report(i)) {
					return
				}
			}
			return
		}
		full := make(chan []IPReport, 2)
		free := make(chan []IPReport, 3)
		done := make(chan struct{})
		go func() {
			defer close(full)
			for order := v.order; len(order) > 0; {
				var b []IPReport
				select {
				case b = <-free:
				default:
					b = make([]IPReport, 0, ipBatch)
				}
				for _, i := range order[:min(ipBatch, len(order))] {
					b = append(b, v.report(i))
				}
				order = order[len(b):]
				select {
				case full <- b:
				case <-done:
					return
				}
			}
		}()
		defer func() {
			close(done)
			for range full {
			}
		}()
		for b := range full {
			for _, ip := range b {
				if !yield(ip) {
					return
				}
			}
			clear(b)
			select {
			case free <- b[:0]:
			default:
			}
		}
	}
}

// ipBatch is how many addresses all makes at once ahead of its caller.
const ipBatch = 512

// report makes the report entry of entry i.
func (v *ipView) report(i uint32) IPReport {
	a := &v.c
	e := a.addrs.at(int(i))
	ip := IPReport{
		IP:         validUTF8(a.name(e)),
		Crawler:    v.crawler,
		Hits:       e.hits,
		PTR:        []string{},
		Forward:    []string{},
		UserAgents: []string{},
	}
	if e.timed {
		ip.FirstSeen = time.Unix(e.firstSec, int64(e.firstNsec)).UTC()
		ip.LastSeen = time.Unix(e.lastSec, int64(e.lastNsec)).UTC()
	}
	if e.ua != 0 {
		uas := []string{a.uas.name(e.ua)}
		for _, id := range a.extraUAs[i] {
			uas = append(uas, a.uas.name(id))
		}
		slices.Sort(uas)
		for _, ua := range uas {
			ip.UserAgents = append(ip.UserAgents, validUTF8(ua))
		}
	}
	_, isAddr := a.addrOf(e)
	res, ok := a.result(e, v.results)
	switch {
	case e.kind == clientProxy:
		ip.Verdict, ip.Method, ip.Reason = verify.Unverified, "", verify.ReasonProxy
		ip.Proxy = v.proxyName(e.proxyAddr())
	case !isAddr:
		ip.Verdict, ip.Method, ip.Reason = verify.Unverified, "", verify.ReasonNotAnAddress
	case !ok:
		ip.Verdict, ip.Method, ip.Reason = verify.Unverified, "", verify.ReasonNotChecked
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
		ip.Proxy = res.Proxy
		ip.DNS = dnsEvidence(res.DNS)
	}
	return ip
}

// proxyName names the trusted proxy a forwarded hits without a usable
// real client: the --trusted-proxy value that holds it, or --trust-xff.
func (v *ipView) proxyName(a netip.Addr) string {
	if name, ok := v.proxies.Proxy(a); ok {
		return name
	}
	return "--trust-xff"
}

// eachHit calls f with every kept hit, in the order they were added, and
// the verdict results (as given to [Audit.Report]) give its address. It
// reports false when the hits could not be read back whole.
func (a *Audit) eachHit(results map[netip.Addr]verify.Result, f func(conduct.Hit, verify.Verdict)) bool {
	names := map[uint32]string{}
	var h hitstore.Hit
	for seg := range a.hits.Segments() {
		rd := a.hits.Reader(seg)
		for rd.Next(&h, false) {
			f(a.conductHit(&h, names), a.verdictOf(a.addrs.at(int(h.Addr)), results))
		}
		if rd.Err() != nil {
			return false
		}
	}
	return true
}

// Close lets go of the kept hits and removes their temporary file: the
// audit's Report and Snapshot have nothing to check afterwards. A report
// made before stays whole.
func (a *Audit) Close() error { return a.hits.Close() }

// coverage returns the spans of time the inputs cover. Claimed hits
// before --since are not read, so an input, as far as the audit knows,
// begins there.
func (a *Audit) coverage() conduct.Coverage {
	c := make(conduct.Coverage, 0, len(a.inputs))
	for i, in := range a.inputs {
		since := a.Since
		if i < len(a.inputSince) && !a.inputSince[i].IsZero() {
			since = a.inputSince[i]
		}
		first := in.FirstTime
		if !first.IsZero() && !since.IsZero() && first.Before(since) {
			first = since
		}
		c = append(c, conduct.LogSpan{
			File: in.File, Site: in.Site, HostLogged: in.HostLogged,
			First: first, Last: in.LastTime, Cut: in.Error != "",
		})
	}
	return c
}

// Snapshot returns what the conduct checks need of the audit, to be kept
// or merged with other servers' audits: the hits of the addresses that
// results (as given to [Audit.Report]) makes genuine, and the spans of
// time the inputs cover. Its Check gives the violations and sites of
// Report (but for ClaimedHits).
func (a *Audit) Snapshot(results map[netip.Addr]verify.Result) conduct.Snapshot {
	s := conduct.Snapshot{Hits: []conduct.Hit{}, Logs: a.coverage()}
	a.eachHit(results, func(h conduct.Hit, v verify.Verdict) {
		if v == verify.Genuine {
			s.Hits = append(s.Hits, h)
		}
	})
	return s
}

// validUTF8 replaces bytes that are not UTF-8 so that every output format
// carries text (YAML would otherwise write binary).
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
