// Package watchstate is what `watch` keeps between runs and answers while
// it runs (SPEC §16): the state file in its state directory, the lock that
// lets one watch at a time use a directory, and the control socket through
// which `watch status` and `unblock` reach the watch that runs.
//
// The state file holds the verdicts that still stand (with the time each
// expires), what was blocked where (nftables, CrowdSec, --exec) and until
// when, the addresses an operator unblocked and until when they are held
// out of blocking, and the last status. It is JSON lines: a header naming
// the format and its version, one record per line, and a trailer with the
// number of records and the SHA-256 of every byte before it. It is
// replaced whole (internal/atomicfile): a reader sees the old file or the
// new one.
//
// A state file is never trusted blindly. One that is not of this format,
// of a later version, cut short or changed after it was written (the
// trailer's digest) is refused whole with an error that says which
// (ErrForeign, ErrVersion, ErrDamaged); in one that holds, each record is
// checked on its own (an address net/netip reads, no zone, not
// unspecified; a known verdict, target and time; a CrowdSec prefix that
// holds its address) and one that fails is left out and counted in
// Loaded.Skipped. What the records say is then checked again by the
// watch that reads them: the safety rules of emit decide whether a block
// is made again, as for a verdict of its own.
package watchstate

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/atomicfile"
)

// The files of a state directory, and its default place.
const (
	// DefaultDir is the state directory unless --state-dir says: systemd's
	// StateDirectory=lohibot-audit.
	DefaultDir = "/var/lib/lohibot-audit"
	// FileName is the state file in the directory.
	FileName = "watch.state"
	// LockName is the lock a running watch holds (see Lock).
	LockName = "watch.lock"
	// SocketName is the control socket of a running watch (see Listen).
	SocketName = "watch.sock"
)

// Format and Version name the state file's format in its header.
const (
	Format  = "lohibot-audit watch state"
	Version = 1
)

// Limits of a state file read.
const (
	// MaxLine is the longest record read.
	MaxLine = 1 << 20
	// MaxRecords is the most records read; more are left out and counted.
	MaxRecords = 1 << 24
	// maxFuture is how far after the reader's clock a time may lie: none
	// of ours lasts longer than a year (emit.MaxTTL).
	maxFuture = 366 * 24 * time.Hour
	// maxName bounds a crawler's name, a reason or a PTR name.
	maxName = 255
)

// maxRecords is MaxRecords; tests lower it.
var maxRecords = MaxRecords

// Errors of Read, matched with errors.Is. Each means the whole file is
// left aside.
var (
	// ErrForeign means the file is not a state file of this program.
	ErrForeign = errors.New("not a lohibot-audit watch state file")
	// ErrVersion means the file is of a later version of the format.
	ErrVersion = errors.New("written by a later lohibot-audit")
	// ErrDamaged means the file is cut short, does not parse, or does not
	// match the digest of its trailer.
	ErrDamaged = errors.New("damaged")
)

// The targets of a block.
const (
	TargetNFTables = "nftables"
	TargetCrowdSec = "crowdsec"
	TargetExec     = "exec"
)

// Targets says where the watch that wrote the state blocked: what
// `unblock` undoes when no watch runs.
type Targets struct {
	// NFTables is the table of the sets ("inet lohibot"); "" when the
	// watch did not block in nftables.
	NFTables string `json:"nftables,omitempty"`
	// NFTNetNS is the network namespace file of the table, when not the
	// watch's own.
	NFTNetNS string `json:"nft_netns,omitempty"`
	// CrowdSec is the Local API's URL, CrowdSecCredentials the machine's
	// credentials file; both "" without --crowdsec.
	CrowdSec            string `json:"crowdsec,omitempty"`
	CrowdSecCredentials string `json:"crowdsec_credentials,omitempty"`
	// Exec is the --exec command, "" without it.
	Exec string `json:"exec,omitempty"`
}

// Verdict is a verdict that stands until Expires: a restarted watch does
// not judge the address again before.
type Verdict struct {
	Addr    netip.Addr `json:"ip"`
	Crawler string     `json:"crawler"`
	Verdict string     `json:"verdict"`
	Method  string     `json:"method,omitempty"`
	Reason  string     `json:"reason,omitempty"`
	PTR     []string   `json:"ptr,omitempty"`
	Listed  bool       `json:"listed,omitempty"`
	Judged  time.Time  `json:"judged"`
	Expires time.Time  `json:"expires"`
}

// Block is an address blocked at one target: in the nftables sets until
// Until; a CrowdSec decision on Prefix (the address, or its /64) until
// Until; an --exec command run At (Until zero: the command's own).
type Block struct {
	Addr    netip.Addr   `json:"ip"`
	Crawler string       `json:"crawler"`
	Target  string       `json:"target"`
	Prefix  netip.Prefix `json:"prefix,omitzero"`
	At      time.Time    `json:"at"`
	Until   time.Time    `json:"until,omitzero"`
}

// Hold is an address an operator unblocked: never blocked before Until.
type Hold struct {
	Addr  netip.Addr `json:"ip"`
	At    time.Time  `json:"at"`
	Until time.Time  `json:"until"`
}

// State is what a state file holds.
type State struct {
	// Written is when the file was written, PID by which process.
	Written time.Time
	PID     int
	Targets Targets
	// Verdicts, Blocks and Holds are the records, each in force when the
	// file was written.
	Verdicts []Verdict
	Blocks   []Block
	Holds    []Hold
	// Status is the writer's last status, for `watch status` when no
	// watch runs; nil when none was written.
	Status *Status
}

// header is the first line of a state file.
type header struct {
	Format  string  `json:"format"`
	Version int     `json:"version"`
	Written int64   `json:"written"`
	PID     int     `json:"pid,omitempty"`
	Targets Targets `json:"targets"`
}

// record is one line between the header and the trailer: exactly one of
// its kinds is set. Times are Unix seconds.
type record struct {
	Verdict *verdictRec `json:"verdict,omitempty"`
	Block   *blockRec   `json:"block,omitempty"`
	Hold    *holdRec    `json:"hold,omitempty"`
	Status  *Status     `json:"status,omitempty"`
}

type verdictRec struct {
	IP      string   `json:"ip"`
	Crawler string   `json:"crawler"`
	Verdict string   `json:"verdict"`
	Method  string   `json:"method,omitempty"`
	Reason  string   `json:"reason,omitempty"`
	PTR     []string `json:"ptr,omitempty"`
	Listed  bool     `json:"listed,omitempty"`
	Judged  int64    `json:"judged"`
	Expires int64    `json:"expires"`
}

type blockRec struct {
	IP      string `json:"ip"`
	Crawler string `json:"crawler"`
	Target  string `json:"target"`
	Prefix  string `json:"prefix,omitempty"`
	At      int64  `json:"at"`
	Until   int64  `json:"until,omitempty"`
}

type holdRec struct {
	IP    string `json:"ip"`
	At    int64  `json:"at"`
	Until int64  `json:"until"`
}

// trailer is the last line: the count of records and the digest of every
// byte before the trailer.
type trailer struct {
	End     bool   `json:"end"`
	Records int    `json:"records"`
	SHA256  string `json:"sha256"`
}

// Path is the state file of the state directory dir.
func Path(dir string) string { return filepath.Join(dir, FileName) }

// Encode writes s as a state file.
func Encode(w io.Writer, s *State) error {
	e, err := NewEncoder(w, s.Written, s.PID, s.Targets)
	if err != nil {
		return err
	}
	if err := s.records(e); err != nil {
		return err
	}
	return e.Close()
}

// records writes the records of s through e.
func (s *State) records(e *Encoder) error {
	for _, v := range s.Verdicts {
		e.Verdict(v)
	}
	for _, b := range s.Blocks {
		e.Block(b)
	}
	for _, h := range s.Holds {
		e.Hold(h)
	}
	if s.Status != nil {
		return e.Status(s.Status)
	}
	return nil
}

// Encoder writes a state file record by record, for a state too large to
// hold whole (a botnet's million verdicts and blocks): NewEncoder writes
// the header, each record goes out as it is given, and Close writes the
// trailer. The records may come in any order. An error is kept: the calls
// after it do nothing and return it, Close too.
type Encoder struct {
	w   io.Writer
	h   hash.Hash
	bw  *bufio.Writer
	n   int
	buf []byte
	err error
}

// NewEncoder writes the header of a state file written at the time
// written by process pid, which blocked at targets, and returns the
// encoder of its records.
func NewEncoder(w io.Writer, written time.Time, pid int, targets Targets) (*Encoder, error) {
	h := sha256.New()
	e := &Encoder{w: w, h: h, bw: bufio.NewWriterSize(io.MultiWriter(w, h), 64<<10)}
	b, err := json.Marshal(header{Format: Format, Version: Version, Written: written.Unix(), PID: pid, Targets: targets})
	if err != nil {
		return nil, err
	}
	e.bw.Write(b)
	if err := e.bw.WriteByte('\n'); err != nil {
		return nil, err
	}
	return e, nil
}

// rec writes the record e.buf holds.
func (e *Encoder) rec() error {
	if e.err != nil {
		return e.err
	}
	e.n++
	_, e.err = e.bw.Write(e.buf)
	return e.err
}

// Verdict writes a verdict record.
func (e *Encoder) Verdict(v Verdict) error {
	e.buf = appendVerdict(e.buf[:0], v)
	return e.rec()
}

// Block writes a block record.
func (e *Encoder) Block(b Block) error {
	e.buf = appendBlock(e.buf[:0], b)
	return e.rec()
}

// Hold writes a hold record.
func (e *Encoder) Hold(x Hold) error {
	buf := append(e.buf[:0], `{"hold":{"ip":"`...)
	buf = x.Addr.AppendTo(buf)
	buf = append(buf, `","at":`...)
	buf = strconv.AppendInt(buf, x.At.Unix(), 10)
	buf = append(buf, `,"until":`...)
	buf = strconv.AppendInt(buf, x.Until.Unix(), 10)
	e.buf = append(buf, "}}\n"...)
	return e.rec()
}

// Status writes the status record (one a file).
func (e *Encoder) Status(s *Status) error {
	if e.err != nil {
		return e.err
	}
	b, err := json.Marshal(record{Status: s})
	if err != nil {
		e.err = err
		return err
	}
	e.buf = append(append(e.buf[:0], b...), '\n')
	return e.rec()
}

// Close writes what is buffered and the trailer: the count of records
// and the digest of every byte before it. It does not close the writer.
func (e *Encoder) Close() error {
	if e.err != nil {
		return e.err
	}
	if e.err = e.bw.Flush(); e.err != nil {
		return e.err
	}
	b, err := json.Marshal(trailer{End: true, Records: e.n, SHA256: hex.EncodeToString(e.h.Sum(nil))})
	if err != nil {
		e.err = err
		return err
	}
	if _, e.err = e.w.Write(append(b, '\n')); e.err != nil {
		return e.err
	}
	e.err = errClosed
	return nil
}

// errClosed is what an encoder returns once closed.
var errClosed = errors.New("state encoder closed")

func appendVerdict(buf []byte, v Verdict) []byte {
	buf = append(buf, `{"verdict":{"ip":"`...)
	buf = v.Addr.AppendTo(buf)
	buf = append(buf, `","crawler":`...)
	buf = appendString(buf, v.Crawler)
	buf = append(buf, `,"verdict":`...)
	buf = appendString(buf, v.Verdict)
	if v.Method != "" {
		buf = append(buf, `,"method":`...)
		buf = appendString(buf, v.Method)
	}
	if v.Reason != "" {
		buf = append(buf, `,"reason":`...)
		buf = appendString(buf, v.Reason)
	}
	if len(v.PTR) > 0 {
		buf = append(buf, `,"ptr":[`...)
		for i, p := range v.PTR {
			if i > 0 {
				buf = append(buf, ',')
			}
			buf = appendString(buf, p)
		}
		buf = append(buf, ']')
	}
	if v.Listed {
		buf = append(buf, `,"listed":true`...)
	}
	buf = append(buf, `,"judged":`...)
	buf = strconv.AppendInt(buf, v.Judged.Unix(), 10)
	buf = append(buf, `,"expires":`...)
	buf = strconv.AppendInt(buf, v.Expires.Unix(), 10)
	return append(buf, "}}\n"...)
}

func appendBlock(buf []byte, b Block) []byte {
	buf = append(buf, `{"block":{"ip":"`...)
	buf = b.Addr.AppendTo(buf)
	buf = append(buf, `","crawler":`...)
	buf = appendString(buf, b.Crawler)
	buf = append(buf, `,"target":`...)
	buf = appendString(buf, b.Target)
	if b.Prefix.IsValid() {
		buf = append(buf, `,"prefix":"`...)
		buf = b.Prefix.AppendTo(buf)
		buf = append(buf, '"')
	}
	buf = append(buf, `,"at":`...)
	buf = strconv.AppendInt(buf, b.At.Unix(), 10)
	if !b.Until.IsZero() {
		buf = append(buf, `,"until":`...)
		buf = strconv.AppendInt(buf, b.Until.Unix(), 10)
	}
	return append(buf, "}}\n"...)
}

// appendString appends s as a JSON string: plain ASCII as it is, anything
// else through encoding/json.
func appendString(buf []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s)
			return append(buf, b...)
		}
	}
	buf = append(buf, '"')
	buf = append(buf, s...)
	return append(buf, '"')
}

// Write writes s to the state file of dir, replacing it whole.
func Write(ctx context.Context, dir string, s *State) error {
	return WriteFunc(ctx, dir, s.Written, s.PID, s.Targets, s.records)
}

// WriteFunc writes the state file of dir as fill makes it, record by
// record through e (see NewEncoder for the header's fields): straight
// into a temporary file beside it, never whole in memory, which takes the
// file's place only when fill returns nil and the trailer is written. An
// error of fill, or ctx ending first, leaves the old file as it was.
func WriteFunc(ctx context.Context, dir string, written time.Time, pid int, targets Targets, fill func(e *Encoder) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p, err := atomicfile.Create(Path(dir), 0o600)
	if err != nil {
		return err
	}
	defer p.Abort()
	e, err := NewEncoder(p, written, pid, targets)
	if err != nil {
		return err
	}
	if err := fill(e); err != nil {
		return err
	}
	if err := e.Close(); err != nil {
		return err
	}
	return p.Commit(ctx)
}

// Skipped counts the records a read left out, by why.
type Skipped struct {
	// Invalid records are not what this program writes: a bad address,
	// verdict, target, prefix or time.
	Invalid int
	// Expired records ended before the reader's clock.
	Expired int
	// TooMany records came after MaxRecords.
	TooMany int
	// Example is the first invalid record's problem, for a message.
	Example string
}

// Total is the number of records left out.
func (s Skipped) Total() int { return s.Invalid + s.Expired + s.TooMany }

// Loaded is a state file as read: the state, and the records left out.
type Loaded struct {
	*State
	Skipped Skipped
}

// Read reads the state file of dir as of the clock now: nil and an error
// matching fs.ErrNotExist when there is none; an error matching
// ErrForeign, ErrVersion or ErrDamaged when the file is refused whole.
func Read(dir string, now time.Time) (*Loaded, error) {
	f, err := os.Open(Path(dir))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Decode(f, now)
}

// Decode reads a state file from r as of the clock now; see Read. Records
// that have expired by now are left out, and so are invalid ones.
func Decode(r io.Reader, now time.Time) (*Loaded, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	h := sha256.New()
	// next returns the next line without its newline; io.EOF at the end,
	// ErrDamaged for a line longer than MaxLine or one without a newline.
	var long []byte
	next := func() ([]byte, error) {
		long = long[:0]
		for {
			part, err := br.ReadSlice('\n')
			if err == bufio.ErrBufferFull {
				long = append(long, part...)
				if len(long) > MaxLine {
					return nil, fmt.Errorf("%w: a line longer than %d bytes", ErrDamaged, MaxLine)
				}
				continue
			}
			if err == io.EOF {
				if len(long)+len(part) == 0 {
					return nil, io.EOF
				}
				return nil, fmt.Errorf("%w: cut short (its last line has no end)", ErrDamaged)
			}
			if err != nil {
				return nil, err
			}
			if len(long) > 0 {
				long = append(long, part...)
				part = long
			}
			if len(part) > MaxLine+1 {
				return nil, fmt.Errorf("%w: a line longer than %d bytes", ErrDamaged, MaxLine)
			}
			return part, nil
		}
	}

	first, err := next()
	if err == io.EOF {
		return nil, fmt.Errorf("%w: empty", ErrForeign)
	}
	if err != nil {
		if errors.Is(err, ErrDamaged) {
			return nil, fmt.Errorf("%w: its first line is not a header", ErrForeign)
		}
		return nil, err
	}
	var hd header
	if json.Unmarshal(first, &hd) != nil || hd.Format != Format {
		return nil, ErrForeign
	}
	if hd.Version != Version {
		if hd.Version > Version {
			return nil, fmt.Errorf("%w (format version %d; this one reads %d)", ErrVersion, hd.Version, Version)
		}
		return nil, fmt.Errorf("%w: format version %d", ErrForeign, hd.Version)
	}
	h.Write(first)
	st := &State{Written: time.Unix(hd.Written, 0), PID: hd.PID, Targets: hd.Targets}
	out := &Loaded{State: st}
	records := 0
	lineNo := 1
	for {
		b, err := next()
		if err == io.EOF {
			return nil, fmt.Errorf("%w: cut short (no trailer)", ErrDamaged)
		}
		if err != nil {
			return nil, err
		}
		lineNo++
		var tr trailer
		if bytes.HasPrefix(b, []byte(`{"end":`)) {
			if json.Unmarshal(b, &tr) != nil || !tr.End {
				return nil, fmt.Errorf("%w: line %d: a trailer that does not parse", ErrDamaged, lineNo)
			}
			if tr.Records != records || tr.SHA256 != hex.EncodeToString(h.Sum(nil)) {
				return nil, fmt.Errorf("%w: its content does not match its trailer's record count and SHA-256", ErrDamaged)
			}
			if _, err := next(); err != io.EOF {
				return nil, fmt.Errorf("%w: lines after the trailer", ErrDamaged)
			}
			out.finish(now)
			return out, nil
		}
		h.Write(b)
		records++
		if records > maxRecords {
			out.Skipped.TooMany++
			continue
		}
		var rec record
		if err := json.Unmarshal(b, &rec); err != nil {
			return nil, fmt.Errorf("%w: line %d does not parse: %v", ErrDamaged, lineNo, err)
		}
		if problem := out.add(rec, now); problem != "" {
			out.Skipped.Invalid++
			if out.Skipped.Example == "" {
				out.Skipped.Example = fmt.Sprintf("line %d: %s", lineNo, problem)
			}
		}
	}
}

// add checks one record and keeps it when it holds and has not expired;
// it returns what is wrong with an invalid one.
func (l *Loaded) add(rec record, now time.Time) string {
	kinds := 0
	for _, set := range []bool{rec.Verdict != nil, rec.Block != nil, rec.Hold != nil, rec.Status != nil} {
		if set {
			kinds++
		}
	}
	if kinds != 1 {
		return "not one record of a known kind"
	}
	latest := now.Add(maxFuture)
	switch {
	case rec.Verdict != nil:
		r := rec.Verdict
		a, problem := checkAddr(r.IP)
		if problem != "" {
			return problem
		}
		switch r.Verdict {
		case "genuine", "spoofed", "unverified":
		default:
			return fmt.Sprintf("verdict %q", clip(r.Verdict))
		}
		if p := checkNames(append([]string{r.Crawler, r.Method, r.Reason}, r.PTR...)); p != "" {
			return p
		}
		if r.Crawler == "" {
			return "no crawler"
		}
		judged, expires := time.Unix(r.Judged, 0), time.Unix(r.Expires, 0)
		if r.Judged <= 0 || judged.After(latest) || expires.Before(judged) || expires.After(latest) {
			return "times out of order"
		}
		if !expires.After(now) {
			l.Skipped.Expired++
			return ""
		}
		l.Verdicts = append(l.Verdicts, Verdict{Addr: a, Crawler: r.Crawler, Verdict: r.Verdict, Method: r.Method,
			Reason: r.Reason, PTR: r.PTR, Listed: r.Listed, Judged: judged, Expires: expires})
	case rec.Block != nil:
		r := rec.Block
		a, problem := checkAddr(r.IP)
		if problem != "" {
			return problem
		}
		if p := checkNames([]string{r.Crawler}); p != "" {
			return p
		}
		b := Block{Addr: a, Crawler: r.Crawler, Target: r.Target, At: time.Unix(r.At, 0)}
		if r.Until != 0 {
			b.Until = time.Unix(r.Until, 0)
		}
		switch r.Target {
		case TargetNFTables:
			if b.Until.IsZero() {
				return "an nftables block without its end"
			}
		case TargetCrowdSec:
			p, err := netip.ParsePrefix(r.Prefix)
			if err != nil || p != p.Masked() || !p.Contains(a) || b.Until.IsZero() {
				return fmt.Sprintf("crowdsec prefix %q for %s", clip(r.Prefix), a)
			}
			b.Prefix = p
		case TargetExec:
		default:
			return fmt.Sprintf("target %q", clip(r.Target))
		}
		if r.At <= 0 || b.At.After(latest) || (!b.Until.IsZero() && (b.Until.Before(b.At) || b.Until.After(latest))) {
			return "times out of order"
		}
		if !b.Until.IsZero() && !b.Until.After(now) {
			l.Skipped.Expired++
			return ""
		}
		l.Blocks = append(l.Blocks, b)
	case rec.Hold != nil:
		r := rec.Hold
		a, problem := checkAddr(r.IP)
		if problem != "" {
			return problem
		}
		h := Hold{Addr: a, At: time.Unix(r.At, 0), Until: time.Unix(r.Until, 0)}
		if r.At <= 0 || h.Until.Before(h.At) || h.Until.After(latest) {
			return "times out of order"
		}
		if !h.Until.After(now) {
			l.Skipped.Expired++
			return ""
		}
		l.Holds = append(l.Holds, h)
	case rec.Status != nil:
		l.Status = rec.Status
	}
	return ""
}

// finish keeps one record of each kind per address (and crawler, and
// target): the last one written.
func (l *Loaded) finish(now time.Time) {
	type vkey struct {
		a netip.Addr
		c string
	}
	seenV := map[vkey]int{}
	vs := l.Verdicts[:0]
	for _, v := range l.Verdicts {
		k := vkey{v.Addr, v.Crawler}
		if i, ok := seenV[k]; ok {
			vs[i] = v
			continue
		}
		seenV[k] = len(vs)
		vs = append(vs, v)
	}
	l.Verdicts = vs
	type bkey struct {
		a      netip.Addr
		target string
		p      netip.Prefix
	}
	seenB := map[bkey]int{}
	bs := l.Blocks[:0]
	for _, b := range l.Blocks {
		k := bkey{b.Addr, b.Target, b.Prefix}
		if i, ok := seenB[k]; ok {
			bs[i] = b
			continue
		}
		seenB[k] = len(bs)
		bs = append(bs, b)
	}
	l.Blocks = bs
	seenH := map[netip.Addr]int{}
	hs := l.Holds[:0]
	for _, h := range l.Holds {
		if i, ok := seenH[h.Addr]; ok {
			hs[i] = h
			continue
		}
		seenH[h.Addr] = len(hs)
		hs = append(hs, h)
	}
	l.Holds = hs
}

// checkAddr reads an address as one a rule may hold: net/netip's reading,
// IPv4-mapped addresses unmapped, no zone, not unspecified.
func checkAddr(s string) (netip.Addr, string) {
	a, err := netip.ParseAddr(s)
	switch {
	case err != nil:
		return a, fmt.Sprintf("address %q", clip(s))
	case a.Zone() != "":
		return a, fmt.Sprintf("address %q has a zone", clip(s))
	case a.IsUnspecified():
		return a, fmt.Sprintf("address %q is unspecified", clip(s))
	}
	return a.Unmap(), ""
}

// checkNames refuses names longer than maxName or holding control
// characters.
func checkNames(names []string) string {
	for _, n := range names {
		if len(n) > maxName {
			return fmt.Sprintf("a name of %d bytes", len(n))
		}
		if slices.ContainsFunc([]byte(n), func(c byte) bool { return c < 0x20 || c == 0x7f }) {
			return fmt.Sprintf("a name with control characters: %q", clip(n))
		}
	}
	return ""
}

// clip cuts s for a message.
func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// SetAside renames the state file of dir to watch.state.bad (replacing an
// older one), so that a file that cannot be read is kept for a look but
// not read again; it returns the new name.
func SetAside(dir string) (string, error) {
	bad := Path(dir) + ".bad"
	if err := os.Rename(Path(dir), bad); err != nil {
		return "", err
	}
	return bad, nil
}
