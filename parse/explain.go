package parse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
)

// How a format reads the first lines of an input, field by field, or
// where a line leaves it: what `format test` shows (as fail2ban-regex
// does for filters).

// FieldValue is one field of a line as a format reads it.
type FieldValue struct {
	// Name is the field's name ("client address", "time", "user agent",
	// "ignored" for a field read and not used).
	Name string
	// Text is the field as logged; Value what it reads as when that
	// differs (a time in RFC 3339, a decoded User-Agent), else "".
	Text, Value string
}

// LineTrace is what a format makes of one line.
type LineTrace struct {
	Line int64  // from 1
	Text string // the line (cut to 4 KiB)
	// Kind is "request" (the line fits), "malformed", "blank" or
	// "comment".
	Kind string
	// Fields are the fields read: all of them when the line fits, those
	// before the place it left the format when it does not.
	Fields []FieldValue
	// Reason says where and why the line left the format.
	Reason string
	// Record is what the line reads as, when it fits.
	Record *Record
	// Format is the format the line was read with (a W3C log's changes
	// at each #Fields: directive).
	Format *Format
}

// CandidateTrace is what one format auto-detection tries makes of the
// first lines.
type CandidateTrace struct {
	Format *Format
	// Fit is how many of Lines fit; FirstMiss is the first that does not
	// (from 1, counting only the lines detection looks at), or 0, and
	// Reason why.
	Fit, Lines int
	FirstMiss  int
	Reason     string
}

// FormatTest is what TestFormat found.
type FormatTest struct {
	// Format is the format given, or the one auto-detection chose (nil
	// when none fits: DetectErr says why).
	Format    *Format
	Detected  bool
	DetectErr error
	// Closest is the format the lines are shown with when none fits
	// enough of them: the candidate that fits the most (nil when none
	// fits a line).
	Closest *Format
	// Candidates are the formats auto-detection tried, in its order of
	// preference (with a format given, only when the lines do not all
	// fit it).
	Candidates []CandidateTrace
	Lines      []LineTrace
	// Compression is how the input was compressed ("" for plain text).
	Compression string
}

// TestOptions configure TestFormat.
type TestOptions struct {
	Name     string // the input's name in errors
	Lines    int    // how many lines to show (0: 10)
	Location *time.Location
	MaxDict  int64
	Claims   *TokenSet
}

// traceLineMax is the longest line shown whole.
const traceLineMax = 4 << 10

// TestFormat reads the first lines of in (plain or compressed as a
// Reader takes it) with f, or with the format auto-detection chooses
// when f is nil, and says field by field how each reads, or where it
// leaves the format. The error is for input that cannot be read.
func TestFormat(in io.Reader, f *Format, o TestOptions) (*FormatTest, error) {
	if o.Lines <= 0 {
		o.Lines = 10
	}
	rd := NewReader(in, Options{Name: o.Name, MaxDict: o.MaxDict})
	src, closeSrc, err := rd.decompress()
	if closeSrc != nil {
		defer closeSrc()
	}
	if err != nil {
		return nil, err
	}
	out := &FormatTest{}
	out.Compression, _ = rd.compression.Load().(string)
	br := bufio.NewReaderSize(src, 64<<10)
	head, err := br.Peek(detectSample)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return nil, rd.decompressError(out.Compression, err)
	}
	if cut := bytes.LastIndexByte(head, '\n'); cut >= 0 && len(head) == detectSample {
		head = head[:cut+1]
	}
	s := readSample(head)
	var given *Format = f
	switch {
	case f == nil && len(s.lines) == 0:
		out.DetectErr = fmt.Errorf("%w: no lines to look at", ErrUnknownFormat)
	case f == nil:
		out.Format, out.DetectErr = detectFormat(s)
		out.Detected = true
	case f.w3c != nil && s.fields != "":
		out.Format, out.DetectErr = compileW3C(s.fields, w3cSep(s.lines))
	default:
		out.Format = withBestHeader(f, s.lines)
	}
	if given == nil || out.Format != nil && len(s.lines) > 0 {
		fit := len(s.lines)
		if given != nil {
			_, fit = fitCount(out.Format, s.lines)
		}
		if given == nil || fit < len(s.lines) {
			for _, c := range candidates(s) {
				ct := CandidateTrace{Format: c.Format, Fit: c.Fit, Lines: len(s.lines), Reason: c.Reason}
				if c.FirstMiss >= 0 {
					ct.FirstMiss = c.FirstMiss + 1
				}
				out.Candidates = append(out.Candidates, ct)
			}
		}
	}

	cur := out.Format
	if cur == nil {
		best := -1
		for i, c := range out.Candidates {
			if c.Fit > 0 && (best < 0 || c.Fit > out.Candidates[best].Fit) {
				best = i
			}
		}
		if best >= 0 {
			out.Closest = out.Candidates[best].Format
			cur = out.Closest
		}
	}
	var lp *lineParser
	for n := int64(1); len(out.Lines) < o.Lines; n++ {
		line, err := readTraceLine(br)
		if len(line) == 0 && err != nil {
			if !errors.Is(err, io.EOF) {
				return out, rd.decompressError(out.Compression, err)
			}
			break
		}
		if cur != nil && cur.w3c != nil {
			if fields, ok := w3cFields(line); ok && (cur.w3c.fields != fields) {
				sep := cur.w3c.sep
				if next, _ := br.Peek(traceLineMax); bytes.IndexByte(next[:max(0, bytes.IndexByte(next, '\n'))], '\t') >= 0 {
					sep = '\t'
				}
				if nf, err := compileW3C(fields, sep); err == nil {
					cur = nf
					lp = nil
				}
			}
		}
		if lp == nil && cur != nil {
			lp = newLineParser(cur, o.Claims, nil, "", false)
			lp.loc, lp.keepAll, lp.ipOnly = o.Location, true, f == nil
		}
		out.Lines = append(out.Lines, traceLine(lp, n, line, cur))
	}
	return out, nil
}

// readTraceLine reads one line without its line end, keeping at most
// MaxLineLength bytes of it.
func readTraceLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) <= MaxLineLength+2 {
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		line = bytes.TrimRight(line, "\r\n")
		if err != nil && len(line) > 0 {
			err = nil
		}
		return line, err
	}
}

// traceLine reads one line with lp (nil: no format).
func traceLine(lp *lineParser, n int64, line []byte, f *Format) LineTrace {
	t := LineTrace{Line: n, Text: string(line), Format: f}
	if len(line) > traceLineMax {
		t.Text = string(line[:traceLineMax])
	}
	var rec Record
	reason := "no format reads the lines"
	if lp != nil {
		for i := range lp.spans {
			lp.spans[i] = span{-1, -1}
		}
		_, reason = lp.parse(line, &rec)
	}
	switch {
	case reason == "":
		t.Kind = "request"
		r := rec
		t.Record = &r
	case isBlank(line):
		t.Kind = "blank"
		return t
	case isComment(line):
		t.Kind = "comment"
		return t
	default:
		t.Kind, t.Reason = "malformed", reason
	}
	if lp == nil {
		return t
	}
	if lp.f.json {
		if t.Record != nil {
			t.Fields = recordFields(t.Record)
		}
		return t
	}
	msg := line[min(lp.off, len(line)):]
	for i := range lp.f.items {
		it := &lp.f.items[i]
		sp := lp.spans[i]
		if it.isLit || sp.s < 0 {
			continue
		}
		b := msg[sp.s:sp.e]
		fv := FieldValue{Name: fieldNames[it.field], Text: string(b)}
		if it.label != "" {
			fv.Name = it.label
		}
		fv.Value = lp.fieldValue(it, b)
		t.Fields = append(t.Fields, fv)
	}
	return t
}

// fieldValue says what a field's text reads as, when that is not the
// text itself.
func (p *lineParser) fieldValue(it *item, b []byte) string {
	switch it.field {
	case fTimeCLF, fTimeISO, fTimeSec, fTimeMsec, fTimeMsecInt, fTimeUsecInt:
		if t, _, ok := p.fieldTime(it.field, b); ok {
			return t.UTC().Format(time.RFC3339Nano)
		}
	case fTimeStrf:
		var tc tcivil
		it.tl.match(b, 0, &tc)
		var tp timeParts
		tp.add(&tc, it.tl.utc)
		if t, _, ok := tp.time(p.location()); ok {
			return t.UTC().Format(time.RFC3339Nano) + " (" + t.Format("-07:00 MST") + ")"
		}
		return "a part of the time (" + it.tl.src + ")"
	case fAddrPort, fXFFClient:
		return string(clientText(it.field, b))
	case fCaptures:
		if ua := haproxyUA(b); ua != nil {
			return "user agent " + strconv.Quote(decodeText(ua, decHash))
		}
		return "no user agent among them"
	case fDurSec, fDurMsec, fDurUsec, fDurTimer, fDurAuto:
		if d, ok := p.duration(it.field, b); ok {
			return d.String()
		}
	default:
		if it.field.isText() {
			var v string
			if it.dec != decLog {
				v = decodeText(b, it.dec)
			} else {
				v = unescapeLog(b)
			}
			if v != string(b) {
				return v
			}
		}
	}
	return ""
}

// recordFields lists what a record holds, for a line of a JSON log.
func recordFields(r *Record) []FieldValue {
	var out []FieldValue
	add := func(name, v string) {
		if v != "" {
			out = append(out, FieldValue{Name: name, Text: v})
		}
	}
	add("client address", r.ClientRaw)
	if !r.Time.IsZero() {
		add("time", r.Time.UTC().Format(time.RFC3339Nano))
	}
	add("remote user", r.RemoteUser)
	add("request", r.Request)
	add("method", r.Method)
	add("request uri", r.Target)
	add("protocol", r.Proto)
	if r.Status != 0 {
		add("status", strconv.Itoa(r.Status))
	}
	if r.Bytes >= 0 {
		add("bytes", strconv.FormatInt(r.Bytes, 10))
	}
	add("referer", r.Referer)
	add("user agent", r.UserAgent)
	add("virtual host", r.Host)
	if r.HasDuration {
		add("request time", r.Duration.String())
	}
	add("retry-after", r.RetryAfter)
	add("x-forwarded-for", r.XFF)
	add("cf-connecting-ip", r.CFConnectingIP)
	add("true-client-ip", r.TrueClientIP)
	add("x-real-ip", r.XRealIP)
	return out
}

// Summary says in one line what a record is: its client, site, time,
// request and status.
func (r *Record) Summary() string {
	client := r.ClientRaw
	if r.Client.IsValid() {
		client = r.Client.String()
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "client %s, site %s, time %s", client, orDash(r.Host), r.Time.UTC().Format(time.RFC3339Nano))
	if r.HasDuration {
		fmt.Fprintf(&b, " (from %s to %s)", r.Start.UTC().Format(time.RFC3339Nano), r.End.UTC().Format(time.RFC3339Nano))
	}
	if r.Method != "" || r.Target != "" {
		fmt.Fprintf(&b, ", %s %s", r.Method, r.Target)
	}
	if r.Status != 0 {
		fmt.Fprintf(&b, ", status %d", r.Status)
	}
	if r.UserAgent != "" {
		fmt.Fprintf(&b, ", user agent %q", r.UserAgent)
	}
	if r.Claimed {
		b.WriteString(", a claimed hit")
	}
	return b.String()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
