package audit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/audit/timeline"
	"github.com/lohisoft/lohibot-audit/conduct"
	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/internal/aside"
	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/lohisoft/lohibot-audit/proxy"
	"github.com/lohisoft/lohibot-audit/robots"
	"github.com/lohisoft/lohibot-audit/verify"
)

// Input is one log for [Run] to read.
type Input struct {
	// Name is how the report names the input: its path, or "-".
	Name string
	// Site is the site of its lines that record no virtual host.
	Site string
	// Open opens the input and gives its size in bytes, or -1 when it is
	// not known (a pipe). An error is reported as the input's, and the
	// other inputs are still read; Open should give up when ctx is
	// cancelled.
	Open func(ctx context.Context) (r io.ReadCloser, size int64, err error)
}

// Classifier gives the verdicts of the addresses that claimed to be a
// crawler. crawler is the index in Options.Subjects of the crawler the
// addresses claimed. The map holds each address as given; an address
// missing from it is unverified (not checked).
type Classifier interface {
	Classify(ctx context.Context, crawler int, addrs []netip.Addr) map[netip.Addr]verify.Result
}

// Warner is a [Classifier] or [RobotsSet] that has warnings for the
// report: asked once its work for the run is done.
type Warner interface {
	Warnings() []string
}

// RobotsHistories is a [RobotsSet] that holds dated robots.txt versions
// for some sites: History returns them, or nil for a site whose
// robots.txt is a single one.
type RobotsHistories interface {
	History(site string) *robots.History
}

// RobotsSet holds the robots.txt files in force, per site.
type RobotsSet interface {
	// For returns the robots.txt in force for site, or nil for none.
	For(site string) *robots.Robots
	// Warnings are said once the logs are read.
	Warnings() []string
	// UnknownSiteWarnings says which robots.txt were given for sites
	// that are not among sites, the sites of the audit, sorted.
	UnknownSiteWarnings(sites []string) []string
}

// Progress is told as each input is read.
type Progress interface {
	// Start is called as an input begins to be read; r says how far it
	// got, size is as Input.Open gave it.
	Start(name string, size int64, r *parse.Reader)
	// Done is called when the input is read, or its reading given up.
	Done()
}

// Phase names a step of [Run].
type Phase string

// The phases of a run, in order.
const (
	PhaseRead    Phase = "read"    // reading the logs
	PhaseDNS     Phase = "dns"     // verifying addresses
	PhaseConduct Phase = "conduct" // conduct checks and building the report
)

// Options is what [Run] reads, how, and which crawlers it audits. The
// zero value of each field but Inputs and Subjects is a valid choice, as
// said per field.
type Options struct {
	Inputs []Input
	// Format is the log format of every input; nil detects each one's.
	Format *parse.Format
	// TrustXFF trusts every connecting address as a proxy of the
	// operator's: the client is read from the real-client header the
	// format logs (parse.Options.TrustXFF).
	TrustXFF bool
	// Trust are the CDN edges in force and the proxies --trusted-proxy
	// names (parse.Options.Trust); the audits name proxies by it, and it
	// dates the CDN lists in the warnings. nil: the built-in CDN edges,
	// nothing trusted.
	Trust *proxy.Set
	// Now is the clock (the age of the CDN lists); nil: time.Now.
	Now func() time.Time
	// Location is the zone of logged times without a UTC offset (nil:
	// the machine's), and ZoneName names it in the report.
	Location *time.Location
	ZoneName string
	// MaxDict caps a decompressor's dictionary or window (0:
	// parse.DefaultMaxDict).
	MaxDict int64
	// Subjects are the crawlers audited, in one pass over the inputs
	// (SPEC §10), one or more: a claimed hit goes to the audit of each
	// subject whose tokens it carries, a request without a token from a
	// listed address to that of each subject whose list holds it. Each
	// has its own audit, verdicts (Classifier, by its index) and conduct.
	// With none, nothing is claimed: the report counts the inputs only.
	Subjects []Subject
	// Named makes the report name the crawlers it audits: summary.crawlers
	// and the crawler of each address, site and violation (SPEC §10), as
	// `--crawler` asks. Without it the report is that of a run without
	// `--crawler`, which names no crawler: Subjects then holds one (with
	// several, the report names them all the same).
	Named bool
	// Classifier gives the verdicts; nil leaves every address unverified
	// (not checked). A Classifier that is a [Warner] adds its warnings.
	Classifier Classifier
	// Robots, when set, gives the robots.txt per site and its warnings.
	Robots RobotsSet
	// ReadWarnings, when set, is called once the inputs are read, with
	// their reports in input order, and gives warnings for the report
	// (such as site names chosen for inputs that log no virtual host).
	ReadWarnings func(inputs []InputReport) []string
	// Timelines, when set, is filled as the audit streams with every
	// timed claimed hit and its verdict, for the HTML report to draw: a
	// timeline per site and crawler, each with its crawler's page budget
	// (its Conduct), under its name when the report names the crawlers.
	Timelines *timeline.Set
	// Observe, when set, is called once per claimed hit kept by the
	// audit (all of them: Observe makes the audit keep the hits of
	// addresses settled as spoofed too), in input order, with the site,
	// the subject's index, the hit and its final verdict, before the
	// conduct checks.
	Observe func(site string, crawler int, h conduct.Hit, v verify.Verdict)
	// Progress, when set, is told as each input is read.
	Progress Progress
	// OnPhase, when set, is called as the run enters each phase.
	OnPhase func(Phase)
	// Snapshot, when set, is written as the run goes (SPEC §14): what
	// the audits took in of each input, the warnings about the inputs,
	// and the verdicts. It is whole once the verdicts are made; Run does
	// not close the file it goes to.
	Snapshot *SnapshotWriter
}

// Subject is one crawler a run audits: who it is, its IP list in force,
// the audit that keeps its claimed hits and what its conduct is held to.
type Subject struct {
	// Profile is the crawler: its name in a report that names crawlers,
	// the User-Agent tokens that claim it, and whether it promises to obey
	// robots.txt.
	Profile *crawler.Profile
	// List is its IP list in force (nil: none): requests from its
	// addresses without a token are counted, and the report names the
	// list's source.
	List *verify.IPList
	// Audit holds its claimed hits (its Since, Until and Settled say
	// which are kept and which verdicts need no DNS); nil makes a new
	// one.
	Audit *Audit
	// Conduct is what it is held to. Conduct.Robots, when nil, is taken
	// from Options.Robots when the crawler promises to obey robots.txt.
	Conduct conduct.Config
}

// InputError is the error of a run whose inputs could not all be read
// whole: the report holds everything that was read, and says why in its
// warnings and in each input's Error.
type InputError struct {
	// Inputs names the inputs that were not read whole.
	Inputs []string
}

func (e *InputError) Error() string {
	return fmt.Sprintf("%d of the inputs could not be read whole: %s", len(e.Inputs), strings.Join(e.Inputs, ", "))
}

// Run reads the inputs, one after another, into the audits of the
// subjects, asks for the verdicts of the addresses that claimed to be
// each crawler, checks each genuine crawler's conduct and returns the
// report. Version and GeneratedAt are left for the caller. Once the
// report is made, Run closes the audits (their kept hits are gone).
//
// When an input cannot be read whole, Run reads the others and returns
// the report with an [*InputError]. When ctx is cancelled, Run returns
// ctx's error as soon as the step under way notices (a reader stuck in
// the kernel is left behind), and no report.
func Run(ctx context.Context, o Options) (*Report, error) {
	set := startRun(&o)
	au := set.audits[0]
	var failed []string
	first := len(au.inputs)
	o.phase(PhaseRead)
	set.reading = true
	for _, in := range o.Inputs {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !readInput(ctx, &o, in, set) {
			failed = append(failed, in.Name)
		}
	}
	set.reading = false
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	return finishRun(ctx, &o, set, au.inputs[first:], failed)
}

// phase tells o.OnPhase that the run enters phase p.
func (o *Options) phase(p Phase) {
	if o.OnPhase != nil {
		o.OnPhase(p)
	}
}

// startRun readies the audits of a run, and its snapshot.
func startRun(o *Options) *auditSet {
	if o.Timelines != nil {
		o.Observe = observeTimelines(o)
	}
	set := newAuditSet(o)
	if o.Snapshot != nil {
		set.snap = o.Snapshot
		set.snap.begin(set)
	}
	return set
}

// finishRun makes the report of a run whose inputs are read (read are
// their reports, failed names those not read whole): the warnings about
// the inputs, the verdicts, the conduct checks.
func finishRun(ctx context.Context, o *Options, set *auditSet, read []InputReport, failed []string) (*Report, error) {
	au := set.audits[0]
	var readWarnings []string
	if o.ReadWarnings != nil {
		readWarnings = o.ReadWarnings(read)
		for _, w := range readWarnings {
			au.Warn(w)
		}
	}
	if set.snap != nil {
		set.snap.readWarnings(readWarnings)
	}
	if o.Robots != nil {
		for _, w := range o.Robots.Warnings() {
			au.Warn(w)
		}
	}

	o.phase(PhaseDNS)
	results := make([]map[netip.Addr]verify.Result, len(set.audits))
	var dnsWarnings []string
	if o.Classifier != nil {
		for i, a := range set.audits {
			results[i] = o.Classifier.Classify(ctx, i, a.Addresses())
		}
		// A cancelled lookup is unverified for want of an answer, not for
		// want of DNS: such results must not be reported as if complete.
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if w, ok := o.Classifier.(Warner); ok {
			dnsWarnings = w.Warnings()
			for _, s := range dnsWarnings {
				au.Warn(s)
			}
		}
	}
	if set.snap != nil {
		set.snap.verdicts(set, results, dnsWarnings)
		set.snap.finish() // its error is Close's
	}
	if o.Observe != nil {
		for i, a := range set.audits {
			a.eachHit(results[i], func(h conduct.Hit, v verify.Verdict) { o.Observe(h.Site, i, h, v) })
		}
	}

	// The conduct checks and the report of a long audit take a while and
	// cannot be stopped midway: an interrupted run leaves them behind.
	rep, err := aside.Do(ctx, func() *Report {
		o.phase(PhaseConduct)
		return set.report(o, results)
	})
	if err != nil {
		return nil, err // the checks left behind still read the hits
	}
	set.close()
	rep.Summary.IPListSource = set.listSource()
	rep.IPLists = set.listEvidence()
	if o.Robots != nil {
		rep.Warnings = append(rep.Warnings, o.Robots.UnknownSiteWarnings(reportSites(rep))...)
	}
	if len(failed) > 0 {
		return rep, &InputError{Inputs: failed}
	}
	return rep, nil
}

// observeTimelines readies o.Timelines for the subjects (their names when
// the report names them, their page budgets) and returns the Observe that
// fills it, beside o.Observe.
func observeTimelines(o *Options) func(string, int, conduct.Hit, verify.Verdict) {
	tl := o.Timelines
	named := o.Named || len(o.Subjects) > 1
	budgets := map[string]timeline.Budget{}
	tl.Crawlers = nil
	for _, s := range o.Subjects {
		name := ""
		if named {
			name = s.name()
			tl.Crawlers = append(tl.Crawlers, name)
		}
		budgets[name] = timeline.Budget{Pages: s.Conduct.Budget, Window: s.Conduct.BudgetWindow}
	}
	tl.Budget = func(name string) timeline.Budget { return budgets[name] }
	fill, also := tl.Observer(), o.Observe
	return func(site string, crawler int, h conduct.Hit, v verify.Verdict) {
		fill(site, crawler, h, v)
		if also != nil {
			also(site, crawler, h, v)
		}
	}
}

// readInput reads one input into the audit. It returns false when the
// input could not be read whole, or its format could not be detected (the
// audit keeps what was read, and the reason is a warning and the input's
// Error), or when ctx was cancelled while reading (the caller checks
// ctx).
func readInput(ctx context.Context, o *Options, in Input, au *auditSet) bool {
	failed := func(msg string) bool {
		au.Warn(msg)
		au.AddInput(InputReport{File: in.Name, Error: msg}, nil)
		return false
	}
	src, size, err := in.Open(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return false
		}
		return failed(fmt.Sprintf("cannot read %s: %v", in.Name, err))
	}
	defer src.Close()
	r := parse.NewReader(src, parse.Options{Name: in.Name, Format: o.Format, Site: in.Site, TrustXFF: o.TrustXFF, Trust: o.Trust, Listed: au.listed, Claims: au.claims,
		Location: o.Location, MaxDict: o.MaxDict})
	// Stop, unlike a check between records, ends a read that finds
	// nothing to keep, or waits on a pipe, as soon as the run is cancelled.
	stop := context.AfterFunc(ctx, r.Stop)
	defer stop()
	if o.Progress != nil {
		o.Progress.Start(in.Name, size, r)
		defer o.Progress.Done()
	}
	// The reader runs aside, so that an interrupted run returns at once
	// even when the reader is slow to notice Stop; it is then left behind
	// and nothing here touches the audit again.
	scanned := make(chan struct{})
	var from clientFields
	go func() {
		defer close(scanned)
		for r.Scan() {
			rec := r.Record()
			from.count(rec)
			au.Add(rec)
		}
	}()
	select {
	case <-scanned:
	case <-ctx.Done():
		return false
	}
	err = r.Err()
	if errors.Is(err, parse.ErrStopped) || ctx.Err() != nil {
		return false
	}
	st := r.Stats()
	rep := InputReport{File: in.Name, Lines: st.Lines, Malformed: st.Malformed, Bytes: st.Bytes, Gzip: st.Gzip,
		FirstTime: st.FirstTime.UTC(), LastTime: st.LastTime.UTC(), MalformedClaims: st.MalformedClaims, Site: in.Site}
	if o.Format != nil && mostlyMalformed(st) {
		au.Warn(wrongFormatWarning(in.Name, st, o.Format, r.Guess()))
	}
	if st.MalformedClaims > 0 {
		au.Warn(fmt.Sprintf("%s: %d malformed lines carry %s: those claims could not be checked (see malformed_examples; is --log-format right?)", in.Name, st.MalformedClaims, au.tokenWords()))
	}
	rep.ClientField, rep.RealClientHits = from.String(), from.real
	rep.Comments = st.Comments
	if rf := r.Format(); rf != nil {
		rep.LogFormat = rf.Name()
		rep.HostLogged = rf.HasHost()
		if rf.NeedsZone() {
			zone := o.ZoneName
			if zone == "" {
				zone = "the machine's zone"
			}
			rep.TimeZone = zone
			// The same words for every input: said once.
			warnOnce(au, fmt.Sprintf("times logged without a UTC offset are read in %s; give --timezone if the server logged in another zone", zone))
		}
		if note := rf.Note(); note != "" {
			au.Warn(fmt.Sprintf("%s: %s", in.Name, note))
		}
		if (o.TrustXFF || o.Trust.Reads()) && len(rf.RealClientFields()) == 0 {
			au.Warn(fmt.Sprintf("%s: the log format %s records no real-client header (X-Forwarded-For, CF-Connecting-IP, True-Client-IP, X-Real-IP), so --trusted-proxy and --trust-xff cannot read the client behind a proxy: the connecting address is the client, and a trusted proxy's claims stay unverified (proxy); log $http_x_forwarded_for (nginx) or %%{X-Forwarded-For}i (Apache)", in.Name, rf.Name()))
		}
		if !rf.HasUserAgent() {
			who, whose := au.crawlerWords()
			au.Warn(fmt.Sprintf("%s: the log format %s records no User-Agent, so no request can be seen claiming to be %s; only the %s listed addresses are looked for", in.Name, rf.Name(), who, whose))
		}
	}
	var unsupported *parse.UnsupportedError
	switch {
	case err == nil:
		switch {
		case st.Bytes == 0:
			au.Warn(fmt.Sprintf("%s is empty", in.Name))
		case st.Lines == st.Blank:
			au.Warn(fmt.Sprintf("%s holds blank lines only", in.Name))
		}
	case errors.As(err, &unsupported):
		// No --log-format reads it: say what it is, not which to give.
		rep.Error = fmt.Sprintf("%v; none of it was read", err)
		au.Warn(rep.Error)
	case errors.Is(err, parse.ErrUnknownFormat):
		// Like an unreadable file: error.log among access logs, or a
		// compression it cannot read, must not discard the other inputs.
		rep.Error = fmt.Sprintf("%v; none of it was read; see why with 'lohibot-audit format test %s', and give its format with --log-format (a built-in name, 'nginx:<log_format>' or 'apache:<LogFormat>'), or leave it out", err, in.Name)
		au.Warn(rep.Error)
	default:
		var re *parse.ReadError
		msg := err.Error()
		if errors.As(err, &re) {
			msg = fmt.Sprintf("%s: %v at byte %d; the %d lines before it were read", re.File, re.Err, re.Offset, st.Lines)
		}
		au.Warn(msg)
		rep.Error = msg
	}
	au.AddInput(rep, r.Examples())
	return err == nil
}

// warnOnce adds a warning to the audit unless it holds it already.
func warnOnce(au *auditSet, w string) {
	if len(au.audits) > 0 && slices.Contains(au.audits[0].warnings, w) {
		return
	}
	au.Warn(w)
}

// The share of malformed lines from which a given --log-format is taken
// to be the wrong one: every non-blank line of an input, or at least
// wrongFormatShare of them when there are at least wrongFormatLines (a
// few good lines, such as a header or a test request, do not hide it).
const (
	wrongFormatShare = 0.9
	wrongFormatLines = 10
)

// mostlyMalformed reports whether so many of an input's lines are
// malformed that its format, not its lines, is likely wrong.
func mostlyMalformed(st parse.Stats) bool {
	lines := st.Lines - st.Blank - st.Comments
	if st.Malformed == 0 {
		return false
	}
	return st.Malformed >= lines || lines >= wrongFormatLines && float64(st.Malformed) >= wrongFormatShare*float64(lines)
}

// wrongFormatWarning says that most lines of input do not match the
// given format, and what auto-detection makes of its first lines (g).
func wrongFormatWarning(input string, st parse.Stats, given *parse.Format, g *parse.Guess) string {
	msg := fmt.Sprintf("%s: %d of %d lines do not match --log-format %s", input, st.Malformed, st.Lines-st.Blank-st.Comments, given.Name())
	var unsupported *parse.UnsupportedError
	switch {
	case g == nil:
		return msg + "; its first lines do, so its format changes further on (see malformed_examples)"
	case g.Format != nil && g.Format.Name() != given.Name():
		return msg + fmt.Sprintf("; auto-detection reads them as %s (try --log-format auto)", g.Format.Name())
	case g.Format != nil:
		return msg + "; auto-detection reads its first lines as that format too (see malformed_examples)"
	case errors.As(g.Err, &unsupported):
		return msg + fmt.Sprintf("; it looks like %s", unsupported.Looks())
	}
	return msg + "; auto-detection finds no format that fits them either: give the server's own log_format (nginx) or LogFormat (Apache) as --log-format 'nginx:<log_format>' or 'apache:<LogFormat>'"
}

// Unread names the inputs of which nothing was read: those that could
// not be opened, or whose format could not be detected.
func (r *Report) Unread() []string {
	var out []string
	for _, in := range r.Inputs {
		if in.Error != "" && in.Lines == 0 {
			out = append(out, in.File)
		}
	}
	return out
}

// reportSites returns the sites an audit has: those of its claimed hits,
// and the site of every input without a virtual host.
func reportSites(rep *Report) []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, s := range rep.Sites {
		add(s.Site)
	}
	for _, in := range rep.Inputs {
		if in.LogFormat != "" && !in.HostLogged {
			add(in.Site)
		}
	}
	sort.Strings(out)
	return out
}

// clientFields counts which fields gave the clients of an input's claimed
// hits.
type clientFields struct {
	used [8]bool // by parse.ClientSource
	real int64   // claimed hits whose client came from a header
}

func (c *clientFields) count(rec *parse.Record) {
	if !rec.Claimed {
		return
	}
	if int(rec.ClientFrom) < len(c.used) && !rec.Proxy {
		c.used[rec.ClientFrom] = true
	}
	if rec.ClientFrom != parse.FromAddress && !rec.Proxy {
		c.real++
	}
}

// String names the fields that gave clients: "address" (the connecting
// address as logged), a header ("x-forwarded-for"), or both
// ("x-forwarded-for, address"), headers first.
func (c *clientFields) String() string {
	var names []string
	for i := 1; i < len(c.used); i++ {
		if c.used[i] {
			names = append(names, parse.ClientSource(i).String())
		}
	}
	if c.used[parse.FromAddress] || len(names) == 0 {
		names = append(names, parse.FromAddress.String())
	}
	return strings.Join(names, ", ")
}
