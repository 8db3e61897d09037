package audit

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"time"

	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/internal/snapfile"
	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/lohisoft/lohibot-audit/verify"
)

// A snapshot (SPEC §14) is what one run read, as its audits took it in:
// each input's claimed hits in the order read (those the audits kept, with
// the crawlers each was kept for), the warnings said while reading it and
// its counts; then the warnings about the inputs as a whole, every
// address's verdict with its evidence and when it was made, and the
// verifier's warnings. [Merge] replays snapshots into fresh audits, so
// that their report is the one a run over every snapshot's logs would
// have made. The frames, in order (internal/snapfile):
//
//	H  header (JSON): tool, version, server, created, since/until, whether
//	   the report names its crawlers, each crawler's profile and IP list
//	   in force, and the fingerprint of the crawler set
//	per input:
//	   s  its name
//	   c  its claimed hits, in blocks
//	   w  each warning said while reading it
//	   i  its counts (JSON): the input report, its malformed examples, and
//	      per crawler the hits left out by --since/--until and the
//	      requests of listed addresses without a token
//	r  the warnings about the inputs as a whole (JSON)
//	V  per crawler, the verdicts given without DNS (JSON), shared by the
//	   addresses that got them
//	v  per crawler, blocks of addresses with the verdict each got
//	d  when the verdicts were made, and the verifier's warnings (JSON)
//	e  the totals (JSON)

// SnapshotWriter writes a run's snapshot as [Run] goes (Options.Snapshot):
// the header as the run starts, each input's hits and counts as it is
// read, the verdicts once they are made. Memory does not grow with what
// it writes: a hit is written as it is kept, with its address inline and
// its site and user agent as numbers (a bounded table). Set its fields
// before the run; after it, Close writes the end, and Stats says how much
// was written.
type SnapshotWriter struct {
	// Server names the server whose logs the run reads (a merge tells
	// files of different servers apart by it).
	Server string
	// ToolVersion is the version of the program writing it.
	ToolVersion string
	// Now gives the time the snapshot and its verdicts are made (nil:
	// time.Now).
	Now func() time.Time
	// TrustedProxies and TrustXFF are the run's --trusted-proxy values
	// and --trust-xff: a merge names the proxies of the hits they
	// forwarded by them.
	TrustedProxies []string
	TrustXFF       bool

	w          *snapfile.Writer
	inInput    bool
	subjects   int
	filtered   []int64 // each audit's FilteredOut at the last input's end
	unclaimed  []int64
	inputs     int
	addresses  int64
	finished   bool
	created    time.Time
	verdictsAt time.Time
	err        error // the first value that could not be written
}

// NewSnapshotWriter returns a writer of a snapshot to w: the file it goes
// to is the caller's to make (atomically) and to close.
func NewSnapshotWriter(w io.Writer) *SnapshotWriter {
	return &SnapshotWriter{w: snapfile.NewWriter(w)}
}

func (s *SnapshotWriter) now() time.Time {
	if s.Now != nil {
		return s.Now().UTC()
	}
	return time.Now().UTC()
}

// snapHeader is a snapshot's header.
type snapHeader struct {
	Tool    string    `json:"tool"`
	Version string    `json:"version"`
	Server  string    `json:"server"`
	Created time.Time `json:"created"`
	Since   time.Time `json:"since,omitzero"`
	Until   time.Time `json:"until,omitzero"`
	Named   bool      `json:"named,omitempty"`
	// TrustedProxies and TrustXFF are the run's --trusted-proxy values
	// and --trust-xff.
	TrustedProxies []string      `json:"trusted_proxies,omitempty"`
	TrustXFF       bool          `json:"trust_xff,omitempty"`
	Crawlers       []snapCrawler `json:"crawlers"`
	Fingerprint    string        `json:"fingerprint"`
}

// snapCrawler is one crawler of a snapshot: its profile (nil for a run
// that audits none) and its IP list in force.
type snapCrawler struct {
	Profile *crawler.Profile `json:"profile,omitempty"`
	List    *verify.IPList   `json:"list,omitempty"`
}

// snapInput is the end of one input of a snapshot.
type snapInput struct {
	Report     InputReport `json:"report"`
	Site       string      `json:"site,omitempty"`
	HostLogged bool        `json:"host_logged,omitempty"`
	Examples   []Malformed `json:"examples,omitempty"`
	Filtered   []int64     `json:"filtered"`
	Unclaimed  []int64     `json:"unclaimed"`
}

// snapSettled is the table of one crawler's verdicts given without DNS.
type snapSettled struct {
	Crawler int             `json:"crawler"`
	Results []verify.Result `json:"results"`
}

// snapDNS is when a snapshot's verdicts were made, with the verifier's
// warnings.
type snapDNS struct {
	Made     time.Time `json:"made"`
	Warnings []string  `json:"warnings"`
}

// snapEnd is a snapshot's totals.
type snapEnd struct {
	Inputs    int   `json:"inputs"`
	Hits      int64 `json:"hits"`
	Addresses int64 `json:"addresses"`
}

// Fingerprint names a crawler set as a snapshot needs it the same to be
// merged: each crawler's name, the tokens that claim it and what verifies
// it, in order (the conduct it promises is the merge's to apply).
func Fingerprint(profiles []*crawler.Profile) string {
	h := sha256.New()
	put := func(s string) {
		h.Write(binary.AppendUvarint(nil, uint64(len(s))))
		h.Write([]byte(s))
	}
	for _, p := range profiles {
		if p == nil {
			put("-")
			continue
		}
		put(p.Name)
		put(p.RobotsToken)
		for _, list := range [][]string{p.Tokens, p.FCrDNS, p.IPLists} {
			h.Write(binary.AppendUvarint(nil, uint64(len(list))))
			for _, t := range list {
				put(t)
			}
		}
		if p.IPv6 {
			put("ipv6")
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// frameJSON writes v as a frame of kind.
func (s *SnapshotWriter) frameJSON(kind byte, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		if s.err == nil {
			s.err = fmt.Errorf("snapshot frame %c: %w", kind, err)
		}
		return
	}
	s.w.Frame(kind, data)
}

// begin writes the header.
func (s *SnapshotWriter) begin(set *auditSet) {
	s.created = s.now()
	s.subjects = len(set.audits)
	s.filtered = make([]int64, s.subjects)
	s.unclaimed = make([]int64, s.subjects)
	h := snapHeader{Tool: "lohibot-audit", Version: s.ToolVersion, Server: s.Server, Created: s.created, Named: set.named,
		TrustedProxies: s.TrustedProxies, TrustXFF: s.TrustXFF}
	profiles := make([]*crawler.Profile, len(set.subjects))
	for i, c := range set.subjects {
		h.Crawlers = append(h.Crawlers, snapCrawler{Profile: c.Profile, List: c.List})
		profiles[i] = c.Profile
	}
	if a := set.audits[0]; a != nil {
		h.Since, h.Until = a.Since, a.Until
	}
	h.Fingerprint = Fingerprint(profiles)
	s.frameJSON(snapfile.KindHeader, h)
}

// hit writes a claimed hit kept for the crawlers of mask.
func (s *SnapshotWriter) hit(rec *parse.Record, mask uint64) {
	if !s.inInput {
		s.startInput(rec.File)
	}
	h := snapfile.Hit{
		Mask: mask, Client: rec.Client, Proxy: rec.Proxy, Site: rec.Host, UserAgent: cutText(rec.UserAgent, maxClientText),
		RemoteUser: rec.RemoteUser, RetryAfter: rec.RetryAfter, Target: rec.Target, Line: rec.Line,
		HasDuration: rec.HasDuration, Duration: rec.Duration, StartLogged: rec.HasDuration && rec.Start.Equal(rec.Time),
		Status: rec.Status,
	}
	if !rec.Client.IsValid() {
		h.Raw = cutText(rec.ClientRaw, maxClientText)
	}
	if rec.Resolution > 0 {
		h.Timed, h.Time, h.Resolution = true, rec.Time, rec.Resolution
	}
	s.w.Hit(&h)
}

func (s *SnapshotWriter) startInput(name string) {
	s.w.Frame(snapfile.KindInputStart, []byte(name))
	s.inInput = true
}

// warning writes a warning said while reading.
func (s *SnapshotWriter) warning(w string) {
	s.w.Frame(snapfile.KindWarning, []byte(w))
}

// endInput writes an input's counts, once it is read.
func (s *SnapshotWriter) endInput(set *auditSet, in InputReport, examples []Malformed) {
	if !s.inInput {
		s.startInput(in.File)
	}
	s.inInput = false
	s.inputs++
	si := snapInput{Report: in, Site: in.Site, HostLogged: in.HostLogged, Examples: examples,
		Filtered: make([]int64, s.subjects), Unclaimed: make([]int64, s.subjects)}
	for i, a := range set.audits {
		si.Filtered[i] = a.summary.FilteredOut - s.filtered[i]
		si.Unclaimed[i] = a.summary.UnclaimedHit - s.unclaimed[i]
		s.filtered[i], s.unclaimed[i] = a.summary.FilteredOut, a.summary.UnclaimedHit
	}
	s.frameJSON(snapfile.KindInputEnd, si)
}

// readWarnings writes the warnings about the inputs as a whole.
func (s *SnapshotWriter) readWarnings(ws []string) {
	if ws == nil {
		ws = []string{}
	}
	s.frameJSON(snapfile.KindReadWarnings, ws)
}

// Verdict entries.
const (
	verdictSettled = iota // a number in the crawler's table of settled verdicts
	verdictResult         // a verify.Result as JSON
)

// verdicts writes every address's verdict, crawler by crawler, and the
// verifier's warnings.
func (s *SnapshotWriter) verdicts(set *auditSet, results []map[netip.Addr]verify.Result, warnings []string) {
	s.verdictsAt = s.now()
	for ci, a := range set.audits {
		s.frameJSON(snapfile.KindSettled, snapSettled{Crawler: ci, Results: a.settled})
		var block []byte
		start := func() { block = binary.AppendUvarint(block[:0], uint64(ci)) }
		start()
		n := 0
		for i := 0; i < a.addrs.len(); i++ {
			e := a.addrs.at(i)
			addr, ok := a.addrOf(e)
			if !ok {
				continue // not an address: no verdict
			}
			var entry []byte
			if e.settled != 0 {
				entry = binary.AppendUvarint([]byte{verdictSettled}, uint64(e.settled-1))
			} else if res, ok := results[ci][addr]; ok {
				data, err := json.Marshal(res)
				if err != nil {
					continue // cannot be: a verdict's fields are text, times and flags
				}
				entry = binary.AppendUvarint([]byte{verdictResult}, uint64(len(data)))
				entry = append(entry, data...)
			} else {
				continue // not checked
			}
			block = appendAddr(block, addr)
			block = append(block, entry...)
			n++
			s.addresses++
			if len(block) > 64<<10 {
				s.w.Frame(snapfile.KindVerdicts, block)
				start()
				n = 0
			}
		}
		if n > 0 {
			s.w.Frame(snapfile.KindVerdicts, block)
		}
	}
	if warnings == nil {
		warnings = []string{}
	}
	s.frameJSON(snapfile.KindDNSWarnings, snapDNS{Made: s.verdictsAt, Warnings: warnings})
}

// appendAddr appends an address: its length (4, 16, or more for its text
// with a zone) and its bytes.
func appendAddr(b []byte, a netip.Addr) []byte {
	switch {
	case a.Zone() != "":
		t := a.String()
		b = binary.AppendUvarint(b, uint64(len(t)))
		return append(b, t...)
	case a.Is4():
		x := a.As4()
		b = append(b, 4)
		return append(b, x[:]...)
	default:
		x := a.As16()
		b = append(b, 16)
		return append(b, x[:]...)
	}
}

// readAddr reads what appendAddr wrote; n is 0 when it does not decode.
func readAddr(b []byte) (a netip.Addr, n int) {
	l, k := binary.Uvarint(b)
	if k <= 0 || l > uint64(len(b)-k) {
		return a, 0
	}
	p := b[k : k+int(l)]
	switch l {
	case 4:
		a = netip.AddrFrom4([4]byte(p))
	case 16:
		a = netip.AddrFrom16([16]byte(p))
	default:
		var err error
		if a, err = netip.ParseAddr(string(p)); err != nil || a.Zone() == "" {
			return netip.Addr{}, 0
		}
	}
	return a, k + int(l)
}

// finish writes the totals and the digest: the snapshot is whole. What the
// conduct checks and the report make of it is not part of it.
func (s *SnapshotWriter) finish() error {
	if s.finished {
		if err := s.w.Err(); err != nil {
			return err
		}
		return s.err
	}
	s.finished = true
	_, hits, _ := s.w.Stats()
	s.frameJSON(snapfile.KindEnd, snapEnd{Inputs: s.inputs, Hits: hits, Addresses: s.addresses})
	if err := s.w.Close(); err != nil {
		return err
	}
	return s.err
}

// Close finishes the snapshot, when Run did not (a run with nothing read),
// and returns the first error of any write to it.
func (s *SnapshotWriter) Close() error { return s.finish() }

// SnapshotStats is how much a snapshot holds.
type SnapshotStats struct {
	// Bytes is its size; Hits the claimed hits it holds, in HitBytes.
	Bytes, Hits, HitBytes int64
}

// Stats says how much was written.
func (s *SnapshotWriter) Stats() SnapshotStats {
	b, h, hb := s.w.Stats()
	return SnapshotStats{Bytes: b, Hits: h, HitBytes: hb}
}
