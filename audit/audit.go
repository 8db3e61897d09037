package audit

import (
	"bytes"
	"cmp"
	"iter"
	"math"
	"net/netip"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lohisoft/lohibot-audit/conduct"
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
// and per site, and the counts of each input. Add records in any order;
// then ask for the Report. The zero Audit is ready to use.
//
// Memory: an address costs about 75 bytes (a 64-byte entry with its
// counts and first and last times, and its place in an index), and up to
// ten user agents, each cut at 256 bytes and kept once however many
// addresses send it. A hit is kept, in 40 bytes and the bytes of its path,
// only while its address may still be genuine, since only the genuine
// crawler's hits are checked for conduct; the hits of an address settled
// as spoofed without DNS are only counted. Sites, files, remote users and
// Retry-After values are kept once each.
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
	byAddr   addrIndex
	byRaw    map[string]uint32 // clients that are no address, or have a zone
	settleIx map[resultKey]uint32

	hits                         chunked[auditHit]
	far                          map[int]farHit // by hit index
	epoch                        time.Time      // the first kept hit's time
	hasEpoch                     bool
	text                         textArena // request targets of the kept hits
	users, retries, sites, files interner
	pairs                        table[hitPair]
	siteHits                     []int64 // claimed hits per site, by site id

	inputs   []InputReport
	examples []Malformed
	formats  []string
	warnings []string
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

// auditHit is a [conduct.Hit] in 40 bytes, less its client.
// What does not fit (a time more than 292 years from the audit's first, a
// line past 2^40, a duration that is not a whole number of microseconds
// below 35 minutes, an odd resolution or status, more than 65,536 files)
// is kept whole in Audit.far.
type auditHit struct {
	t       int64   // logged time, nanoseconds since Audit.epoch
	target  textRef // request target, in Audit.text
	packed  uint64  // line<<24 | file<<8 | resolution<<4 | flags
	durUsec int32   // duration, microseconds
	addr    uint32  // index into Audit.addrs
	site    uint32  // id in Audit.sites
	extra   uint32  // pair<<10 | status; pair is the id of the (remote user, Retry-After) pair, 0 for neither
}

// auditHit.packed's flags
const (
	hitTimed       = 1 << iota // the log recorded a time
	hitDur                     // the log recorded a duration
	hitStartLogged             // the logged time is the start (else the end)
	hitFar                     // all but the flags, addr, site and target are in Audit.far
)

// farHit holds a hit that did not fit in an auditHit.
type farHit struct {
	logged     time.Time
	line       int64
	file, pair uint32
	dur, res   time.Duration
	status     int
}

// hitResolutions are the resolutions a log reader gives times, coarsest
// first (auditHit.res indexes them); an audit caps them at a second.
var hitResolutions = [...]time.Duration{
	0, time.Second, 100 * time.Millisecond, 10 * time.Millisecond, time.Millisecond,
	100 * time.Microsecond, 10 * time.Microsecond, time.Microsecond,
	100 * time.Nanosecond, 10 * time.Nanosecond, time.Nanosecond,
}

// hitPair is a remote user and a Retry-After value, as interner ids.
type hitPair struct{ user, retry uint32 }

// Add takes one record from a log reader: a claimed hit, or a request from
// a listed address without the product token (only counted). A record has
// a time when its Resolution is above zero, as the log reader sets it.
// Its strings are copied as far as they are kept: the record may be
// reused.
func (a *Audit) Add(rec *parse.Record) {
	if !rec.Claimed {
		a.summary.UnclaimedHit++
		return
	}
	timed := rec.Resolution > 0
	if (!a.Since.IsZero() || !a.Until.IsZero()) &&
		(!timed || (!a.Since.IsZero() && rec.Start.Before(a.Since)) || (!a.Until.IsZero() && !rec.Start.Before(a.Until))) {
		a.summary.FilteredOut++
		return
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
	site := a.sites.id(rec.Host)
	for int(site) >= len(a.siteHits) {
		a.siteHits = append(a.siteHits, 0)
	}
	a.siteHits[site]++
	if e.settled != 0 && a.settled[e.settled-1].Verdict != verify.Genuine && !a.KeepAll {
		return
	}
	h := auditHit{target: a.text.add(rec.Target), addr: i, site: site}
	f := farHit{line: rec.Line, file: a.files.id(rec.File), status: rec.Status, dur: rec.Duration}
	if rec.RemoteUser != "" || rec.RetryAfter != "" {
		f.pair = a.pairs.id(hitPair{a.users.id(rec.RemoteUser), a.retries.id(rec.RetryAfter)})
	}
	var flags uint64
	fits := true
	if timed {
		flags |= hitTimed
		f.logged, f.res = rec.Time, min(rec.Resolution, time.Second)
		if !a.hasEpoch {
			a.epoch, a.hasEpoch = rec.Time, true
		}
		h.t = int64(rec.Time.Sub(a.epoch))
		fits = a.epoch.Add(time.Duration(h.t)).Equal(rec.Time) // not cut at ±292 years
		if rec.HasDuration && rec.Start.Equal(rec.Time) {
			flags |= hitStartLogged
		}
	}
	if rec.HasDuration {
		flags |= hitDur
	}
	res := slices.Index(hitResolutions[:], f.res)
	usec := rec.Duration / time.Microsecond
	if fits && f.line >= 0 && f.line < 1<<40 && f.file < 1<<16 && res >= 0 && f.status >= 0 && f.status < 1<<10 &&
		f.pair < 1<<22 && rec.Duration%time.Microsecond == 0 && usec >= math.MinInt32 && usec <= math.MaxInt32 {
		h.packed = uint64(f.line)<<24 | uint64(f.file)<<8 | uint64(res)<<4 | flags
		h.durUsec, h.extra = int32(usec), f.pair<<10|uint32(f.status)
	} else {
		h.packed = flags | hitFar
		if a.far == nil {
			a.far = map[int]farHit{}
		}
		a.far[a.hits.len()] = f
	}
	a.hits.push(h)
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
		if i, _, ok := a.byAddr.lookup(k, &a.addrs); ok {
			return i
		}
		e := addrEntry{ip: k.ip, kind: clientV6}
		if k.v4 {
			e.kind = clientV4
		}
		i := uint32(a.addrs.push(e))
		a.byAddr.insert(k, i, &a.addrs)
		a.settle(i, c)
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
	a.text.seal()
	r := &Report{
		Tool:              "lohibot-audit",
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
	r.lazy = &ipView{c: a.clients, results: results, order: a.ipOrder(), crawler: a.Crawler, proxies: a.Proxies}

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
	for i := range r.Violations {
		r.Violations[i].Crawler = a.Crawler
	}
	r.Summary.Violations = len(r.Violations)
	return r
}

// checkConduct runs the conduct checks on the genuine addresses' hits, one
// site at a time in the order of their names, adds the violations to r
// and fills in the site reports (r.Sites[pos[site id]]).
func (a *Audit) checkConduct(genuine []bool, cfg conduct.Config, r *Report, pos []int32) {
	// Counting sort of the genuine hits by site: start[id] is where the
	// site's hits begin in order.
	start := make([]int, a.sites.count()+2)
	total := 0
	for i := 0; i < a.hits.len(); i++ {
		if h := a.hits.at(i); genuine[h.addr] {
			start[h.site+1]++
			total++
		}
	}
	if total == 0 {
		return
	}
	for id := 1; id < len(start); id++ {
		start[id] += start[id-1]
	}
	order := make([]uint32, total)
	next := slices.Clone(start)
	names := map[uint32]string{}
	c := conduct.NewChecker(cfg)
	for i := 0; i < a.hits.len(); i++ {
		h := a.hits.at(i)
		if !genuine[h.addr] {
			continue
		}
		order[next[h.site]] = uint32(i)
		next[h.site]++
		hit := a.conductHit(i, names)
		c.Measure(&hit)
	}
	for _, i := range order {
		hit := a.conductHit(int(i), names)
		c.Anchor(&hit)
	}
	ids := make([]uint32, 0, a.sites.count())
	for id := range a.sites.count() + 1 {
		if start[id+1] > start[id] {
			ids = append(ids, uint32(id))
		}
	}
	slices.SortFunc(ids, func(x, y uint32) int { return strings.Compare(a.sites.name(x), a.sites.name(y)) })
	skips := map[string][]string{} // sites share their lists of skipped checks
	var hits []conduct.Hit
	for _, id := range ids {
		hits = hits[:0]
		for _, i := range order[start[id]:start[id+1]] {
			hits = append(hits, a.conductHit(int(i), names))
		}
		vs, rep := c.CheckSite(a.sites.name(id), hits)
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
		for _, v := range vs {
			v.Path, v.Detail, v.RobotsRule = validUTF8(v.Path), validUTF8(v.Detail), validUTF8(v.RobotsRule)
			r.Violations = append(r.Violations, v)
		}
		s := &r.Sites[pos[id]]
		s.Pages, s.RobotsFetches, s.ChecksSkipped, s.Violations = rep.Pages, rep.RobotsFetches, rep.ChecksSkipped, rep.Violations
		s.NotPromised = rep.NotPromised
	}
}

// conductHit expands kept hit i for the conduct checks; names caches the
// names of the addresses.
func (a *Audit) conductHit(i int, names map[uint32]string) conduct.Hit {
	h := a.hits.at(i)
	ip, ok := names[h.addr]
	if !ok {
		ip = a.name(a.addrs.at(int(h.addr)))
		names[h.addr] = ip
	}
	f := farHit{
		logged: a.epoch.Add(time.Duration(h.t)), line: int64(h.packed >> 24), file: uint32(h.packed >> 8 & (1<<16 - 1)),
		res: hitResolutions[h.packed>>4&15], dur: time.Duration(h.durUsec) * time.Microsecond,
		pair: h.extra >> 10, status: int(h.extra & (1<<10 - 1)),
	}
	if h.packed&hitFar != 0 {
		f = a.far[i]
	}
	pair := a.pairs.name(f.pair)
	hit := conduct.Hit{
		Site: a.sites.name(h.site), File: a.files.name(f.file), Line: f.line, IP: ip, Target: a.text.get(h.target),
		RemoteUser: a.users.name(pair.user), RetryAfter: a.retries.name(pair.retry), Status: f.status,
		Resolution: f.res, Duration: f.dur, HasDuration: h.packed&hitDur != 0, StartLogged: h.packed&hitStartLogged != 0,
	}
	if h.packed&hitTimed != 0 {
		hit.Time = f.logged.UTC()
	}
	return hit
}

// ipOrder returns the entries in report order: addresses numerically,
// IPv4 first, then whatever is not an address, as text.
func (a *clients) ipOrder() []uint32 {
	n := a.addrs.len()
	order := make([]uint32, n)
	for i := range order {
		order[i] = uint32(i)
	}
	// Clients logged with a zone are addresses too.
	zoned := map[uint32]netip.Addr{}
	for i := 0; i < n; i++ {
		if e := a.addrs.at(i); e.kind == clientRaw {
			if addr, ok := a.addrOf(e); ok {
				zoned[uint32(i)] = addr
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
	slices.SortFunc(order, func(x, y uint32) int {
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
	})
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
func (v *ipView) all() iter.Seq[IPReport] {
	return func(yield func(IPReport) bool) {
		for _, i := range v.order {
			if !yield(v.report(i)) {
				return
			}
		}
	}
}

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
// the verdict results (as given to [Audit.Report]) give its address.
func (a *Audit) eachHit(results map[netip.Addr]verify.Result, f func(conduct.Hit, verify.Verdict)) {
	names := map[uint32]string{}
	for i := 0; i < a.hits.len(); i++ {
		h := a.hits.at(i)
		f(a.conductHit(i, names), a.verdictOf(a.addrs.at(int(h.addr)), results))
	}
}

// coverage returns the spans of time the inputs cover. Claimed hits
// before --since are not read, so an input, as far as the audit knows,
// begins there.
func (a *Audit) coverage() conduct.Coverage {
	c := make(conduct.Coverage, 0, len(a.inputs))
	for _, in := range a.inputs {
		first := in.FirstTime
		if !first.IsZero() && !a.Since.IsZero() && first.Before(a.Since) {
			first = a.Since
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
