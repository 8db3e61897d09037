package parse

import (
	"bytes"
	"fmt"
	"strings"
	"time"
)

// A preset followed by extra fields: the most common customisation of a
// log format is a built-in one with a few fields added at the end
// (Apache's %D, nginx's $request_time and $upstream_response_time,
// key=value pairs such as rt=0.123). Auto-detection reads such lines as
// the preset plus those fields, and names the result after them:
// "combined+sec" is combined and a duration in seconds,
// "vhost_combined+num" combined after a virtual host and a number,
// "combined+rt=sec+uct=str" combined, then rt= and a duration, then uct=
// and a quoted string. The kinds of extra fields:
//
//	sec   a duration in seconds with a fraction (nginx's $request_time)
//	ms    a duration followed by "ms" (Traefik writes 12ms)
//	num   a number ("-" too), kept unread: Apache's %D is microseconds,
//	      but %T, %I and %O are numbers too
//	word  any other text without a space, kept unread (the last one
//	      takes the rest of the line)
//	str   a quoted string, kept unread
//
// The first sec or ms field whose key is none, or names the request's
// time (rt, request_time, rtime, time, duration …), is read as the
// request's duration; the others are kept unread. A name of this form is
// also a valid --log-format value.

// extra is one extra field.
type extra struct {
	key  string // "rt" for rt=0.123, or ""
	kind string // sec, ms, num, word, str
}

func (e extra) String() string {
	if e.key != "" {
		return e.key + "=" + e.kind
	}
	return e.kind
}

// extraBases are the presets extra fields may follow, most specific
// first.
var extraBases = []*Format{VhostCombined, VhostCommon, NginxMain, Combined, Common}

// durationKeys are the keys of a key=value extra field that name the
// request's duration.
var durationKeys = map[string]bool{"rt": true, "request_time": true, "reqtime": true, "rtime": true, "req_time": true,
	"time": true, "duration": true, "dur": true, "took": true, "elapsed": true, "request_duration": true, "t": true}

// buildExtended returns base followed by the extra fields.
func buildExtended(base *Format, extras []extra) (*Format, error) {
	if len(extras) == 0 {
		return base, nil
	}
	if base.header != headerNone {
		f, err := buildExtended(base.base, extras)
		if err != nil {
			return nil, err
		}
		return withHeader(f, base.header), nil
	}
	if base.json || base.w3c != nil || len(extras) > maxExtras {
		return nil, fmt.Errorf("%w: %s takes no extra fields", ErrFormat, base.name)
	}
	f := &Format{name: base.name, strictHost: base.strictHost, timeIsEnd: base.timeIsEnd}
	f.items = append(f.items, base.items...)
	read := base.hasDur
	var name strings.Builder
	name.WriteString(base.name)
	last := &f.items[len(f.items)-1]
	for _, e := range extras {
		name.WriteString("+" + e.String())
		lit := " "
		if e.key != "" {
			lit += e.key + "="
		}
		fl := fIgnore
		switch e.kind {
		case "sec", "ms":
			if !read && (e.key == "" || durationKeys[strings.ToLower(e.key)]) {
				read = true
				fl = fDurSec
				if e.kind == "ms" {
					fl = fDurMsec
				} else {
					f.timeIsEnd = true // nginx logs when the response ended
				}
			}
		case "num", "word":
		case "str":
			lit += `"`
		default:
			return nil, fmt.Errorf("%w: unknown extra field %q after %s: use sec, ms, num, word or str, each optionally after KEY=", ErrFormat, e.kind, base.name)
		}
		if e.key != "" && !isExtraKey(e.key) {
			return nil, fmt.Errorf("%w: bad key %q of an extra field after %s", ErrFormat, e.key, base.name)
		}
		if last.isLit {
			last.lit += lit
		} else {
			f.items = append(f.items, item{isLit: true, lit: lit})
		}
		f.items = append(f.items, item{field: fl})
		var after string
		switch e.kind {
		case "str":
			after = `"`
		case "ms":
			after = "ms"
		}
		if after != "" {
			f.items = append(f.items, item{isLit: true, lit: after})
		}
		last = &f.items[len(f.items)-1]
	}
	f.name = name.String()
	// The items of base were finished for base: they are finished again
	// for their new places.
	for i := range f.items {
		it := &f.items[i]
		it.step, it.delim, it.width, it.check, it.quoted = 0, 0, 0, 0, false
	}
	if err := f.finish(f.name); err != nil {
		return nil, err
	}
	for i := range f.items {
		if it := &f.items[i]; it.field == fHost && it.check == checkNone {
			it.check = checkVhost
		}
	}
	return f, nil
}

func isExtraKey(k string) bool {
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !(c == '_' || c == '-' || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return k != ""
}

// parseExtended reads a name such as "combined+sec" or
// "vhost_combined+rt=sec+str"; ok is false when name has no '+'.
func parseExtended(name string) (*Format, bool, error) {
	base, rest, ok := strings.Cut(name, "+")
	if !ok {
		return nil, false, nil
	}
	b := LookupFormat(base)
	if b == nil {
		return nil, false, nil
	}
	var extras []extra
	for _, p := range strings.Split(rest, "+") {
		e := extra{kind: p}
		if k, v, ok := strings.Cut(p, "="); ok {
			e = extra{key: k, kind: v}
		}
		extras = append(extras, e)
	}
	f, err := buildExtended(b, extras)
	return f, true, err
}

// withTail returns base followed by a space and the rest of the line,
// for finding what follows a preset on each line.
func withTail(base *Format) *Format {
	f, err := buildExtended(base, []extra{{kind: "word"}})
	if err != nil {
		return nil
	}
	return f
}

// inferExtras reads the text after a preset on one line (tail, without
// the space before it) as extra fields, or returns nil when it cannot.
func inferExtras(tail []byte) []extra {
	var out []extra
	for len(tail) > 0 {
		if len(out) == maxExtras {
			return nil
		}
		var e extra
		// key=
		if k := keyPrefix(tail); k > 0 {
			e.key = string(tail[:k-1])
			tail = tail[k:]
		}
		var v []byte
		if len(tail) > 0 && tail[0] == '"' {
			end := findQuote(tail, 1)
			if end < 0 {
				return nil
			}
			v, tail = tail[:end+1], tail[end+1:]
			e.kind = "str"
		} else {
			end := bytes.IndexByte(tail, ' ')
			if end < 0 {
				end = len(tail)
			}
			v, tail = tail[:end], tail[end:]
			e.kind = valueKind(v)
		}
		if len(v) == 0 {
			return nil
		}
		out = append(out, e)
		if len(tail) == 0 {
			break
		}
		if tail[0] != ' ' || len(tail) == 1 {
			return nil
		}
		tail = tail[1:]
	}
	return out
}

// keyPrefix returns the length of a "key=" at the start of b, or 0.
func keyPrefix(b []byte) int {
	for i, c := range b {
		if c == '=' {
			if i > 0 && i < 40 {
				return i + 1
			}
			return 0
		}
		if !(c == '_' || c == '-' || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return 0
		}
	}
	return 0
}

// valueKind tells what an unquoted extra value is: sec, ms, num or word.
// "-" is num: a number not logged.
func valueKind(v []byte) string {
	switch {
	case len(v) == 1 && v[0] == '-', allDigits(v) && len(v) <= 19:
		return "num"
	case bytes.HasSuffix(v, []byte("ms")) && durationText(v[:len(v)-2], time.Millisecond):
		return "ms"
	case bytes.IndexByte(v, '.') > 0 && durationText(v, time.Second):
		return "sec"
	}
	return "word"
}

// mergeExtras combines the extra fields of two lines with the same
// fields: a column that is sec on one and num on the other ("-", or a
// round number) stays sec; otherwise columns that differ become word.
// ok is false when the lines do not have the same number of fields with
// the same keys and quoting.
func mergeExtras(a, b []extra) ([]extra, bool) {
	if len(a) != len(b) {
		return nil, false
	}
	out := make([]extra, len(a))
	for i := range a {
		x, y := a[i], b[i]
		if x.key != y.key || (x.kind == "str") != (y.kind == "str") {
			return nil, false
		}
		switch {
		case x.kind == y.kind:
		case x.kind == "num" && (y.kind == "sec" || y.kind == "ms"):
			x.kind = y.kind
		case y.kind == "num" && (x.kind == "sec" || x.kind == "ms"):
		default:
			x.kind = "word"
		}
		out[i] = x
	}
	return out, true
}

// durationText reports whether v reads as a duration in unit.
func durationText(v []byte, unit time.Duration) bool {
	_, ok := parseDecimal(v, unit)
	return ok
}

// maxExtras is the most extra fields after a preset (netnea's "extended"
// Apache format adds 17 to combined).
const maxExtras = 40
