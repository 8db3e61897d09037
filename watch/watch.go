package watch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/bits"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lohisoft/lohibot-audit/conduct"
	"github.com/lohisoft/lohibot-audit/follow"
	"github.com/lohisoft/lohibot-audit/internal/nouns"
	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/lohisoft/lohibot-audit/proxy"
	"github.com/lohisoft/lohibot-audit/verify"
	"github.com/lohisoft/lohibot-audit/watchstate"
)

// Defaults of Options.
const (
	// DefaultTick is how often the judge's and the tracker's housekeeping
	// runs.
	DefaultTick = 5 * time.Second
	// DefaultAddTimeout bounds one addition to the block set.
	DefaultAddTimeout = 5 * time.Second
	// maxConductQueue bounds the genuine-crawler candidates waiting for
	// their verdict before the conduct checks see them.
	maxConductQueue = 1 << 16
	// maxBatch is how many bytes of claimed lines wait for the parser
	// before the follower waits for it.
	maxBatch = 8 << 20
)

// Subject is one crawler watched: its name in events and for --exec, the
// User-Agent tokens that claim it, the judge of the addresses that claim
// it, and the checks of its conduct.
type Subject struct {
	Name string
	// Tokens are the User-Agent product tokens that claim it.
	Tokens []string
	Judge  *Judge
	// Tracker, when set, checks the crawler's conduct.
	Tracker Tracker
}

// Tracker checks the genuine crawler's conduct as its hits arrive;
// *conduct.Tracker is one.
type Tracker interface {
	// Add takes the next genuine hit, in log order, and returns the
	// violations it proves.
	Add(h conduct.Hit) []conduct.Violation
	// Prune forgets what no later hit can need, as of the log time t.
	Prune(t time.Time)
}

// Options configure a Watcher. Files, Subjects, Guard and Events are
// required.
type Options struct {
	// Files are followed as tail -F follows them ("-" is standard input).
	Files  []string
	Follow follow.Options
	// Format is the log format; nil detects it per file from its first
	// claimed lines (and a W3C extended log's #Fields: directive, which
	// is read before the lines it describes even when following starts
	// after it).
	Format *parse.Format
	// SiteOf names the site of a file's lines that record no virtual host.
	SiteOf   func(file string) string
	TrustXFF bool
	// Trust are the proxies whose requests carry the real client in a
	// logged header (--trusted-proxy); see parse.Options.Trust.
	Trust *proxy.Set
	// Location is the zone of logged times without a UTC offset (nil:
	// the machine's).
	Location *time.Location
	// Subjects are the crawlers watched, one or more: a claimed hit goes to
	// the judge (and tracker) of each crawler whose tokens it carries.
	Subjects []Subject

	Guard  *Guard
	Events *Events
	// Adder, when set, receives every new spoofer the guard lets through.
	Adder Adder
	// Exec, when set, runs its command for every new spoofer the guard lets
	// through.
	Exec *Exec
	// CrowdSec, when set, gets a ban for every spoofer the guard lets
	// through, each time it is judged.
	CrowdSec Decisions
	// Say prints a message for people (stderr): problems that are waited
	// out, each said once.
	Say func(msg string)
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Tick is how often housekeeping runs; zero means DefaultTick.
	Tick time.Duration
	// OnBlocked, when set, is told of each address added to the block set
	// (tests and benchmarks).
	OnBlocked func(netip.Addr)

	// BlockTTL is how long a block lasts (--ttl), for the state; zero
	// means emit.DefaultTTL.
	BlockTTL time.Duration
	// Sets, when set, reads and takes addresses out of the block sets:
	// for unblock, and to put back at start what the sets lost.
	Sets Sets
	// StateDir, when set, is where the state is kept (package
	// watchstate): written every StateEvery when it changed (zero:
	// DefaultStateEvery), after an unblock, and when Run ends. Restore
	// takes a state before Run.
	StateDir   string
	StateEvery time.Duration
	// Targets say where blocks go, for the state (unblock when no watch
	// runs).
	Targets watchstate.Targets
	// DNS, when set, follows the resolvers' health (NewFor makes one).
	DNS *DNSHealth
	// Version names the program in the status.
	Version string
}

// Watcher follows logs and acts on what it reads.
type Watcher struct {
	o      Options
	claims *parse.TokenSet

	// batches of claimed lines per file, filled by the follower and
	// emptied by the parser.
	bmu     sync.Mutex
	batches map[string]*batch
	free    map[string]*batch // emptied batches, for reuse
	order   []string
	bsize   int
	bwake   chan struct{}
	bspace  *sync.Cond
	bstop   bool // the parser has stopped: readLoop waits no more

	// trust is what the log readers trust to carry the real client in a
	// header (Options.TrustXFF and Trust, then each Reload's): each batch
	// of lines is read with the one in force when its reading begins.
	trust atomic.Pointer[readTrust]

	formats map[string]*parse.Format // parser goroutine only
	undet   map[string]bool
	// fields is each W3C log's #Fields: directive in force after the
	// lines parsed so far (parser goroutine only).
	fields map[string][]byte

	crawlers []*watched
	cmu      sync.Mutex // the crawlers' conduct queues and trackers
	setup    *setup     // what NewFor made, for Reload

	lines, claimed, records, malformed, blocked, blockFailed atomic.Int64
	violations                                               atomic.Int64
	unchecked                                                atomic.Int64 // genuine crawlers' hits not checked: the conduct queue was full
	// acts are the spoofers waiting for their actions, adds the addresses
	// waiting for the block set; acting and adding count both, the ones
	// in hand included.
	acts           *actQueue
	adds           chan []addItem
	toAdd          []addItem // actLoop's round
	acting, adding atomic.Int64
	dnsDown        atomic.Bool               // an outage was said
	started        atomic.Pointer[time.Time] // when Run began; read by Status, which the control socket may ask before
	saidMu         sync.Mutex
	said           map[string]bool
	lastLogTime    atomic.Int64
	started1       startedCh

	// files are the followed files' counts and positions, by name.
	files map[string]*fileStat
	dns   *DNSHealth
	// book is what is blocked and held; roundMu is held by an add round.
	book    book
	roundMu sync.Mutex
	// restoredNFT are the addresses a state says are in the block set,
	// refusedNFT those its blocks the guard refuses now (Restore).
	restoredNFT, refusedNFT []netip.Addr
	restored                bool
	stateFailing            atomic.Bool
	saveNow                 chan struct{}
}

// fileStat is what is known of a followed file. Its fields are atomic.
type fileStat struct {
	lines, malformed atomic.Int64
	// offset is the byte after the last line read, line its number.
	offset, line atomic.Int64
	// last is when the last line was read (Unix nanoseconds).
	last atomic.Int64
	// kind is the last follow event's kind (0: none yet).
	kind atomic.Int32
}

// state names what following a file last said.
func (f *fileStat) state() string {
	switch follow.EventKind(f.kind.Load()) {
	case 0:
		return "starting"
	case follow.Missing:
		return "missing"
	case follow.Unreadable:
		return "unreadable"
	case follow.Ended:
		return "ended"
	}
	return "following"
}

// watched is a crawler with the hits that wait for their verdict before
// its conduct checks see them.
type watched struct {
	Subject
	cqueue []queued
	// overflowing is set while the queue is full and hits are left
	// unchecked; cdrop counts them.
	overflowing bool
	cdrop       int64
	// claims counts the claimed requests read; genuine, spoofed and
	// unverified the judgements by verdict; violations those found.
	claims, genuine, spoofed, unverified, violations atomic.Int64
	// leftOut is how many violations its tracker did not return, past
	// --max-violations per site and kind (a tracker that says).
	leftOut atomic.Int64
}

// readTrust is the trust of the log readers: every connecting address
// (--trust-xff), or set's.
type readTrust struct {
	all bool
	set *proxy.Set
}

// setReaderTrust makes the log readers trust s from the next batch of
// lines on: the lines being read keep the trust they began with.
func (w *Watcher) setReaderTrust(s *proxy.Set) {
	w.trust.Store(&readTrust{all: s.All(), set: s})
}

type batch struct {
	data []byte
	nums []int64
	// claims counts the claimed lines of data; the others are W3C
	// #Fields: directives, which say how the lines after them are read.
	claims int
}

// startedCh is closed once following has begun.
type startedCh = chan struct{}

type queued struct {
	rec  *parse.Record
	addr netip.Addr
}

// New returns a Watcher; Run follows.
func New(o Options) *Watcher {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Tick <= 0 {
		o.Tick = DefaultTick
	}
	if o.Say == nil {
		o.Say = func(string) {}
	}
	if o.SiteOf == nil {
		o.SiteOf = func(string) string { return "" }
	}
	w := &Watcher{o: o, batches: map[string]*batch{}, free: map[string]*batch{}, bwake: make(chan struct{}, 1),
		formats: map[string]*parse.Format{}, undet: map[string]bool{}, fields: map[string][]byte{}, said: map[string]bool{}, started1: make(chan struct{}),
		acts: newActQueue(), adds: make(chan []addItem, 64), files: map[string]*fileStat{}, dns: o.DNS,
		saveNow: make(chan struct{}, 1)}
	w.book.blocks = map[netip.Addr]*blockRec{}
	w.book.holds = map[netip.Addr]watchstate.Hold{}
	for _, f := range o.Files {
		w.files[f] = &fileStat{}
	}
	if o.Guard != nil {
		o.Guard.SetHeld(w.held)
	}
	w.bspace = sync.NewCond(&w.bmu)
	w.trust.Store(&readTrust{all: o.TrustXFF, set: o.Trust})
	groups := make([][]string, len(o.Subjects))
	for i, c := range o.Subjects {
		w.crawlers = append(w.crawlers, &watched{Subject: c})
		groups[i] = c.Tokens
	}
	w.claims = parse.NewTokenSet(groups)
	return w
}

// sayOnce says msg the first time it comes.
func (w *Watcher) sayOnce(msg string) {
	w.saidMu.Lock()
	first := !w.said[msg]
	w.said[msg] = true
	w.saidMu.Unlock()
	if first {
		w.o.Say(msg)
	}
}

// OnVerdictOf is the callback of the judge of the crawler named crawler:
// give it to JudgeOptions.OnVerdict. It writes the event, queues the
// actions on a spoofer (carried out off this path: no verdict waits for
// them) and lets the conduct checks see the hits that waited for the
// verdict.
func (w *Watcher) OnVerdictOf(ctx context.Context, crawler string) func(Verdict) {
	var c *watched
	for _, x := range w.crawlers {
		if x.Name == crawler {
			c = x
		}
	}
	return func(v Verdict) {
		if c != nil {
			switch v.Verdict {
			case verify.Genuine:
				c.genuine.Add(1)
			case verify.Spoofed:
				c.spoofed.Add(1)
			default:
				c.unverified.Add(1)
			}
		}
		w.o.Events.Verdict(crawler, v, w.o.Now())
		switch {
		case v.Verdict == verify.Unverified && v.DNSFailure != "":
			// An outage is said once, whatever ways DNS fails in it
			// (timeouts, then the resolver taken for unreachable).
			if w.dnsDown.CompareAndSwap(false, true) {
				w.o.Say(fmt.Sprintf("dns: cannot verify addresses (%s): they are judged again as DNS comes back; nothing unverified is blocked", v.DNSFailure))
			}
		case v.DNSFailure == "" && v.Verdict != verify.Unverified:
			if w.dnsDown.CompareAndSwap(true, false) {
				w.o.Say("dns: answers again; unverified addresses are judged again as their backoff ends")
			}
		}
		if v.Verdict == verify.Spoofed {
			w.queueAct(crawler, v)
		}
		w.drainConduct()
	}
}

// act blocks a spoofer, if the guard lets it: a is the address to block,
// or invalid with why it is not (Guard.BlockableAll). actLoop calls it.
func (w *Watcher) act(ctx context.Context, crawler string, v Verdict, a netip.Addr, why string) {
	if !a.IsValid() {
		if why != "verdict" && v.New() {
			w.o.Say(fmt.Sprintf("%s is spoofed but not blocked: %s", v.Addr, why))
		}
		return
	}
	if w.o.Adder != nil {
		// Adding again starts the element's timeout anew: a spoofer judged
		// again after the verdict TTL stays blocked.
		w.block(ctx, a, crawler)
	}
	if w.o.Exec != nil && v.New() {
		if err := w.o.Exec.Queue(a, crawler, v.Reason); err != nil {
			w.sayOnce(fmt.Sprintf("exec: %v (more are dropped while the commands are this slow)", err))
		} else {
			now := w.o.Now()
			w.noteBlock(a, crawler, watchstate.TargetExec, netip.Prefix{}, now, now.Add(w.blockTTL()))
		}
	}
	if w.o.CrowdSec != nil {
		w.pushCrowdSec(crawler, v)
	}
}

// Run follows the files until ctx ends or every input ends (standard input
// only), and returns nil then; an error only when following cannot start.
func (w *Watcher) Run(ctx context.Context) error {
	start := w.o.Now()
	w.started.Store(&start)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	fo := w.o.Follow
	userEvent := fo.OnEvent
	fo.OnEvent = func(e follow.Event) {
		if userEvent != nil {
			userEvent(e)
		}
		if fs := w.files[e.File]; fs != nil && e.Kind != follow.Polling {
			fs.kind.Store(int32(e.Kind))
		}
		switch e.Kind {
		case follow.Opened:
			w.openedAt(e)
		case follow.Missing, follow.Unreadable, follow.Polling:
			w.o.Say(e.String())
		case follow.Ended:
			if e.Err != nil {
				w.o.Say(e.String())
			}
		}
	}
	f, err := follow.New(ctx, w.o.Files, fo)
	if err != nil {
		return err
	}
	close(w.started1)
	var wg sync.WaitGroup
	for _, c := range w.crawlers {
		wg.Go(func() { c.Judge.Run(ctx) })
	}
	if w.o.StateDir != "" {
		wg.Go(func() { w.stateLoop(ctx) })
	}
	if w.o.Exec != nil {
		wg.Go(func() { w.o.Exec.Run(ctx) })
	}
	wg.Go(func() { w.actLoop(ctx) })
	if w.o.Adder != nil {
		wg.Go(func() { w.addLoop(ctx) })
	}
	if w.restored {
		wg.Go(func() { w.reblock(ctx) })
	}
	if w.o.CrowdSec != nil {
		wg.Go(func() { w.o.CrowdSec.Run(ctx) })
	}
	parsed := make(chan struct{})
	readDone := make(chan struct{})
	go func() {
		defer close(parsed)
		w.parseLoop(ctx, readDone)
	}()
	wg.Go(func() {
		t := time.NewTicker(w.o.Tick)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				w.Housekeep()
				w.pruneBook()
			case <-ctx.Done():
				return
			}
		}
	})
	w.readLoop(f)
	close(readDone)
	f.Close()
	w.bmu.Lock()
	w.bspace.Broadcast()
	w.bmu.Unlock()
	<-parsed
	if ctx.Err() == nil {
		// Standard input ended: let the judge finish what it read.
		w.waitIdle(ctx)
		w.waitPushed(ctx)
	}
	cancel()
	wg.Wait()
	if w.o.StateDir != "" {
		// Everything has stopped: the last word.
		w.saveState(context.WithoutCancel(ctx))
	}
	return nil
}

// Started is closed once following has begun: every line written to the
// files after that is read.
func (w *Watcher) Started() <-chan struct{} { return w.started1 }

// startedAt is when Run began, the zero time before.
func (w *Watcher) startedAt() time.Time {
	if t := w.started.Load(); t != nil {
		return *t
	}
	return time.Time{}
}

// waitIdle waits until the judge has nothing left to judge, and no
// spoofer waits for its actions.
func (w *Watcher) waitIdle(ctx context.Context) {
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		// In the order work flows: each stage counts what it hands on
		// before it lets go of it.
		idle := true
		for _, c := range w.crawlers {
			idle = idle && c.Judge.Idle()
		}
		if idle && w.acting.Load() == 0 && w.adding.Load() == 0 {
			return
		}
		select {
		case <-t.C:
		case <-ctx.Done():
			return
		}
	}
}

// Housekeep runs the judge's Tick, prunes the conduct state and lets
// waiting hits through. Run calls it every Options.Tick.
func (w *Watcher) Housekeep() {
	for _, c := range w.crawlers {
		c.Judge.Tick()
	}
	w.drainConduct()
	if t := w.lastLogTime.Load(); t != 0 {
		w.cmu.Lock()
		for _, c := range w.crawlers {
			if c.Tracker != nil {
				c.Tracker.Prune(time.Unix(0, t))
			}
		}
		w.cmu.Unlock()
	}
}

// judgeStats adds up the judges' counts.
func (w *Watcher) judgeStats() JudgeStats {
	var s JudgeStats
	for _, c := range w.crawlers {
		x := c.Judge.Stats()
		s.Genuine += x.Genuine
		s.Spoofed += x.Spoofed
		s.Unverified += x.Unverified
		s.Pending += x.Pending
		s.Queued += x.Queued
		s.Checks += x.Checks
		s.Forgotten += x.Forgotten
		s.Early += x.Early
	}
	return s
}

// readLoop takes lines from the follower and keeps the claimed ones for
// the parser; it never waits for DNS.
func (w *Watcher) readLoop(f *follow.Follower) {
	var fs *fileStat
	file := ""
	for f.Next() {
		l := f.Line()
		w.lines.Add(1)
		if l.File != file || fs == nil {
			file, fs = l.File, w.files[l.File]
			if fs == nil {
				fs = &fileStat{}
			}
		}
		fs.lines.Add(1)
		fs.line.Store(l.Num)
		fs.offset.Store(l.Offset + l.Size + 1)
		fs.last.Store(w.o.Now().UnixNano())
		// Any line that may carry a token goes to the parser, which
		// decides: the format may encode the User-Agent (IIS writes '+'
		// for spaces, CloudFront %20), so a claim need not be at token
		// boundaries in the raw line.
		if !w.claims.MayContain(l.Text) {
			if len(l.Text) > 0 && l.Text[0] == '#' && !l.Overlong && parse.IsFieldsDirective(l.Text) {
				w.keep(l.File, l.Text, l.Num, false)
			}
			continue
		}
		w.claimed.Add(1)
		if l.Overlong {
			w.malformed.Add(1)
			fs.malformed.Add(1)
			continue
		}
		w.keep(l.File, l.Text, l.Num, true)
	}
	if err := f.Err(); err != nil && !errors.Is(err, context.Canceled) {
		w.o.Say(fmt.Sprintf("following stopped: %v", err))
	}
}

// openedAt is told that a file is followed from e.Offset: when that is
// not its start and the file is a W3C extended log, the #Fields:
// directive in force there is kept for the parser, as if it had been
// read, so that the lines after it are read by it. It runs on readLoop's
// goroutine (follow's OnEvent), before the file's first line.
func (w *Watcher) openedAt(e follow.Event) {
	if e.Offset <= 0 || e.File == follow.Stdin {
		return
	}
	f, err := os.Open(e.File)
	if err != nil {
		return // follow says why it cannot read the file
	}
	defer f.Close()
	d, err := parse.LastFieldsDirective(f, e.Offset)
	if err != nil {
		w.o.Say(fmt.Sprintf("%s: cannot read its #Fields: directive (%v): its lines may not be read until the next one", e.File, err))
		return
	}
	if d != nil {
		w.keep(e.File, d, 0, false)
	}
}

// keep queues a line of file for the parser: a claimed line, or a W3C
// directive (not claimed) that says how the next ones are read.
func (w *Watcher) keep(file string, text []byte, num int64, claimed bool) {
	w.bmu.Lock()
	for w.bsize > maxBatch && !w.bstop {
		w.bspace.Wait()
	}
	b := w.batches[file]
	if b == nil {
		if b = w.free[file]; b != nil {
			delete(w.free, file)
		} else {
			b = &batch{}
		}
		w.batches[file] = b
		w.order = append(w.order, file)
	}
	b.data = append(b.data, text...)
	b.data = append(b.data, '\n')
	b.nums = append(b.nums, num)
	if claimed {
		b.claims++
	}
	w.bsize += len(text) + 1
	w.bmu.Unlock()
	select {
	case w.bwake <- struct{}{}:
	default:
	}
}

// parseLoop parses what readLoop kept, batch by batch.
func (w *Watcher) parseLoop(ctx context.Context, readDone <-chan struct{}) {
	for {
		select {
		case <-w.bwake:
		case <-readDone:
			w.parseAll(ctx)
			return
		case <-ctx.Done():
			w.bmu.Lock()
			w.bstop = true
			w.bspace.Broadcast()
			w.bmu.Unlock()
			return
		}
		w.parseAll(ctx)
	}
}

// parseAll swaps out every pending batch, parses it and gives its buffers
// back to readLoop.
func (w *Watcher) parseAll(ctx context.Context) {
	w.bmu.Lock()
	got, order := w.batches, w.order
	w.batches, w.order, w.bsize = map[string]*batch{}, nil, 0
	w.bspace.Broadcast()
	w.bmu.Unlock()
	for _, name := range order {
		if b := got[name]; len(b.nums) > 0 {
			w.parse(ctx, name, b)
		}
	}
	w.bmu.Lock()
	for name, b := range got {
		if cap(b.data) <= 1<<20 {
			b.data, b.nums, b.claims = b.data[:0], b.nums[:0], 0
			w.free[name] = b
		}
	}
	w.bmu.Unlock()
}

// parse reads one file's claimed lines. A W3C log's lines are read after
// the #Fields: directive in force before them, and the batch's own
// directives change it from where they stand.
func (w *Watcher) parse(ctx context.Context, name string, b *batch) {
	data, nums := b.data, b.nums
	if d := w.fields[name]; d != nil {
		data = append(append(append(make([]byte, 0, len(d)+1+len(data)), d...), '\n'), data...)
		nums = append([]int64{0}, nums...)
	}
	if b.claims < len(b.nums) {
		w.fields[name] = lastDirective(b.data, w.fields[name])
	}
	if b.claims == 0 {
		return
	}
	f := w.o.Format
	if f == nil {
		f = w.formats[name]
	}
	if f == nil {
		var err error
		f, err = parse.Detect(data)
		if err != nil {
			w.malformed.Add(int64(b.claims))
			if fs := w.files[name]; fs != nil {
				fs.malformed.Add(int64(b.claims))
			}
			if !w.undet[name] {
				w.undet[name] = true
				w.o.Say(fmt.Sprintf("%s: cannot detect the log format of its lines (%v): they are skipped; give --log-format", name, err))
			}
			return
		}
		w.formats[name] = f
	}
	trust := w.trust.Load()
	r := parse.NewReader(bytes.NewReader(data), parse.Options{
		Name: name, Format: f, Site: w.o.SiteOf(name), TrustXFF: trust.all, Trust: trust.set, Claims: w.claims,
		Workers: 1, ChunkSize: len(data) + 1, MaxExamples: 1, Location: w.o.Location,
	})
	for r.Scan() {
		rec := *r.Record()
		if rec.Line >= 1 && int(rec.Line) <= len(nums) {
			rec.Line = nums[rec.Line-1]
		}
		w.record(&rec)
	}
	w.malformed.Add(r.Stats().Malformed)
	if fs := w.files[name]; fs != nil {
		fs.malformed.Add(r.Stats().Malformed)
	}
	if ctx.Err() != nil {
		r.Close()
	}
}

// lastDirective returns the last W3C #Fields: directive among the lines of
// data, or cur when there is none.
func lastDirective(data, cur []byte) []byte {
	for len(data) > 0 {
		line := data
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			line, data = data[:i], data[i+1:]
		} else {
			data = nil
		}
		if len(line) > 0 && line[0] == '#' && parse.IsFieldsDirective(line) {
			cur = bytes.Clone(line)
		}
	}
	return cur
}

// record handles one claimed hit.
func (w *Watcher) record(rec *parse.Record) {
	w.records.Add(1)
	if rec.Resolution > 0 {
		if t := rec.Time.UnixNano(); t > w.lastLogTime.Load() {
			w.lastLogTime.Store(t)
		}
	}
	for m := rec.Claims; m != 0; m &= m - 1 {
		if i := bits.TrailingZeros64(m); i < len(w.crawlers) {
			w.crawlers[i].claims.Add(1)
		}
	}
	if !rec.Client.IsValid() || rec.Proxy {
		// A host name where the address should be (SPEC §2), or a
		// trusted proxy's request that logged no usable real client
		// (SPEC §13): never judged, never blocked.
		return
	}
	for m := rec.Claims; m != 0; m &= m - 1 {
		if i := bits.TrailingZeros64(m); i < len(w.crawlers) {
			w.see(w.crawlers[i], rec)
		}
	}
	w.drainConduct()
}

// see hands a claimed hit to the crawler's judge, and queues it for its
// conduct checks unless its address stands judged other than genuine.
func (w *Watcher) see(c *watched, rec *parse.Record) {
	r, judged := c.Judge.Seen(rec.Client, Hit{Time: rec.Time, UserAgent: rec.UserAgent})
	if c.Tracker == nil || (judged && r.Verdict != verify.Genuine) {
		// A spoofer's hits are never checked: they take no room in the
		// queue, however many a botnet sends.
		return
	}
	w.cmu.Lock()
	defer w.cmu.Unlock()
	if len(c.cqueue) >= maxConductQueue {
		c.cqueue[0] = queued{}
		c.cqueue = c.cqueue[1:]
		c.cdrop++
		w.unchecked.Add(1)
		if !c.overflowing {
			c.overflowing = true
			w.o.Say(fmt.Sprintf("conduct: %d requests of %s wait for their addresses' verdicts; the oldest are left unchecked until DNS catches up (counted in the SIGUSR1 summary)", maxConductQueue, c.Name))
		}
	}
	c.cqueue = append(c.cqueue, queued{rec: rec, addr: rec.Client.Unmap()})
}

// drainConduct passes the waiting hits, in log order, to the trackers as
// far as their verdicts are known: genuine ones are checked, others
// dropped.
func (w *Watcher) drainConduct() {
	w.cmu.Lock()
	defer w.cmu.Unlock()
	for _, c := range w.crawlers {
		if c.Tracker != nil && len(c.cqueue) > 0 {
			w.drain(c)
		}
	}
}

// drain is drainConduct for one crawler; w.cmu is held.
func (w *Watcher) drain(c *watched) {
	n := 0
	for ; n < len(c.cqueue); n++ {
		q := c.cqueue[n]
		r, ok := c.Judge.Result(q.addr)
		if !ok {
			break
		}
		if r.Verdict != verify.Genuine {
			continue
		}
		for _, v := range c.Tracker.Add(conduct.HitOf(q.rec)) {
			w.violations.Add(1)
			c.violations.Add(1)
			w.o.Events.Violation(c.Name, v)
		}
	}
	if lo, ok := c.Tracker.(interface{ LeftOut() int64 }); ok {
		c.leftOut.Store(lo.LeftOut())
	}
	if n == 0 {
		return
	}
	clear(c.cqueue[:n])
	c.cqueue = c.cqueue[n:]
	if len(c.cqueue) == 0 {
		c.cqueue = nil
	}
	if c.overflowing && len(c.cqueue) < maxConductQueue/2 {
		c.overflowing = false
		w.o.Say(fmt.Sprintf("conduct: %s's requests are checked again; %s left unchecked so far", c.Name, nouns.Count(c.cdrop, "request was", "requests were")))
	}
}

// Summary is one line on what the watcher did so far, for SIGUSR1.
func (w *Watcher) Summary() string {
	s := w.judgeStats()
	violations := nouns.Count(w.violations.Load(), "violation", "violations")
	var leftOut int64
	for _, c := range w.crawlers {
		leftOut += c.leftOut.Load()
	}
	if leftOut > 0 {
		violations += fmt.Sprintf(" (%d more not shown, past --max-violations per site and kind)", leftOut)
	}
	forgotten := fmt.Sprintf("%d forgotten", s.Forgotten)
	if s.Early > 0 {
		forgotten += fmt.Sprintf(", %d of them early at the bound of addresses held", s.Early)
	}
	msg := fmt.Sprintf("watch: %s up; %s, %d claimed, %s; addresses: %d genuine, %d spoofed, %d unverified, %d pending (%s, %s); %s; %d blocked",
		w.o.Now().Sub(w.startedAt()).Round(time.Second), nouns.Count(w.lines.Load(), "line", "lines"), w.claimed.Load(), nouns.Count(w.malformed.Load(), "malformed claim", "malformed claims"),
		s.Genuine, s.Spoofed, s.Unverified, s.Pending, nouns.Count(s.Checks, "judgement", "judgements"), forgotten, violations, w.blocked.Load())
	if n := w.blockFailed.Load(); n > 0 {
		msg += fmt.Sprintf(" (%d failed)", n)
	}
	if n := w.acting.Load() + w.adding.Load(); n > 0 {
		msg += fmt.Sprintf(", %d waiting", n)
	}
	if n := w.acts.dropped.Load(); n > 0 {
		msg += fmt.Sprintf(", %d not acted on (too many waited)", n)
	}
	if n := w.unchecked.Load(); n > 0 {
		msg += fmt.Sprintf("; %s left unchecked (verdicts came late)", nouns.Count(n, "claimed request", "claimed requests"))
	}
	if w.o.Exec != nil {
		x := w.o.Exec.Stats()
		msg += fmt.Sprintf("; exec %d ok, %d failed, %d dropped", x.OK, x.Failed, x.Dropped)
	}
	if w.o.CrowdSec != nil {
		c := w.o.CrowdSec.Stats()
		msg += fmt.Sprintf("; crowdsec %d added, %d extended, %d in force already, %d waiting, %d dropped", c.Added, c.Extended, c.Kept, c.Waiting, c.Dropped)
	}
	if written, lost := w.o.Events.Counts(); lost > 0 {
		msg += fmt.Sprintf("; %s written, %d lost", nouns.Count(written, "event", "events"), lost)
	}
	return msg
}

// Stats are the watcher's counts. Unchecked are genuine crawlers' hits
// left out of the conduct checks because too many waited for verdicts.
type Stats struct {
	Lines, Claimed, Records, Malformed, Blocked, Violations, Unchecked int64
}

// Stats returns the counts so far.
func (w *Watcher) Stats() Stats {
	return Stats{Lines: w.lines.Load(), Claimed: w.claimed.Load(), Records: w.records.Load(),
		Malformed: w.malformed.Load(), Blocked: w.blocked.Load(), Violations: w.violations.Load(), Unchecked: w.unchecked.Load()}
}
