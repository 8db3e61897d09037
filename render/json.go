package render

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"time"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/parse"
)

// The JSON printed is encoding/json's, indented by two spaces, with HTML
// characters left as they are: scripts read it, so it does not depend on
// how it was written. A report is written a piece at a time, so that a
// report of a million addresses never exists whole in memory, neither as
// values nor as text; the pieces are encoding/json's own output, and the
// tests compare the result with json.Encoder's byte for byte.

// WriteJSON prints v as indented JSON. A *audit.Report is streamed. To a
// terminal (tty), the runes a terminal could act on that JSON leaves as
// they are (DEL, the C1 controls, the bidi overrides and isolates) are
// written as \u escapes: the same data, shown safely. Commands whose JSON
// is not a report or a Document (robots test and check) write it here.
func WriteJSON(w io.Writer, v any, tty bool) error {
	if r, ok := v.(*audit.Report); ok {
		return writeReportJSON(w, r, tty)
	}
	b, err := jsonIndent(v, "")
	if err != nil {
		return err
	}
	if tty {
		b = jsonTerminalEscape(b)
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}

// jsonIndent encodes v as json.MarshalIndent(v, prefix, "  ") would, but
// without escaping HTML characters.
func jsonIndent(v any, prefix string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent(prefix, "  ")
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// errSplice is an internal error: the report's layout is not the one the
// streaming writers expect.
var errSplice = errors.New("the report's layout changed: a list field is missing")

// reportList is a list field of the report that is written element by
// element.
type reportList struct {
	key  string
	n    int
	each func(yield func(any) bool)
	// appendJSON, when set, encodes the elements as JSON without going
	// through encoding/json (the addresses: a million of them), calling
	// add with each, or with an error, until add reports false.
	appendJSON func(add func(b []byte, err error) bool)
}

// reportLists returns the report's long lists (addresses, sites,
// violations), and a copy of the report without them, for the rest to be
// encoded in one go. A list that is not nil is left empty in the copy:
// encoding/json writes "[]" for it, and "null" for a nil one.
func reportLists(r *audit.Report) (audit.Report, []reportList) {
	head := *r
	head.IPs, head.Sites, head.Violations = nil, nil, nil
	if r.IPs != nil {
		head.IPs = []audit.IPReport{}
	}
	if r.Sites != nil {
		head.Sites = []audit.SiteReport{}
	}
	if r.Violations != nil {
		head.Violations = []audit.Violation{}
	}
	lists := []reportList{
		{"ips", r.NumIPs(), func(yield func(any) bool) {
			for ip := range r.AllIPs() {
				if !yield(ip) {
					return
				}
			}
		}, func(add func([]byte, error) bool) {
			var scratch []byte
			for ip := range r.AllIPs() {
				var err error
				scratch, err = appendIPReportJSON(scratch[:0], &ip)
				if !add(scratch, err) {
					return
				}
			}
		}},
		{"sites", len(r.Sites), func(yield func(any) bool) {
			for _, s := range r.Sites {
				if !yield(s) {
					return
				}
			}
		}, nil},
		{"violations", len(r.Violations), func(yield func(any) bool) {
			for _, v := range r.Violations {
				if !yield(v) {
					return
				}
			}
		}, nil},
	}
	return head, lists
}

// writeReportJSON streams a report as writeJSON would print it.
func writeReportJSON(w io.Writer, r *audit.Report, tty bool) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	put := func(b []byte) {
		if tty {
			b = jsonTerminalEscape(b)
		}
		bw.Write(b)
	}
	head, lists := reportLists(r)
	text, err := jsonIndent(&head, "")
	if err != nil {
		return err
	}
	for _, l := range lists {
		if l.n == 0 {
			continue
		}
		marker := []byte("\n  " + jsonKey(l.key) + ": []")
		at := bytes.Index(text, marker)
		if at < 0 {
			return fmt.Errorf("%w: %s", errSplice, l.key)
		}
		put(text[:at+len(marker)-1])
		for blk := range encodeList(l, tty) {
			if blk.err != nil {
				return blk.err
			}
			bw.Write(blk.b)
		}
		bw.WriteString("\n  ")
		text = text[at+len(marker)-1:]
	}
	put(text)
	bw.WriteByte('\n')
	return bw.Flush()
}

// listBlock is a run of a list's elements as JSON, or the error that
// ended their encoding.
type listBlock struct {
	b   []byte
	err error
}

// encodeList encodes a list's elements as writeReportJSON prints them
// (each after a comma but the first, on a line of its own), in blocks of
// about 64 KiB, in a goroutine of its own a few blocks ahead of the
// writer: a fleet's report holds a million addresses, and making and
// encoding them goes on beside the writing. The caller takes every block
// (the last one may be an error).
func encodeList(l reportList, tty bool) <-chan listBlock {
	out := make(chan listBlock, 4)
	go func() {
		defer close(out)
		var blk []byte
		first, failed := true, false
		add := func(b []byte, err error) bool {
			if err != nil {
				out <- listBlock{err: err}
				failed = true
				return false
			}
			if !first {
				blk = append(blk, ',')
			}
			first = false
			blk = append(blk, "\n    "...)
			if tty {
				b = jsonTerminalEscape(b)
			}
			blk = append(blk, b...)
			if len(blk) >= 64<<10 {
				out <- listBlock{b: blk}
				blk = make([]byte, 0, 80<<10)
			}
			return true
		}
		if l.appendJSON != nil {
			l.appendJSON(add)
		} else {
			l.each(func(v any) bool { return add(jsonIndent(v, "    ")) })
		}
		if len(blk) > 0 && !failed {
			out <- listBlock{b: blk}
		}
	}()
	return out
}

// jsonKey is a report key as JSON writes it (the keys are plain ASCII).
func jsonKey(k string) string { return `"` + k + `"` }

// jsonTerminalEscape escapes, inside JSON text, the runes a terminal could
// act on or a reader would not see that encoding/json leaves as they are
// (parse.IsTerminalUnsafe: DEL, the C1 controls, the bidi and other
// invisible format characters); encoding/json already escapes the C0
// controls, U+2028 and U+2029, and replaces invalid UTF-8. Such runes occur
// only inside strings, where \uXXXX (a surrogate pair beyond U+FFFF) means
// the same.
func jsonTerminalEscape(b []byte) []byte {
	return terminalEscape(b, func(out []byte, r rune) []byte {
		if r > 0xffff {
			hi, lo := utf16.EncodeRune(r)
			return fmt.Appendf(out, `\u%04x\u%04x`, hi, lo)
		}
		return fmt.Appendf(out, `\u%04x`, r)
	})
}

// terminalEscape returns b with each rune parse.IsTerminalUnsafe names
// written by esc, and b itself when it holds none.
func terminalEscape(b []byte, esc func([]byte, rune) []byte) []byte {
	i := 0
	for i < len(b) {
		if b[i] < 0x7f {
			i++
			continue
		}
		r, n := utf8.DecodeRune(b[i:])
		if parse.IsTerminalUnsafe(r) {
			break
		}
		i += n
	}
	if i == len(b) {
		return b
	}
	out := make([]byte, 0, len(b)+16)
	out = append(out, b[:i]...)
	for i < len(b) {
		r, n := utf8.DecodeRune(b[i:])
		if parse.IsTerminalUnsafe(r) {
			out = esc(out, r)
		} else {
			out = append(out, b[i:i+n]...)
		}
		i += n
	}
	return out
}

// appendIPReportJSON appends ip as jsonIndent(ip, "    ") encodes it, ten
// times faster: a report may hold a million addresses. The tests compare
// the two on reports filled at random, so a field added to IPReport must
// be added here too.
func appendIPReportJSON(b []byte, ip *audit.IPReport) ([]byte, error) {
	const in = "\n      "
	str := func(key, v string) {
		b = append(b, in...)
		b = append(b, key...)
		b = jsonAppendString(b, v)
		b = append(b, ',')
	}
	list := func(key string, vs []string) {
		b = append(b, in...)
		b = append(b, key...)
		switch {
		case vs == nil:
			b = append(b, "null"...)
		case len(vs) == 0:
			b = append(b, "[]"...)
		default:
			b = append(b, '[')
			for i, v := range vs {
				if i > 0 {
					b = append(b, ',')
				}
				b = append(b, in+"  "...)
				b = jsonAppendString(b, v)
			}
			b = append(b, in+"]"...)
		}
		b = append(b, ',')
	}
	var err error
	when := func(key string, t time.Time) {
		if t.IsZero() {
			return // no time known (audit.IPReport's omitzero)
		}
		b = append(b, in...)
		b = append(b, key...)
		var text []byte
		if text, err = t.MarshalJSON(); err != nil {
			err = &json.MarshalerError{Type: reflect.TypeFor[time.Time](), Err: err}
		}
		b = append(b, text...)
		b = append(b, ',')
	}
	b = append(b, '{')
	str(`"ip": `, ip.IP)
	if ip.Crawler != "" {
		str(`"crawler": `, ip.Crawler)
	}
	str(`"verdict": `, string(ip.Verdict))
	str(`"method": `, ip.Method)
	str(`"reason": `, ip.Reason)
	list(`"ptr": `, ip.PTR)
	list(`"forward": `, ip.Forward)
	b = append(b, in+`"in_ip_list": `...)
	b = strconv.AppendBool(b, ip.InIPList)
	b = append(b, ',')
	b = append(b, in+`"hits": `...)
	b = strconv.AppendInt(b, ip.Hits, 10)
	b = append(b, ',')
	when(`"first_seen": `, ip.FirstSeen)
	when(`"last_seen": `, ip.LastSeen)
	list(`"user_agents": `, ip.UserAgents)
	if len(ip.Warnings) > 0 {
		list(`"warnings": `, ip.Warnings)
	}
	if ip.DNSFailure != "" {
		str(`"dns_failure": `, ip.DNSFailure)
	}
	if ip.Proxy != "" {
		str(`"proxy": `, ip.Proxy)
	}
	if len(ip.DNS) > 0 && err == nil {
		// A few answers, each a small object: the encoder writes them.
		var text []byte
		if text, err = jsonIndent(ip.DNS, in[1:]); err == nil {
			b = append(b, in+`"dns": `...)
			b = append(b, text...)
			b = append(b, ',')
		}
	}
	if err != nil {
		return b, err
	}
	b = b[:len(b)-1] // the last comma
	b = append(b, "\n    }"...)
	return b, nil
}

// jsonAppendString appends s as encoding/json writes a string with HTML
// escaping off: quotes, backslashes and C0 controls escaped, invalid UTF-8
// as \ufffd, U+2028 and U+2029 as \u escapes, everything else as it is.
func jsonAppendString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
