package audit

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/bits"
	"net/netip"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lohisoft/lohibot-audit/audit/timeline"
	"github.com/lohisoft/lohibot-audit/conduct"
	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/internal/snapfile"
	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/lohisoft/lohibot-audit/proxy"
	"github.com/lohisoft/lohibot-audit/verify"
)

// SnapshotFile is one snapshot for [MergeSnapshots] to read.
type SnapshotFile struct {
	// Name is how messages and the report name it: its path.
	Name string
	// Open opens it. It is read three times, from the start each time
	// (Seek): a snapshot is checked whole before anything of it is used.
	// The Opens of several snapshots may run at once.
	Open func() (io.ReadSeekCloser, error)
}

// MergeOptions is what [MergeSnapshots] merges, and what the merged audit
// holds the crawlers to.
type MergeOptions struct {
	Snapshots []SnapshotFile
	// Profiles, when set (--crawler), are the crawlers audited: they must
	// be the crawler set the snapshots were made with (see Fingerprint).
	// nil takes the snapshots' own profiles.
	Profiles []*crawler.Profile
	// Named makes the report name its crawlers, as --crawler does; a
	// report of snapshots made with --crawler names them anyway.
	Named bool
	// Overrides and MaxViolations are the conduct flags given.
	Overrides     conduct.Overrides
	MaxViolations int
	// OptOuts, when set, gives each crawler's opted-out sites
	// (--opted-out), by crawler name, once the crawlers are known (the
	// snapshots' or Profiles); its error ends the merge before anything
	// is replayed. OptOutGrace is --opt-out-grace.
	OptOuts     func(profiles []*crawler.Profile) (map[string]conduct.OptOuts, error)
	OptOutGrace time.Duration
	// ClockSkew is how far apart the clocks of two servers may be
	// (--clock-skew, conduct.Config.ClockSkew): the logs of snapshots of
	// one server name share a clock, those of two are compared with it.
	// Zero: the report is exactly the one of a single run over all logs.
	ClockSkew time.Duration
	// Robots, Timelines, OnPhase and Now are as in [Options].
	Robots    RobotsSet
	Timelines *timeline.Set
	OnPhase   func(Phase)
	Now       func() time.Time
	// Proxies, when set, gives the proxies in force from the snapshots'
	// --trusted-proxy values (all of them, in order) and --trust-xff (any
	// of them): the report names the proxies of the hits they forwarded
	// by them. nil: the built-in CDN edges, trusting none.
	Proxies func(trusted []string, trustXFF bool) (*proxy.Set, error)
}

// Why a snapshot is refused.
var (
	// ErrSnapshotVersion: it is of another format version.
	ErrSnapshotVersion = errors.New("another snapshot format version")
	// ErrCrawlerSet: it was made with another crawler set than the
	// others, or than --crawler.
	ErrCrawlerSet = errors.New("another crawler set")
	// ErrNotSnapshot: it is not a snapshot at all.
	ErrNotSnapshot = snapfile.ErrNotSnapshot
)

// SnapshotError is the error of a snapshot that cannot be merged with the
// others: of another format version or crawler set, or not a snapshot
// (the run is a usage error: nothing is merged). A damaged snapshot is not
// one: it is left out, said, and the merge ends with an [*InputError].
type SnapshotError struct {
	Name string
	Err  error
	// Why says it in words, with what to do.
	Why string
}

func (e *SnapshotError) Error() string { return e.Name + ": " + e.Why }
func (e *SnapshotError) Unwrap() error { return e.Err }

// snapshotRead is what the first pass learns of a snapshot.
type snapshotRead struct {
	file   SnapshotFile
	f      io.ReadSeekCloser
	header snapHeader
	// known is what the first pass (scan) found, the digest naming the
	// snapshot: the later passes check the snapshot against it, by its
	// CRC-32C rather than its SHA-256 again (snapfile.NewRereader).
	known   snapfile.Known
	scanned bool
	inputs  []snapInput // by input
	names   []string    // each input's name in the merged report
	dupOf   []string    // each input's copy read before, when it is one
	readWs  []string
	made    time.Time
	dnsWs   []string
	skip    bool   // a copy of one read before, or damaged
	damaged string // why it cannot be read, when it cannot
}

// MergeSnapshots makes the report that one `logs` run over the logs of
// every snapshot would have made (SPEC §14), in the order given: their
// inputs in order, each claimed hit as the run read it, the verdicts each
// run made (where two differ, the one made last), and the conduct checks
// over all of them at once, so that what only the union of the servers'
// logs shows (a budget spent across servers, two servers' requests at
// once) is found. Each snapshot is checked whole (format version,
// digest) before it is used. A snapshot given twice, or a copy of one, is
// said and read once; so is an input that two snapshots hold alike. File
// names that several snapshots share are told apart by their server's
// name (or their snapshot's), and said.
//
// It returns a [*SnapshotError] (and no report) for a snapshot that cannot
// be merged with the others; a damaged or unreadable one is left out,
// said, and the report comes with an [*InputError], as an input that
// could not be read whole does.
func MergeSnapshots(ctx context.Context, mo MergeOptions) (*Report, error) {
	reads := make([]*snapshotRead, len(mo.Snapshots))
	defer func() {
		for _, r := range reads {
			if r != nil && r.f != nil {
				r.f.Close()
			}
		}
	}()
	var notes []string
	seen := map[[32]byte]string{}
	scanned := scanAll(ctx, mo.Snapshots, reads)
	for i, sf := range mo.Snapshots {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		r := reads[i]
		if err := scanned[i]; err != nil {
			var se *SnapshotError
			if errors.As(err, &se) {
				return nil, se
			}
			r.damaged, r.skip = err.Error(), true
			continue
		}
		if first, ok := seen[r.known.Digest]; ok {
			r.skip = true
			notes = append(notes, fmt.Sprintf("%s is the same snapshot as %s: read once", sf.Name, first))
			continue
		}
		seen[r.known.Digest] = sf.Name
	}
	var kept []*snapshotRead
	for _, r := range reads {
		if !r.skip {
			kept = append(kept, r)
		}
	}
	profiles, named, err := mergeCrawlers(&mo, kept)
	if err != nil {
		return nil, err
	}
	var optOuts map[string]conduct.OptOuts
	if mo.OptOuts != nil && profiles[0] != nil {
		if optOuts, err = mo.OptOuts(profiles); err != nil {
			return nil, err
		}
	}
	notes = append(notes, markDuplicateInputs(kept)...)
	notes = append(notes, nameInputs(kept)...)

	table := newVerdictTable(len(profiles), len(kept))
	frames := newFramePool()
	if err := readAllVerdicts(ctx, kept, table, frames); err != nil {
		return nil, err
	}

	lists, listNotes := mergeLists(profiles, kept)
	o := Options{
		Named:      named,
		Classifier: table,
		Robots:     mo.Robots,
		Timelines:  mo.Timelines,
		OnPhase:    mo.OnPhase,
		Now:        mo.Now,
	}
	if mo.Proxies != nil && len(kept) > 0 {
		var trusted []string
		xff := false
		for _, r := range kept {
			trusted = appendNew(trusted, r.header.TrustedProxies...)
			xff = xff || r.header.TrustXFF
		}
		set, err := mo.Proxies(trusted, xff)
		if err != nil {
			return nil, &SnapshotError{Name: kept[0].file.Name, Err: err,
				Why: fmt.Sprintf("its --trusted-proxy values (%s) are not known here: %v", strings.Join(trusted, ", "), err)}
		}
		o.Trust, o.TrustXFF = set, xff
	}
	// Each file's clock is its server's.
	servers := map[string]string{}
	for _, r := range kept {
		for _, name := range r.names {
			servers[name] = r.header.Server
		}
	}
	clock := func(file string) string { return servers[file] }
	for i, p := range profiles {
		s := Subject{Profile: p, List: lists[i], Audit: &Audit{Settled: table.settledFunc(i)}}
		if p != nil {
			s.Conduct = conduct.ConfigOf(p, mo.Overrides)
			s.Conduct.MaxViolations = mo.MaxViolations
			s.Conduct.Clock, s.Conduct.ClockSkew = clock, mo.ClockSkew
			if oo := optOuts[p.Name]; oo != nil {
				s.Conduct.OptedOut, s.Conduct.OptOutGrace = oo.For, mo.OptOutGrace
			}
		}
		o.Subjects = append(o.Subjects, s)
	}
	if len(profiles) == 1 && profiles[0] == nil {
		o.Subjects = nil // a run that audited no crawler
	}
	set := startRun(&o)
	au := set.audits[0]
	first := len(au.inputs)
	o.phase(PhaseRead)
	var failed []string
	st := startStoring()
	defer st.stop()
	for _, r := range reads {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		switch {
		case r.damaged != "":
			msg := fmt.Sprintf("cannot read snapshot %s: %s; none of it was merged", r.file.Name, r.damaged)
			set.Warn(msg)
			set.AddInput(InputReport{File: r.file.Name, Error: msg}, nil)
			failed = append(failed, r.file.Name)
		case !r.skip:
			in, err := r.replay(ctx, set, frames, table, st)
			if err != nil {
				return nil, fmt.Errorf("%s: %w (it changed while it was read)", r.file.Name, err)
			}
			failed = append(failed, in...)
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	// Every address is in the audits now: the verdicts given without DNS
	// were asked for as each was first seen, and are not asked again.
	table.release()
	// Nor are the frames and batches of the reading kept for the checks.
	st.stop()
	for len(frames) > 0 {
		<-frames
	}
	var readWs []string
	for _, r := range kept {
		readWs = appendNew(readWs, r.readWs...)
	}
	readWs = appendNew(readWs, notes...)
	readWs = appendNew(readWs, listNotes...)
	o.ReadWarnings = func([]InputReport) []string { return readWs }
	for _, r := range kept {
		table.warnings = appendNew(table.warnings, r.dnsWs...)
	}
	table.warnings = append(table.warnings, table.disagreements(profiles)...)
	return finishRun(ctx, &o, set, au.inputs[first:], failed)
}

// scanAll makes the first pass over the snapshots, into reads, a few at
// once (they are independent): it returns each one's error. Once ctx is
// cancelled, those not yet read are left nil.
func scanAll(ctx context.Context, snaps []SnapshotFile, reads []*snapshotRead) []error {
	errs := make([]error, len(snaps))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(snaps)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				errs[i] = reads[i].scan()
			}
		}()
	}
	for i, sf := range snaps {
		reads[i] = &snapshotRead{file: sf}
		if ctx.Err() == nil {
			next <- i
		}
	}
	close(next)
	wg.Wait()
	return errs
}

// appendNew appends each of ws not in out already.
func appendNew(out []string, ws ...string) []string {
	for _, w := range ws {
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// reader opens the snapshot afresh for a pass.
func (r *snapshotRead) reader() (*snapfile.Reader, error) {
	if r.f == nil {
		f, err := r.file.Open()
		if err != nil {
			return nil, err
		}
		r.f = f
	} else if _, err := r.f.Seek(0, io.SeekStart); err != nil {
		return nil, err
	}
	if r.scanned {
		return snapfile.NewRereader(r.f, r.known)
	}
	return snapfile.NewReader(r.f)
}

// scan is the first pass: it checks the snapshot whole and reads its
// header and its inputs' counts.
func (r *snapshotRead) scan() error {
	sr, err := r.reader()
	var ve *snapfile.VersionError
	switch {
	case errors.As(err, &ve):
		return &SnapshotError{Name: r.file.Name, Err: ErrSnapshotVersion,
			Why: fmt.Sprintf("a snapshot of %v; make every snapshot with the same lohibot-audit version as the merge", err)}
	case errors.Is(err, snapfile.ErrNotSnapshot):
		return &SnapshotError{Name: r.file.Name, Err: ErrNotSnapshot,
			Why: "not a lohibot-audit snapshot (merge reads the files 'logs --snapshot FILE' writes; give logs to 'logs')"}
	case err != nil:
		return err
	}
	var header bool
	for {
		kind, p, err := sr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		switch kind {
		case snapfile.KindHeader:
			if err := json.Unmarshal(p, &r.header); err != nil {
				return snapfile.ErrCorrupt
			}
			header = true
		case snapfile.KindInputEnd:
			var in snapInput
			if err := json.Unmarshal(p, &in); err != nil {
				return snapfile.ErrCorrupt
			}
			// Only what naming and telling copies apart need is kept.
			in.Examples = nil
			r.inputs = append(r.inputs, in)
		case snapfile.KindReadWarnings:
			if err := json.Unmarshal(p, &r.readWs); err != nil {
				return snapfile.ErrCorrupt
			}
		case snapfile.KindDNSWarnings:
			var d snapDNS
			if err := json.Unmarshal(p, &d); err != nil {
				return snapfile.ErrCorrupt
			}
			r.made, r.dnsWs = d.Made, d.Warnings
		}
	}
	if !header || len(r.header.Crawlers) == 0 {
		return snapfile.ErrCorrupt
	}
	r.known, r.scanned = sr.Known(), true
	return nil
}

// profiles are the crawlers the snapshot was made with.
func (r *snapshotRead) profiles() []*crawler.Profile {
	out := make([]*crawler.Profile, len(r.header.Crawlers))
	for i, c := range r.header.Crawlers {
		out[i] = c.Profile
	}
	return out
}

// crawlerNames names a crawler set in a message.
func crawlerNames(ps []*crawler.Profile) string {
	var names []string
	for _, p := range ps {
		if p == nil {
			names = append(names, "no crawler")
		} else {
			names = append(names, p.Name)
		}
	}
	return strings.Join(names, ", ")
}

// mergeCrawlers checks that the snapshots share a crawler set (and that
// it is --crawler's, when given) and returns it, and whether the report
// names its crawlers.
func mergeCrawlers(mo *MergeOptions, kept []*snapshotRead) ([]*crawler.Profile, bool, error) {
	if len(kept) == 0 {
		if len(mo.Profiles) > 0 {
			return mo.Profiles, mo.Named, nil
		}
		return []*crawler.Profile{nil}, mo.Named, nil
	}
	first := kept[0]
	named := mo.Named
	for _, r := range kept {
		named = named || r.header.Named
		if r.header.Fingerprint != first.header.Fingerprint || Fingerprint(r.profiles()) != r.header.Fingerprint {
			return nil, false, &SnapshotError{Name: r.file.Name, Err: ErrCrawlerSet,
				Why: fmt.Sprintf("made with another crawler set (%s) than %s (%s); make every snapshot with the same --crawler flags and lohibot-audit version",
					crawlerNames(r.profiles()), first.file.Name, crawlerNames(first.profiles()))}
		}
	}
	if len(mo.Profiles) > 0 {
		if Fingerprint(mo.Profiles) != first.header.Fingerprint {
			return nil, false, &SnapshotError{Name: first.file.Name, Err: ErrCrawlerSet,
				Why: fmt.Sprintf("made with another crawler set (%s) than --crawler gives (%s); leave out --crawler to merge the snapshots' own, or give theirs, in their order",
					crawlerNames(first.profiles()), crawlerNames(mo.Profiles))}
		}
		return mo.Profiles, true, nil
	}
	return first.profiles(), named, nil
}

// markDuplicateInputs finds the inputs that an earlier snapshot holds
// alike (the same server, name, counts and times: the same log read
// twice, as by two cron runs) and says so; they are read once.
func markDuplicateInputs(kept []*snapshotRead) []string {
	type key struct {
		server, name         string
		lines, bytes, malf   int64
		firstTime, lastTime  time.Time
		site, format, errMsg string
	}
	seen := map[key]string{}
	var notes []string
	for _, r := range kept {
		r.dupOf = make([]string, len(r.inputs))
		for j, in := range r.inputs {
			rep := in.Report
			k := key{r.header.Server, rep.File, rep.Lines, rep.Bytes, rep.Malformed, rep.FirstTime, rep.LastTime, in.Site, rep.LogFormat, rep.Error}
			if rep.Lines == 0 && rep.Bytes == 0 {
				continue // nothing read: nothing to count twice
			}
			if other, ok := seen[k]; ok {
				r.dupOf[j] = other
				notes = append(notes, fmt.Sprintf("%s in %s is the same log as in %s (server %s, %d lines from %s to %s): read once",
					parse.EscapeControl(rep.File), r.file.Name, other, parse.EscapeControl(r.header.Server), rep.Lines,
					rep.FirstTime.Format(time.RFC3339), rep.LastTime.Format(time.RFC3339)))
				continue
			}
			seen[k] = r.file.Name
		}
	}
	return notes
}

// nameInputs names each input in the merged report: as its snapshot
// names it, unless inputs of several snapshots share the name; those are
// told apart by their server's name (SERVER:FILE), or when servers share
// it too, by their snapshot's base name or path.
func nameInputs(kept []*snapshotRead) []string {
	type at struct{ k, j int }
	byName := map[string][]at{}
	var order []string
	for k, r := range kept {
		r.names = make([]string, len(r.inputs))
		for j, in := range r.inputs {
			r.names[j] = in.Report.File
			if r.dupOf[j] != "" {
				continue
			}
			name := in.Report.File
			if len(byName[name]) == 0 || byName[name][len(byName[name])-1].k != k {
				if len(byName[name]) == 0 {
					order = append(order, name)
				}
			}
			byName[name] = append(byName[name], at{k, j})
		}
	}
	var renamed []string
	for _, name := range order {
		ats := byName[name]
		snaps := map[int]bool{}
		for _, a := range ats {
			snaps[a.k] = true
		}
		if len(snaps) < 2 {
			continue
		}
		qualifiers := []func(r *snapshotRead) string{
			func(r *snapshotRead) string { return r.header.Server },
			func(r *snapshotRead) string { return filepath.Base(r.file.Name) },
			func(r *snapshotRead) string { return r.file.Name },
		}
		var pick func(r *snapshotRead) string
		for _, q := range qualifiers {
			distinct := map[string]int{}
			for k := range snaps {
				distinct[q(kept[k])]++
			}
			if len(distinct) == len(snaps) && !(distinct[""] > 0) {
				pick = q
				break
			}
		}
		for _, a := range ats {
			r := kept[a.k]
			qual := fmt.Sprint(a.k + 1)
			if pick != nil {
				qual = pick(r)
			}
			r.names[a.j] = qual + ":" + name
			renamed = append(renamed, parse.EscapeControl(r.names[a.j]))
		}
	}
	if len(renamed) == 0 {
		return nil
	}
	const maxListed = 20
	if len(renamed) > maxListed {
		renamed = append(renamed[:maxListed], fmt.Sprintf("and %d more", len(renamed)-maxListed))
	}
	return []string{"logs of several snapshots share a file name, so each is named after its server (or snapshot): " + strings.Join(renamed, ", ")}
}

// mergeLists returns each crawler's IP list in force for the merged
// report: the snapshots' list, the one fetched last when they hold the
// same one; when they hold different ones, all of them, and a warning.
func mergeLists(profiles []*crawler.Profile, kept []*snapshotRead) ([]*verify.IPList, []string) {
	lists := make([]*verify.IPList, len(profiles))
	var notes []string
	for i, p := range profiles {
		type key struct {
			source, sha string
			created     time.Time
			n           int
		}
		var distinct []*verify.IPList
		index := map[key]int{}
		for _, r := range kept {
			if i >= len(r.header.Crawlers) || r.header.Crawlers[i].List == nil {
				continue
			}
			l := r.header.Crawlers[i].List
			k := key{l.Source, l.SHA256, l.CreationTime, len(l.Prefixes)}
			if j, ok := index[k]; ok {
				if l.Fetched.After(distinct[j].Fetched) {
					distinct[j] = l
				}
				continue
			}
			index[k] = len(distinct)
			distinct = append(distinct, l)
		}
		switch len(distinct) {
		case 0:
		case 1:
			lists[i] = distinct[0]
		default:
			union := &verify.IPList{Source: distinct[len(distinct)-1].Source}
			var sources []string
			for _, l := range distinct {
				union.Parts = append(union.Parts, l.Each()...)
				union.Prefixes = append(union.Prefixes, l.Prefixes...)
				sources = append(sources, fmt.Sprintf("%s (%d prefixes)", l.Source, len(l.Prefixes)))
			}
			lists[i] = union
			who := "the crawler"
			if p != nil {
				who = p.Name
			}
			notes = append(notes, fmt.Sprintf("the snapshots were made with different IP lists of %s: %s; each verdict is its snapshot's", who, strings.Join(sources, ", ")))
		}
	}
	return lists, notes
}

// verdictTable holds the verdicts of the merged snapshots, per crawler:
// for each address, the one made last.
type verdictTable struct {
	made []time.Time // by snapshot, as kept
	// shards hold the addresses' verdicts, dealt by shardOf: they are
	// filled at once, each in a goroutine of its own (readAllVerdicts).
	shards [verdictShards]verdictShard
	// settled are the verdicts given without DNS, shared, by crawler;
	// results the others, by address, once every snapshot's verdicts are
	// read (those of every shard).
	settled  [][]verify.Result
	keys     []map[resultKey]int32
	results  []map[netip.Addr]verify.Result
	warnings []string
	// differ counts, by crawler, the addresses whose snapshots gave
	// different verdicts, with a few of them.
	differ   []int
	examples [][]string
	// hint, while the hits are replayed, is what Settled gives the
	// address of the hit being added, by crawler, looked up ahead of it
	// (settledIndex).
	hint settledHint
}

// verdictShards is how many parts a verdictTable deals the addresses
// over.
const verdictShards = 2

// verdictShard holds the verdicts of the addresses of one shard, by
// crawler.
type verdictShard struct {
	// entries are each crawler's addresses (without a zone: a key without
	// pointers, which the garbage collector need not scan; a million
	// spoofers take 30 MB less) and zoned, those with a zone.
	entries []map[addrKey]verdictEntry
	zoned   []map[netip.Addr]verdictEntry
	results []map[netip.Addr]verify.Result
	// differ and examples are verdictTable's, for the shard's addresses;
	// the examples with when they were put (verdictPut.seq).
	differ   []int
	examples [][]verdictExample
}

type verdictExample struct {
	seq  int64
	addr netip.Addr
}

// maxDifferExamples is how many addresses whose verdicts differ are named.
const maxDifferExamples = 3

// shardOf returns the shard of an address given as its 16 bytes: a few
// of its bits. An attacker choosing addresses that all fall in one shard
// only leaves the other's goroutine idle.
func shardOf(ip *[16]byte) int {
	return int(ip[15]^ip[14]^ip[13]^ip[11]) % verdictShards
}

// settledHint is the settled verdicts of an address, by crawler: an
// index into verdictTable.settled, or -1 for none.
type settledHint struct {
	addr netip.Addr
	idx  []int32
	set  bool
}

// settledIndex returns the settled verdict of address a of crawler c
// (an index into settled), or -1 for none. It only reads the table.
func (t *verdictTable) settledIndex(c int, a netip.Addr) int32 {
	e, ok := t.entry(c, a)
	if !ok || e.settled < 0 {
		return -1
	}
	return e.settled
}

type verdictEntry struct {
	snap    int32
	settled int32 // index into settled, or -1 for a result
}

func newVerdictTable(crawlers, snapshots int) *verdictTable {
	t := &verdictTable{made: make([]time.Time, snapshots)}
	for range crawlers {
		t.settled = append(t.settled, nil)
		t.keys = append(t.keys, map[resultKey]int32{})
		t.results = append(t.results, map[netip.Addr]verify.Result{})
	}
	for s := range t.shards {
		sh := &t.shards[s]
		for range crawlers {
			sh.entries = append(sh.entries, map[addrKey]verdictEntry{})
			sh.zoned = append(sh.zoned, map[netip.Addr]verdictEntry{})
			sh.results = append(sh.results, map[netip.Addr]verify.Result{})
		}
		sh.differ = make([]int, crawlers)
		sh.examples = make([][]verdictExample, crawlers)
	}
	t.differ = make([]int, crawlers)
	t.examples = make([][]string, crawlers)
	return t
}

// entry returns the verdict entry of address a of crawler c.
func (t *verdictTable) entry(c int, a netip.Addr) (verdictEntry, bool) {
	ip := a.As16()
	return t.shards[shardOf(&ip)].entry(c, a, &ip)
}

// entry returns the verdict entry of address a (its 16 bytes ip) of
// crawler c.
func (sh *verdictShard) entry(c int, a netip.Addr, ip *[16]byte) (verdictEntry, bool) {
	if a.Zone() != "" {
		e, ok := sh.zoned[c][a]
		return e, ok
	}
	e, ok := sh.entries[c][addrKey{ip: *ip, v4: a.Is4()}]
	return e, ok
}

// setEntry sets the verdict entry of address a (its 16 bytes ip) of
// crawler c.
func (sh *verdictShard) setEntry(c int, a netip.Addr, ip *[16]byte, e verdictEntry) {
	if a.Zone() != "" {
		sh.zoned[c][a] = e
		return
	}
	sh.entries[c][addrKey{ip: *ip, v4: a.Is4()}] = e
}

// settledID returns the index of the verdict given without DNS res of
// crawler c in settled, adding it when new.
func (t *verdictTable) settledID(c int, res verify.Result) int32 {
	key := resultKeyOf(&res)
	i, ok := t.keys[c][key]
	if !ok {
		res.Addr = netip.Addr{}
		i = int32(len(t.settled[c]))
		t.settled[c] = append(t.settled[c], res)
		t.keys[c][key] = i
	}
	return i
}

// verdictPut is a verdict for a shard to put in its table: that of
// address a of crawler c, made in snapshot k (as kept), given without
// DNS when settled is not -1, as settled[c][settled] (settledID), else
// the batch's results[res]. seq orders the puts of all shards.
type verdictPut struct {
	a       netip.Addr
	seq     int64
	c, k    int32
	settled int32
	res     int32
}

// verdictBatch is verdicts for a shard to put, in order.
type verdictBatch struct {
	puts    []verdictPut
	results []verify.Result
	// settled is verdictTable.settled as it was when the batch was sent:
	// the shard reads it while more are added.
	settled [][]verify.Result
}

// put gives an address the verdict of p, unless it has one made later.
func (sh *verdictShard) put(t *verdictTable, b *verdictBatch, p *verdictPut) {
	c, a := int(p.c), p.a
	ip := a.As16()
	var res *verify.Result
	if p.settled >= 0 {
		res = &b.settled[c][p.settled]
	} else {
		res = &b.results[p.res]
	}
	old, had := sh.entry(c, a, &ip)
	if had {
		var prev verify.Result
		if old.settled >= 0 {
			prev = b.settled[c][old.settled]
		} else {
			prev = sh.results[c][a]
		}
		if prev.Verdict != res.Verdict || prev.Reason != res.Reason {
			sh.differ[c]++
			if len(sh.examples[c]) < maxDifferExamples {
				sh.examples[c] = append(sh.examples[c], verdictExample{seq: p.seq, addr: a})
			}
		}
		if !t.made[p.k].After(t.made[old.snap]) {
			return
		}
		if old.settled < 0 {
			delete(sh.results[c], a)
		}
	}
	if p.settled < 0 {
		sh.results[c][a] = *res
	}
	sh.setEntry(c, a, &ip, verdictEntry{snap: p.k, settled: p.settled})
}

// release lets the addresses' entries go once the hits are replayed: the
// audits asked Settled for each address as they first saw it (Classify's
// results stay).
func (t *verdictTable) release() {
	for s := range t.shards {
		sh := &t.shards[s]
		for c := range sh.entries {
			sh.entries[c], sh.zoned[c] = nil, nil
		}
	}
}

// settledFunc is the Audit.Settled of crawler c: the verdicts the
// snapshots gave without DNS.
func (t *verdictTable) settledFunc(c int) func(netip.Addr) (verify.Result, bool) {
	return func(a netip.Addr) (verify.Result, bool) {
		if h := &t.hint; h.set && h.addr == a {
			i := h.idx[c]
			if i < 0 {
				return verify.Result{}, false
			}
			r := t.settled[c][i]
			r.Addr = a
			return r, true
		}
		e, ok := t.entry(c, a)
		if !ok || e.settled < 0 {
			return verify.Result{}, false
		}
		r := t.settled[c][e.settled]
		r.Addr = a
		return r, true
	}
}

// Classify gives the verdicts the snapshots made with DNS.
func (t *verdictTable) Classify(_ context.Context, c int, _ []netip.Addr) map[netip.Addr]verify.Result {
	return t.results[c]
}

// Warnings are the snapshots' verifier warnings, and which verdicts they
// disagreed on.
func (t *verdictTable) Warnings() []string { return t.warnings }

// disagreements says, per crawler, on how many addresses the snapshots'
// verdicts differed.
func (t *verdictTable) disagreements(profiles []*crawler.Profile) []string {
	var out []string
	for c, n := range t.differ {
		if n == 0 {
			continue
		}
		who := ""
		if p := profiles[c]; p != nil && len(profiles) > 1 {
			who = " of " + p.Name
		}
		out = append(out, fmt.Sprintf("the snapshots' verdicts%s differ for %d addresses (such as %s): the one made last is used", who, n, strings.Join(t.examples[c], ", ")))
	}
	return out
}

// verdictBatchLen is how many verdicts a batch for a shard holds.
const verdictBatchLen = 4096

// readAllVerdicts is the second pass: it puts the verdicts of the
// snapshots kept in the table, in order. Each snapshot is read in a
// goroutine of its own, a few frames ahead, and its verdicts decoded;
// each shard of the table puts its addresses' in a goroutine of its own.
// It returns ctx's error, or the first snapshot's that could not be read.
func readAllVerdicts(ctx context.Context, kept []*snapshotRead, t *verdictTable, frames framePool) error {
	var todo [verdictShards]chan verdictBatch
	free := make(chan verdictBatch, 3*verdictShards)
	var wg sync.WaitGroup
	for s := range todo {
		todo[s] = make(chan verdictBatch, 2)
		wg.Add(1)
		go func() {
			defer wg.Done()
			sh := &t.shards[s]
			for b := range todo[s] {
				for i := range b.puts {
					sh.put(t, &b, &b.puts[i])
				}
				clear(b.results)
				select {
				case free <- verdictBatch{puts: b.puts[:0], results: b.results[:0]}:
				default:
				}
			}
		}()
	}
	var cur [verdictShards]verdictBatch
	send := func(s int) {
		b := cur[s]
		b.settled = slices.Clone(t.settled)
		todo[s] <- b
		select {
		case cur[s] = <-free:
		default:
			cur[s] = verdictBatch{}
		}
	}
	var seq int64
	put := func(c, k int, a netip.Addr, res *verify.Result, settled int32) {
		ip := a.As16()
		s := shardOf(&ip)
		b := &cur[s]
		p := verdictPut{a: a, seq: seq, c: int32(c), k: int32(k), settled: settled, res: -1}
		seq++
		if settled < 0 {
			p.res = int32(len(b.results))
			b.results = append(b.results, *res)
		}
		b.puts = append(b.puts, p)
		if len(b.puts) == verdictBatchLen {
			send(s)
		}
	}
	var err error
	for k, r := range kept {
		if err = ctx.Err(); err != nil {
			break
		}
		if rerr := r.readVerdicts(k, t, frames, put); rerr != nil {
			err = fmt.Errorf("%s: %w (it changed while it was read)", r.file.Name, rerr)
			break
		}
	}
	for s := range todo {
		if len(cur[s].puts) > 0 {
			send(s)
		}
		close(todo[s])
	}
	wg.Wait()
	if err != nil {
		return err
	}
	t.joinShards()
	return nil
}

// joinShards gathers what the shards found once they are filled: the
// results, the differing verdicts and their first examples.
func (t *verdictTable) joinShards() {
	for c := range t.results {
		var examples []verdictExample
		for s := range t.shards {
			sh := &t.shards[s]
			if len(sh.results[c]) > len(t.results[c]) {
				sh.results[c], t.results[c] = t.results[c], sh.results[c]
			}
			maps.Copy(t.results[c], sh.results[c])
			sh.results[c] = nil
			t.differ[c] += sh.differ[c]
			examples = append(examples, sh.examples[c]...)
		}
		slices.SortFunc(examples, func(x, y verdictExample) int { return cmp.Compare(x.seq, y.seq) })
		for _, e := range examples[:min(len(examples), maxDifferExamples)] {
			t.examples[c] = append(t.examples[c], e.addr.String())
		}
	}
}

// readVerdicts reads the snapshot's verdicts (it is snapshot k of those
// kept) and gives each to put, in order: the crawler, the address, the
// verdict, and its index in t.settled when it was given without DNS
// (else -1). The snapshot is read in a goroutine of its own, a few
// frames ahead.
func (r *snapshotRead) readVerdicts(k int, t *verdictTable, frames framePool, put func(c, k int, a netip.Addr, res *verify.Result, settled int32)) error {
	sr, err := r.reader()
	if err != nil {
		return err
	}
	feed := readAhead(sr, string([]byte{snapfile.KindSettled, snapfile.KindVerdicts}), frames, nil)
	defer feed.stop()
	t.made[k] = r.made
	settled := map[int][]verify.Result{}
	// ids are the indexes in t.settled of settled's verdicts, by
	// crawler, as far as looked up (-1: not yet).
	ids := map[int][]int32{}
	for {
		f, ok := <-feed.frames
		switch {
		case !ok:
			return snapfile.ErrTruncated
		case errors.Is(f.err, io.EOF):
			return nil
		case f.err != nil:
			return f.err
		}
		switch f.kind {
		case snapfile.KindSettled:
			var s snapSettled
			if err := json.Unmarshal(f.p, &s); err != nil {
				return snapfile.ErrCorrupt
			}
			settled[s.Crawler] = s.Results
			ids[s.Crawler] = slices.Repeat([]int32{-1}, len(s.Results))
		case snapfile.KindVerdicts:
			if err := decodeVerdicts(f.p, func(c int, a netip.Addr, idx int, res *verify.Result) error {
				if c >= len(t.settled) {
					return snapfile.ErrCorrupt
				}
				if res == nil {
					if idx >= len(settled[c]) {
						return snapfile.ErrCorrupt
					}
					id := ids[c][idx]
					if id < 0 {
						id = t.settledID(c, settled[c][idx])
						ids[c][idx] = id
					}
					put(c, k, a, nil, id)
					return nil
				}
				put(c, k, a, res, -1)
				return nil
			}); err != nil {
				return err
			}
		}
		feed.recycle(f)
	}
}

// decodeVerdicts calls fn with each verdict of a verdict block: the
// crawler, the address, and the index of its settled verdict or its
// result.
func decodeVerdicts(b []byte, fn func(c int, a netip.Addr, settled int, res *verify.Result) error) error {
	c, n := binary.Uvarint(b)
	if n <= 0 || c > 64 {
		return snapfile.ErrCorrupt
	}
	for i := n; i < len(b); {
		a, n := readAddr(b[i:])
		if n == 0 || i+n >= len(b) {
			return snapfile.ErrCorrupt
		}
		i += n
		tag := b[i]
		i++
		v, n := binary.Uvarint(b[i:])
		if n <= 0 {
			return snapfile.ErrCorrupt
		}
		i += n
		switch tag {
		case verdictSettled:
			if v > 1<<31 {
				return snapfile.ErrCorrupt
			}
			if err := fn(int(c), a, int(v), nil); err != nil {
				return err
			}
		case verdictResult:
			if v > uint64(len(b)-i) {
				return snapfile.ErrCorrupt
			}
			var res verify.Result
			if err := json.Unmarshal(b[i:i+int(v)], &res); err != nil {
				return snapfile.ErrCorrupt
			}
			i += int(v)
			if err := fn(int(c), a, 0, &res); err != nil {
				return err
			}
		default:
			return snapfile.ErrCorrupt
		}
	}
	return nil
}

// replay is the third pass: it gives the audits each input's hits,
// warnings and counts, as the run that made the snapshot gave them. It
// returns the inputs that were not read whole. The snapshot is read and
// its hits decoded in a goroutine of their own, a few frames ahead of
// the audits taking them in.
func (r *snapshotRead) replay(ctx context.Context, set *auditSet, frames framePool, table *verdictTable, st *storing) ([]string, error) {
	sr, err := r.reader()
	if err != nil {
		return nil, err
	}
	// The verdicts given without DNS are looked up beside the audits
	// taking the hits in, for the addresses they see first.
	nc := len(table.settled)
	hint := func(a netip.Addr, out []int32) []int32 {
		for c := range nc {
			i := int32(-1)
			if a.IsValid() {
				i = table.settledIndex(c, a)
			}
			out = append(out, i)
		}
		return out
	}
	feed := readAhead(sr, string([]byte{snapfile.KindInputStart, snapfile.KindHits, snapfile.KindWarning, snapfile.KindInputEnd}), frames, hint)
	defer feed.stop()
	defer func() { table.hint.set = false }()
	var failed []string
	j := -1 // the input being replayed
	skip := false
	// A warning an earlier snapshot said (or the merge) is said once, as
	// a run says it once; within the snapshot, as often as it was.
	said := map[string]bool{}
	for _, w := range set.audits[0].warnings {
		said[w] = true
	}
	var rec parse.Record
	name := ""
	// The hits sent to st are stored before this returns, on an error
	// too: their frames are the feed's.
	defer st.wait()
	for {
		f, ok := <-feed.frames
		switch {
		case !ok:
			return nil, snapfile.ErrTruncated
		case errors.Is(f.err, io.EOF):
			return failed, nil
		case f.err != nil:
			return nil, f.err
		}
		kind, p := f.kind, f.p
		switch kind {
		case snapfile.KindInputStart:
			j++
			if j >= len(r.inputs) {
				return nil, snapfile.ErrCorrupt
			}
			skip, name = r.dupOf[j] != "", r.names[j]
		case snapfile.KindHits:
			// The hits of an input read once already are decoded all the
			// same: the strings they define are named by later blocks.
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if !skip && j >= 0 {
				b := st.batch()
				for i := range f.hits {
					h := &f.hits[i]
					recordOf(&rec, h, name)
					if h.Client.IsValid() && len(f.hints) >= (i+1)*nc {
						table.hint = settledHint{addr: h.Client, idx: f.hints[i*nc : (i+1)*nc], set: true}
					} else {
						table.hint.set = false
					}
					// As set.Add (a merge writes no snapshot): the
					// stores of the hits follow in st's goroutine.
					for m := rec.Claims; m != 0; m &= m - 1 {
						if c := bits.TrailingZeros64(m); c < len(set.audits) {
							b.hits = append(b.hits, pendingStore{a: set.audits[c]})
							if !set.audits[c].take(&rec, &b.hits[len(b.hits)-1].p) {
								b.hits = b.hits[:len(b.hits)-1]
							}
						}
					}
				}
				table.hint.set = false
				// The frame's memory, which the hits' strings are in,
				// is given back once they are stored.
				st.send(b, feed, f)
				continue
			}
		case snapfile.KindWarning:
			if skip || said[string(p)] {
				break
			}
			set.Warn(string(p))
		case snapfile.KindInputEnd:
			if j < 0 || skip {
				break
			}
			st.wait() // the input's hits stored before its segment ends
			var in snapInput
			if err := json.Unmarshal(p, &in); err != nil {
				return nil, snapfile.ErrCorrupt
			}
			rep := in.Report
			rep.File, rep.Site, rep.HostLogged = name, in.Site, in.HostLogged
			for i := range in.Examples {
				if in.Examples[i].File == in.Report.File {
					in.Examples[i].File = name
				}
			}
			for i, a := range set.audits {
				if i < len(in.Filtered) {
					a.summary.FilteredOut += in.Filtered[i]
				}
				if i < len(in.Unclaimed) {
					a.summary.UnclaimedHit += in.Unclaimed[i]
				}
				a.addInput(rep, in.Examples, r.header.Since)
			}
			if rep.Error != "" {
				failed = append(failed, name)
			}
		}
		feed.recycle(f)
	}
}

// storing stores the hits the replay has taken in (Audit.take), a few
// frames behind, in a goroutine of its own (Audit.store), and then gives
// back their frame's memory.
type storing struct {
	todo chan storeBatch
	free chan []pendingStore
	done chan struct{}
}

// storeBatch is the hits of one frame to store, and the feed to give
// the frame back to; or, when sync is set, a mark to tell that every
// batch before it is stored.
type storeBatch struct {
	hits []pendingStore
	feed *frameFeed
	f    aheadFrame
	sync chan struct{}
}

// pendingStore is a hit that audit a has taken in, to store.
type pendingStore struct {
	a *Audit
	p pendingHit
}

// Batches of hits taken in ahead of their stores.
const storeAhead = 2

func startStoring() *storing {
	st := &storing{todo: make(chan storeBatch, storeAhead), free: make(chan []pendingStore, storeAhead+2), done: make(chan struct{})}
	go func() {
		defer close(st.done)
		for b := range st.todo {
			if b.sync != nil {
				close(b.sync)
				continue
			}
			for i := range b.hits {
				b.hits[i].a.store(&b.hits[i].p)
			}
			b.feed.recycle(b.f)
			clear(b.hits) // no strings kept alive while waiting for reuse
			select {
			case st.free <- b.hits[:0]:
			default:
			}
		}
	}()
	return st
}

// batch returns an empty batch to fill.
func (st *storing) batch() storeBatch {
	select {
	case h := <-st.free:
		return storeBatch{hits: h}
	default:
		return storeBatch{}
	}
}

// send has the hits of b stored, and then frame f given back to feed.
func (st *storing) send(b storeBatch, feed *frameFeed, f aheadFrame) {
	b.feed, b.f = feed, f
	st.todo <- b
}

// wait returns once every hit sent is stored.
func (st *storing) wait() {
	sync := make(chan struct{})
	st.todo <- storeBatch{sync: sync}
	<-sync
}

// stop stores what was sent and ends the goroutine, letting go of the
// batches' memory; stopping again does nothing.
func (st *storing) stop() {
	if st.todo == nil {
		return // stopped before
	}
	close(st.todo)
	<-st.done
	st.todo, st.free = nil, nil
}

// aheadFrame is a frame of a snapshot read ahead: its payload, a copy
// of its own, and the hits of a hit block decoded (their Target and Raw
// in the payload); or, last, err: io.EOF at the end, the snapshot being
// the one the first pass read, or why it could not be read.
type aheadFrame struct {
	kind  byte
	p     []byte
	hits  []snapfile.Hit
	hints []int32 // by hit, what frameFeed.hint gives its client
	err   error
}

// framePool keeps the memory of frames done with, for the next ones
// (those of the next snapshot too): as many as may be in use at once,
// read ahead, replayed and stored.
type framePool chan aheadFrame

func newFramePool() framePool { return make(framePool, aheadFrames+storeAhead+3) }

// frameFeed reads a snapshot's frames in a goroutine of its own.
type frameFeed struct {
	frames chan aheadFrame
	free   framePool // frames done with, for their memory
	quit   chan struct{}
	// taken is told as frames are done with: a large frame is read
	// ahead only when nothing else is.
	taken chan struct{}
}

// Frames read ahead: at most aheadFrames, of which none larger than
// bigFrame (hit blocks are at most 64 KiB) unless it is the only one,
// so that a snapshot of frames near snapfile.MaxFrame is not held many
// times over.
const (
	aheadFrames = 4
	bigFrame    = 1 << 20
)

// readAhead starts reading the frames of sr, a few ahead of the caller,
// who calls recycle with each frame once done with it and ends with
// stop: those of the kinds listed (the others are read, and left out);
// sr is a reader again (snapfile.NewRereader), which ends in an error if
// the snapshot is not the one the first pass read. hint, when not
// nil, is called with the client of each hit decoded (not again for the
// address of either of the two hits before), and what it appends is kept
// in the frame's hints: as many values for every hit.
func readAhead(sr *snapfile.Reader, kinds string, free framePool, hint func(a netip.Addr, out []int32) []int32) *frameFeed {
	ff := &frameFeed{frames: make(chan aheadFrame, aheadFrames), free: free,
		quit: make(chan struct{}), taken: make(chan struct{}, 1)}
	go func() {
		defer close(ff.frames)
		var d snapfile.HitDecoder
		// Where the hints of the last two addresses are in the frame.
		type hintAt struct {
			a     netip.Addr
			at, n int
		}
		var last [2]hintAt
		send := func(f aheadFrame) bool {
			select {
			case ff.frames <- f:
				return true
			case <-ff.quit:
				return false
			}
		}
		for {
			kind, p, err := sr.Next()
			if err != nil {
				send(aheadFrame{err: err})
				return
			}
			if strings.IndexByte(kinds, kind) < 0 {
				continue
			}
			var f aheadFrame
			select {
			case f = <-ff.free:
			default:
			}
			f.kind, f.p, f.hits, f.hints = kind, append(f.p[:0], p...), f.hits[:0], f.hints[:0]
			last = [2]hintAt{}
			if kind == snapfile.KindHits {
				err := d.Decode(f.p, func(h *snapfile.Hit) error {
					f.hits = append(f.hits, *h)
					if hint != nil {
						n := len(f.hints)
						switch {
						case last[0].n > 0 && h.Client == last[0].a:
							f.hints = append(f.hints, f.hints[last[0].at:last[0].at+last[0].n]...)
						case last[1].n > 0 && h.Client == last[1].a:
							f.hints = append(f.hints, f.hints[last[1].at:last[1].at+last[1].n]...)
						default:
							f.hints = hint(h.Client, f.hints)
						}
						if last[0].n == 0 || h.Client != last[0].a {
							last[1] = last[0]
						}
						last[0] = hintAt{a: h.Client, at: n, n: len(f.hints) - n}
					}
					return nil
				})
				if err != nil {
					send(aheadFrame{err: err})
					return
				}
			}
			if len(f.p) > bigFrame {
				// Alone: once the frames before it are taken, and then
				// taken itself.
				for len(ff.frames) > 0 {
					select {
					case <-ff.taken:
					case <-ff.quit:
						return
					}
				}
				select {
				case <-ff.taken:
				default:
				}
				if !send(f) {
					return
				}
				select {
				case <-ff.taken:
				case <-ff.quit:
					return
				}
				continue
			}
			if !send(f) {
				return
			}
		}
	}()
	return ff
}

// recycle gives back the memory of a frame the caller is done with.
func (ff *frameFeed) recycle(f aheadFrame) {
	select {
	case ff.taken <- struct{}{}:
	default:
	}
	if cap(f.p) > bigFrame {
		return // not kept for reuse
	}
	clear(f.hits) // no strings kept alive by a frame waiting for reuse
	select {
	case ff.free <- f:
	default:
	}
}

// stop ends the reading and waits for its goroutine to end.
func (ff *frameFeed) stop() {
	close(ff.quit)
	for range ff.frames {
	}
}

// recordOf fills rec with a snapshot's hit, as the log reader gave it.
func recordOf(rec *parse.Record, h *snapfile.Hit, file string) {
	*rec = parse.Record{
		File: file, Line: h.Line, Client: h.Client, ClientRaw: h.Raw, Proxy: h.Proxy,
		Duration: h.Duration, HasDuration: h.HasDuration,
		RemoteUser: h.RemoteUser, Target: h.Target, Status: h.Status, UserAgent: h.UserAgent,
		Host: h.Site, RetryAfter: h.RetryAfter, Claims: h.Mask, Claimed: true,
	}
	if h.Timed {
		rec.Time, rec.Resolution = h.Time, h.Resolution
		rec.Start, rec.End = h.Time, h.Time
		if h.HasDuration {
			if h.StartLogged {
				rec.End = h.Time.Add(h.Duration)
			} else {
				rec.Start = h.Time.Add(-h.Duration)
			}
		}
	}
}
