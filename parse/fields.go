package parse

import (
	"bytes"
	"net/netip"
	"strconv"
	"time"
)

// The fields of the servers beyond nginx and Apache: a client with its
// port, a client at the end of X-Forwarded-For, HAProxy's captured
// headers and timers, and text encoded with '+', %XX or #XX.

// isDur reports whether the field is a request's duration.
func (f field) isDur() bool {
	switch f {
	case fDurSec, fDurMsec, fDurUsec, fDurTimer, fDurAuto:
		return true
	}
	return false
}

// duration reads a duration field; false for "-", HAProxy's -1 and the
// like (no duration logged).
func (p *lineParser) duration(f field, b []byte) (time.Duration, bool) {
	switch f {
	case fDurTimer:
		if len(b) > 0 && b[0] == '+' {
			b = b[1:]
		}
		if !allDigits(b) {
			return 0, false
		}
		return parseDecimal(b, time.Millisecond)
	case fDurAuto:
		if bytes.IndexByte(b, '.') >= 0 {
			return parseDecimal(b, time.Second)
		}
		return parseDecimal(b, time.Millisecond)
	}
	return parseDecimal(b, durUnit(f))
}

func fracUnit(f field) time.Duration {
	if f == fFracMsec {
		return time.Millisecond
	}
	return time.Microsecond
}

// location is the zone of times logged without an offset.
func (p *lineParser) location() *time.Location {
	if p.loc != nil {
		return p.loc
	}
	return time.Local
}

// validExtra checks the text of the fields of fields.go (validField's
// other half).
func validExtra(f field, b []byte) bool {
	switch f {
	case fFracMsec:
		return len(b) == 3 && allDigits(b)
	case fFracUsec:
		return len(b) == 6 && allDigits(b)
	case fDurTimer:
		if len(b) == 2 && b[0] == '-' && b[1] == '1' {
			return true
		}
		if len(b) > 0 && b[0] == '+' {
			b = b[1:]
		}
		return len(b) > 0 && len(b) <= 12 && allDigits(b)
	case fDurAuto:
		if len(b) == 1 && b[0] == '-' {
			return true
		}
		_, ok := parseDecimal(b, time.Second)
		return ok
	case fStatusOpt:
		return len(b) == 3 && allDigits(b) || string(b) == "-1" || string(b) == "0" || string(b) == "-"
	}
	return true
}

// splitAddrPort splits "192.0.2.1:51234", "[2001:db8::1]:443" or
// "2001:db8::1:443" (HAProxy writes IPv6 without brackets) into the
// address text and the port; ok is false when b is not so.
func splitAddrPort(b []byte) (addr []byte, ok bool) {
	i := bytes.LastIndexByte(b, ':')
	if i <= 0 || i == len(b)-1 || len(b)-i-1 > 5 || !allDigits(b[i+1:]) {
		return nil, false
	}
	a := b[:i]
	if a[0] == '[' {
		if len(a) < 3 || a[len(a)-1] != ']' {
			return nil, false
		}
		a = a[1 : len(a)-1]
	}
	return a, validIPv4(a) || validIPv6Text(a)
}

// lastXFF returns the last address of an X-Forwarded-For list, trimmed.
func lastXFF(b []byte) []byte {
	if i := bytes.LastIndexByte(b, ','); i >= 0 {
		b = b[i+1:]
	}
	return bytes.TrimSpace(b)
}

// clientText returns the text of a client field's address: without the
// port, or the last address of X-Forwarded-For.
func clientText(f field, b []byte) []byte {
	switch f {
	case fAddrPort:
		a, _ := splitAddrPort(b)
		return a
	case fXFFClient:
		return lastXFF(b)
	}
	return b
}

// checkExtra validates the client fields of fields.go, and returns why
// they are wrong, or "".
func checkExtra(it *item, b []byte) string {
	switch it.check {
	case checkAddrPort:
		if _, ok := splitAddrPort(b); !ok {
			return "bad client address:port " + strconv.Quote(clip(b))
		}
	case checkXFFClient:
		// "-": no X-Forwarded-For, so no client is logged (a request
		// from inside, to a sidecar): a request whose client is not
		// known, never judged.
		if a := lastXFF(b); !validIPv4(a) && !validIPv6Text(a) && !(len(b) == 1 && b[0] == '-') {
			return "the last X-Forwarded-For address " + strconv.Quote(clip(a)) + " is not an IP address (it is the client in this format)"
		}
	}
	return ""
}

// haproxyUA returns the User-Agent among HAProxy's captured request
// headers ("{host|Mozilla/5.0 …|…}"), or nil: the headers a frontend
// captures and their order are in its configuration, not in the log, so
// the User-Agent is taken to be the first captured value that starts
// with a product token ("Name/"): a Host has no '/', a Referer has ':'
// before its first '/', an address neither.
func haproxyUA(b []byte) []byte {
	if len(b) < 2 || b[0] != '{' {
		return nil
	}
	end := bytes.IndexByte(b, '}')
	if end < 0 {
		return nil
	}
	b = b[1:end]
	for len(b) > 0 {
		v := b
		if i := bytes.IndexByte(b, '|'); i >= 0 {
			v, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if looksLikeUA(v) {
			return v
		}
	}
	return nil
}

// looksLikeUA reports whether v starts with a product token and '/'.
func looksLikeUA(v []byte) bool {
	if len(v) < 2 || !(v[0] >= 'A' && v[0] <= 'Z' || v[0] >= 'a' && v[0] <= 'z') {
		return false
	}
	for i := 1; i < len(v); i++ {
		c := v[i]
		switch {
		case c == '/':
			return true
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '.', c == '-', c == '_':
		default:
			return false
		}
	}
	return false
}

// uaText returns a User-Agent field's text as sent: HAProxy's captured
// User-Agent, IIS's '+' for spaces (but before "http"), %XX and #XX decoded into the parser's
// scratch buffer (valid until the next call).
func (p *lineParser) uaText(b []byte, it *item) []byte {
	dec := it.dec
	if it.field == fCaptures {
		b, dec = haproxyUA(b), decHash
	}
	p.scratch = decodeInto(p.scratch[:0], b, dec)
	return p.scratch
}

// decodeInto appends b decoded as dec says.
func decodeInto(out, b []byte, dec uint8) []byte {
	esc := byte('%')
	if dec == decHash {
		esc = '#'
	}
	for i := 0; i < len(b); i++ {
		c := b[i]
		switch {
		case c == '+' && dec == decPlus && !bytes.HasPrefix(b[i+1:], []byte("http")):
			// IIS writes a space as '+', and a '+' as it is: the '+'
			// of "(+https://…)" and "; +http://…" in crawlers'
			// User-Agents stays one.
			c = ' '
		case c == esc && i+2 < len(b) && isHex(b[i+1]) && isHex(b[i+2]):
			c = unhex(b[i+1])<<4 | unhex(b[i+2])
			i += 2
		}
		out = append(out, c)
	}
	return out
}

// decodeText returns b decoded as dec says, as a string.
func decodeText(b []byte, dec uint8) string {
	if dec == decLog {
		return unescapeLog(b)
	}
	esc := byte('%')
	if dec == decHash {
		esc = '#'
	}
	if bytes.IndexByte(b, esc) < 0 && (dec != decPlus || bytes.IndexByte(b, '+') < 0) {
		return string(b)
	}
	return string(decodeInto(nil, b, dec))
}

// setExtra stores the fields of fields.go in rec.
func (p *lineParser) setExtra(rec *Record, it *item, b []byte) {
	switch it.field {
	case fAddrPort:
		a, _ := splitAddrPort(b)
		rec.ClientRaw = string(a)
		if addr, err := netip.ParseAddr(rec.ClientRaw); err == nil {
			rec.Client = addr.Unmap()
		}
	case fXFFClient:
		// The client is the last X-Forwarded-For address and no
		// connecting address is logged: Peer stays zero.
		rec.ClientFrom = FromXForwardedFor
		if len(b) != 1 || b[0] != '-' {
			rec.XFF = string(b)
		}
		a := lastXFF(b)
		rec.ClientRaw = string(a)
		if addr, err := netip.ParseAddr(rec.ClientRaw); err == nil {
			rec.Client = addr.Unmap()
		}
	case fCaptures:
		if ua := haproxyUA(b); ua != nil {
			rec.UserAgent = decodeText(ua, decHash)
		}
	case fStatusOpt:
		if len(b) == 3 && allDigits(b) {
			rec.Status = int(b[0]-'0')*100 + int(b[1]-'0')*10 + int(b[2]-'0')
		}
	case fDurTimer, fDurAuto:
		if d, ok := p.duration(it.field, b); ok {
			rec.Duration, rec.HasDuration = d, true
		}
	}
}
