package parse

import (
	"bytes"
	"math"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/addrset"
	"github.com/lohisoft/lohibot-audit/proxy"
)

// span is a field's position in a line: line[s:e].
type span struct{ s, e int32 }

// lineParser matches lines against one format. It keeps per-goroutine
// caches and must not be shared between goroutines.
type lineParser struct {
	f      *Format
	claims *TokenSet // the crawlers' tokens
	listed *addrset.Set
	site   string
	// trust are the proxies whose requests carry the real client in a
	// logged header; trustXFF trusts every connecting address
	// (--trust-xff).
	trust    *proxy.Set
	trustXFF bool
	// jsonReal says the JSON line being read has a real-client key.
	jsonReal bool
	keepAll  bool // build a record for every valid line (tests, small inputs)
	// ipOnly refuses host names as clients: auto-detection and the lines
	// read in a detected format take IP address literals only.
	ipOnly bool
	off    int // length of the header (syslog, container) of the current line
	zones  map[int]*time.Location
	spans  [maxItems]span // where the fields of the current line are
	// loc is the zone of times without an offset (nil: time.Local).
	loc *time.Location
	// strictQuotes makes the last quoted field end at its first
	// unescaped quote, as detection wants: a format whose last quoted
	// field would take in more quoted fields does not fit.
	strictQuotes bool
	// scratch holds a decoded User-Agent while it is matched.
	scratch []byte
	// notRequest is set when parse refuses a line that is no request
	// rather than a malformed one (an entry of Caddy's other loggers).
	notRequest bool
}

func newLineParser(f *Format, claims *TokenSet, listed *addrset.Set, site string, trustXFF bool) *lineParser {
	return &lineParser{f: f, claims: claims, listed: listed, site: site, trustXFF: trustXFF, zones: map[int]*time.Location{}}
}

// at names a byte of the current line for a reason: i counts from the
// start of the message, after any syslog header.
func (p *lineParser) at(i int) string { return strconv.Itoa(p.off + i + 1) }

// parse checks line (without its line ending) against the format. It
// returns a reason when the line does not match. When the line is of
// interest (a claimed hit, or a request from a listed address) it fills
// rec and sets keep.
func (p *lineParser) parse(line []byte, rec *Record) (keep bool, reason string) {
	p.off = 0
	p.notRequest = false
	if h := p.f.header; h != headerNone {
		n := h.length(line)
		if n < 0 {
			if h == headerSyslog && isJournalMarker(line) {
				return false, "a journalctl marker line, not a request"
			}
			if h == headerSyslog {
				return false, "no syslog header"
			}
			return false, "no container log prefix"
		}
		p.off, line = n, line[n:]
	}
	if p.f.json {
		return p.parseJSON(line, rec)
	}
	if len(p.f.items) == 0 {
		return false, "no #Fields: directive before this line: the fields of a W3C log are not known"
	}
	spans := &p.spans
	items := p.f.items
	pos := 0
	for i := range items {
		it := &items[i]
		end := len(line)
		switch it.step {
		case stepLit1:
			if pos >= len(line) || line[pos] != it.lit[0] {
				return false, "expected " + strconv.Quote(it.lit) + " at byte " + p.at(pos)
			}
			pos++
			continue
		case stepLit:
			if len(line)-pos < len(it.lit) || string(line[pos:pos+len(it.lit)]) != it.lit {
				return false, "expected " + strconv.Quote(it.lit) + " at byte " + p.at(pos)
			}
			pos += len(it.lit)
			continue
		case stepLastQuoted:
			// The last quoted field: its end is the closing quote at the
			// end of the line, even if a logger left a bare quote inside.
			next := items[i+1].lit
			if len(line)-pos < len(next) || string(line[len(line)-len(next):]) != next {
				if q := findQuote(line, pos); q >= 0 && strings.HasPrefix(next, `"`) {
					return false, "unexpected text after the last field at byte " + p.at(q+len(next))
				}
				return false, "line does not end with " + strconv.Quote(next)
			}
			end = len(line) - len(next)
			if p.strictQuotes && findQuote(line, pos) != end {
				return false, "a bare '\"' inside the " + fieldNames[it.field] + " field at byte " + p.at(findQuote(line, pos))
			}
		case stepQuoted:
			end = findQuote(line, pos)
		case stepUntil:
			// An unquoted field ends where the next literal starts: it
			// cannot hold that literal (one byte here), so a line is
			// never split two ways. A field of fixed width (a CLF time,
			// a status) is tried at its width first: when that text is
			// not a valid field, nothing shorter would have been either.
			// A one-byte field ("-") is taken only when the literal does
			// not start right away: the field is then not empty.
			if w := it.width; w > 0 && pos+w < len(line) && line[pos+w] == it.delim && (w > 1 || line[pos] != it.delim) {
				end = pos + w
			} else {
				end = indexByteFrom(line, pos, it.delim)
			}
		case stepTime:
			var t tcivil
			if end = it.tl.match(line, pos, &t); end < 0 {
				return false, "bad time at byte " + p.at(pos) + " (expected " + strconv.Quote(it.tl.src) + ")"
			}
		case stepBraces:
			end = pos
			for end < len(line) && line[end] == '{' {
				j := indexByteFrom(line, end, '}')
				if j < 0 || j+1 >= len(line) || line[j+1] != ' ' {
					return false, "unterminated captured headers at byte " + p.at(end)
				}
				end = j + 2
			}
		case stepUntilLit:
			// A longer literal such as " [" after the remote user: the
			// field may hold spaces (nginx logs any Basic user name).
			// The usual "-" is tried first, as above.
			lit := items[i+1].lit
			if it.width == 1 && len(line)-pos > len(lit) && line[pos] != lit[0] && string(line[pos+1:pos+1+len(lit)]) == lit {
				end = pos + 1
			} else {
				end = indexLitFrom(line, pos, lit)
			}
		}
		if end < 0 {
			return false, "no " + strconv.Quote(items[i+1].lit) + " after the " + fieldNames[it.field] + " field"
		}
		if c := it.check; c == checkField {
			if !validField(it.field, line[pos:end]) {
				return false, p.checkText(it, line[pos:end])
			}
		} else if c == checkClient {
			// The usual IPv4 client without the slower checks.
			if !validIPv4(line[pos:end]) {
				if r := clientReason(line[pos:end], p.ipOnly); r != "" {
					return false, r
				}
			}
		} else if c == checkAddrPort || c == checkXFFClient {
			if r := p.checkText(it, line[pos:end]); r != "" {
				return false, r
			}
		} else if c != checkNone && (end-pos != 1 || line[pos] != '-') {
			// A "-" user or logname needs no call.
			if r := p.checkText(it, line[pos:end]); r != "" {
				return false, r
			}
		}
		spans[i] = span{int32(pos), int32(end)}
		pos = end
	}
	if pos != len(line) {
		return false, "unexpected text after the last field at byte " + p.at(pos)
	}
	if p.f.post {
		if r := p.checkSpan(line, spans); r != "" {
			return false, r
		}
	}

	var claims uint64
	listed := false
	if i := p.f.uaItem; i >= 0 && p.f.uaSpecial {
		// Captured headers, or a User-Agent encoded otherwise than
		// servers escape it: matched decoded.
		claims = p.claims.MatchText(p.uaText(line[spans[i].s:spans[i].e], &p.f.items[i]))
	} else if i >= 0 {
		// Servers never escape letters, digits or the other token
		// characters, and every escape decodes to a byte that is none
		// (a quote, a backslash, a control, a non-ASCII byte), so a
		// product token is in the logged text, at token boundaries read
		// through the escapes (TokenSet.Match), exactly when it is in
		// the User-Agent sent.
		claims = p.claims.Match(line[spans[i].s:spans[i].e])
	}
	claimed := claims != 0
	if i := p.f.addrItem; i >= 0 && p.listed != nil && !claimed {
		addr := clientText(p.f.items[i].field, line[spans[i].s:spans[i].e])
		if p.reads() && p.trustsText(addr) {
			// Behind a trusted proxy the client is in a header: it is
			// the one to look up.
			listed = p.listedBehind(line, spans)
		} else {
			listed = p.listed.ContainsText(addr)
		}
	}
	if !claimed && !listed && !p.keepAll {
		return false, ""
	}
	p.fillText(line, spans, rec)
	rec.Claims, rec.Claimed = claims, claimed
	return true, ""
}

// reads reports whether a real client may be read from a header: some
// proxy is trusted and the format logs a real-client header.
func (p *lineParser) reads() bool {
	return (p.trustXFF || p.trust.Reads()) && (p.f.json || p.f.realItems != noRealItems)
}

// noRealItems is the realItems of a format that logs no real-client
// header.
var noRealItems = [numClientSources]int{-1, -1, -1, -1, -1}

// trusts reports whether connecting address a is a trusted proxy.
func (p *lineParser) trusts(a netip.Addr) bool { return p.trustXFF || p.trust.Trusts(a) }

// trustsText is trusts for the address written in b, without allocating
// for IPv4.
func (p *lineParser) trustsText(b []byte) bool { return p.trustXFF || p.trust.TrustsText(b) }

// listedBehind reports whether the real client of a line from a trusted
// proxy, read from the first real-client header the line carries, is a
// listed address. It allocates nothing for IPv4 clients.
func (p *lineParser) listedBehind(line []byte, spans *[maxItems]span) bool {
	for c := FromXForwardedFor; c < numClientSources; c++ {
		i := p.f.realItems[c]
		if i < 0 {
			continue
		}
		v := line[spans[i].s:spans[i].e]
		if len(v) == 0 || len(v) == 1 && v[0] == '-' {
			continue
		}
		a, ok := headerClient(p.trust, v)
		return ok && p.listed.Contains(a)
	}
	return false
}

// checkText validates the text of one field of a text format, and
// returns why it is wrong, or "".
func (p *lineParser) checkText(it *item, b []byte) string {
	switch it.check {
	case checkClient:
		return clientReason(b, p.ipOnly)
	case checkUser:
		if !validUser(b) {
			return "remote user " + strconv.Quote(clip(b)) + " holds another field (a virtual host or a syslog header before the client?)"
		}
	case checkIdent:
		if len(b) != 1 && classifyClient(b) == clientIP {
			return "an address " + strconv.Quote(clip(b)) + " where the remote logname belongs (a virtual host before the client?)"
		}
	case checkVhost:
		if !validVhost(b) {
			return "bad virtual host " + strconv.Quote(clip(b))
		}
	case checkAddrPort, checkXFFClient:
		return checkExtra(it, b)
	default:
		if !validField(it.field, b) {
			return "bad " + fieldNames[it.field] + " " + strconv.Quote(clip(b))
		}
	}
	return ""
}

// validUser accepts a remote user. nginx and Apache log a Basic user name
// as it was sent, spaces included; but a name with spaces that has a word
// "-" or an IP address in it is the text of other fields, taken in when a
// line has more fields before the client than the format says (a virtual
// host, a syslog header).
func validUser(b []byte) bool {
	if bytes.IndexByte(b, ' ') < 0 {
		return true
	}
	for len(b) > 0 {
		w := b
		if i := bytes.IndexByte(b, ' '); i >= 0 {
			w, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if len(w) == 1 && w[0] == '-' || classifyClient(w) == clientIP {
			return false
		}
	}
	return true
}

// validVhost accepts the virtual host of a built-in format: a host name
// (one label is enough here), an IPv4 address or an IPv6 address in
// brackets, each with an optional ":port"; or "-".
func validVhost(b []byte) bool {
	if len(b) == 1 && b[0] == '-' {
		return true
	}
	if i := bytes.LastIndexByte(b, ':'); i >= 0 && (len(b) == 0 || b[0] != '[' || b[i-1] == ']') {
		port := b[i+1:]
		if len(port) == 0 || len(port) > 5 || !allDigits(port) {
			return false
		}
		b = b[:i]
	}
	if len(b) == 0 {
		return false
	}
	if b[0] == '[' {
		return len(b) > 2 && b[len(b)-1] == ']' && validIPv6Text(b[1:len(b)-1])
	}
	if len(b) > 0 && b[len(b)-1] == '.' {
		b = b[:len(b)-1]
	}
	if len(b) == 0 || len(b) > 253 {
		return false
	}
	for _, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// checkSpan makes sure that a line's time, when it comes in parts, makes a
// whole time, and that the start and end of a request with a logged
// duration are times a report can carry.
func (p *lineParser) checkSpan(line []byte, spans *[maxItems]span) string {
	var t time.Time
	var timeRes, d time.Duration
	hasDur := false
	var tp timeParts
	for i := range p.f.items {
		it := &p.f.items[i]
		if it.isLit {
			continue
		}
		b := line[spans[i].s:spans[i].e]
		switch {
		case it.field.isTime():
			if tt, res, ok := p.fieldTime(it.field, b); ok && (timeRes == 0 || res < timeRes) {
				t, timeRes = tt, res
			}
		case it.field == fTimeStrf:
			var tc tcivil
			it.tl.match(b, 0, &tc)
			tp.add(&tc, it.tl.utc)
		case it.field == fFracMsec || it.field == fFracUsec:
			tp.frac(b, fracUnit(it.field))
		case it.field.isDur():
			if !hasDur {
				d, hasDur = p.duration(it.field, b)
			}
		}
	}
	if p.f.splitTime {
		tt, res, ok := tp.time(p.location())
		if !ok {
			if tp.parts&(partDate|partClock) == partDate|partClock || tp.parts&partEpoch != 0 {
				return "the time is not a day that exists in the years 0001-9999"
			}
			if timeRes == 0 {
				return "the time fields give no whole time"
			}
		} else if timeRes == 0 || res < timeRes {
			t = tt
		}
	}
	if !hasDur {
		return ""
	}
	other := t.Add(d)
	if p.f.timeIsEnd {
		other = t.Add(-d)
	}
	if !reportableTime(other) {
		return "request time " + t.UTC().Format(time.RFC3339) + " and duration " + d.String() + " give a time outside the years 0001-9999"
	}
	return ""
}

// lineTime returns the time logged on a well-formed line.
func (p *lineParser) lineTime(line []byte) time.Time {
	keepAll := p.keepAll
	p.keepAll = true
	var rec Record
	p.parse(line, &rec)
	p.keepAll = keepAll
	return rec.Time
}

func clip(b []byte) string {
	if len(b) > 60 {
		cut := 60
		for cut > 0 && b[cut]&0xc0 == 0x80 {
			cut-- // not inside a UTF-8 sequence
		}
		return string(b[:cut]) + "…"
	}
	return string(b)
}

// indexByteFrom returns the index of the first c at or after from, or -1.
// Fields are mostly short, so the first bytes are looked at one by one
// before the vectorised search is worth its setup.
func indexByteFrom(b []byte, from int, c byte) int {
	end := min(from+32, len(b))
	for i := from; i < end; i++ {
		if b[i] == c {
			return i
		}
	}
	if end == len(b) {
		return -1
	}
	if j := bytes.IndexByte(b[end:], c); j >= 0 {
		return end + j
	}
	return -1
}

// indexLitFrom returns the index of the first lit at or after from, or
// -1. The literals of a format are short and usually found at once.
func indexLitFrom(b []byte, from int, lit string) int {
	for {
		i := indexByteFrom(b, from, lit[0])
		if i < 0 || len(b)-i < len(lit) {
			return -1
		}
		if string(b[i:i+len(lit)]) == lit {
			return i
		}
		from = i + 1
	}
}

// findQuote returns the index of the first '"' at or after from that is
// not escaped by a backslash, or -1.
func findQuote(b []byte, from int) int {
	for i := from; i < len(b); {
		j := bytes.IndexByte(b[i:], '"')
		if j < 0 {
			return -1
		}
		k := i + j
		n := 0
		for m := k - 1; m >= from && b[m] == '\\'; m-- {
			n++
		}
		if n%2 == 0 {
			return k
		}
		i = k + 1
	}
	return -1
}

// validField checks a field's text cheaply, without allocating. Times
// must fall in the years 0001-9999, as logged and in UTC: a report cannot
// carry others.
func validField(f field, b []byte) bool {
	switch f {
	case fAddr:
		k := classifyClient(b)
		return k == clientIP || k == clientName
	case fTimeCLF:
		return validCLFTime(b)
	case fTimeISO:
		_, ok := isoFields(b)
		return ok
	case fTimeSec, fTimeMsecInt, fTimeUsecInt:
		_, _, _, ok := epochParts(b, epochUnit(f))
		return ok && allDigits(b)
	case fTimeMsec:
		_, _, _, ok := epochParts(b, time.Second)
		return ok
	case fStatus:
		return len(b) == 3 && allDigits(b)
	case fBytes:
		return len(b) > 0 && (allDigits(b) || (len(b) == 1 && b[0] == '-'))
	case fDurSec, fDurMsec, fDurUsec:
		if len(b) == 1 && b[0] == '-' {
			return true
		}
		_, ok := parseDecimal(b, durUnit(f))
		return ok
	}
	return validExtra(f, b)
}

func allDigits(b []byte) bool {
	for _, c := range b {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// validDecimal accepts digits with at most one '.' and at least one digit.
func validDecimal(b []byte) bool {
	digits, dots := 0, 0
	for _, c := range b {
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '.':
			dots++
		default:
			return false
		}
	}
	return digits > 0 && dots <= 1
}

// monthIndex returns 0 for "Jan" … 11 for "Dec", or -1.
func monthIndex(a, b, c byte) int {
	switch uint32(a)<<16 | uint32(b)<<8 | uint32(c) {
	case 'J'<<16 | 'a'<<8 | 'n':
		return 0
	case 'F'<<16 | 'e'<<8 | 'b':
		return 1
	case 'M'<<16 | 'a'<<8 | 'r':
		return 2
	case 'A'<<16 | 'p'<<8 | 'r':
		return 3
	case 'M'<<16 | 'a'<<8 | 'y':
		return 4
	case 'J'<<16 | 'u'<<8 | 'n':
		return 5
	case 'J'<<16 | 'u'<<8 | 'l':
		return 6
	case 'A'<<16 | 'u'<<8 | 'g':
		return 7
	case 'S'<<16 | 'e'<<8 | 'p':
		return 8
	case 'O'<<16 | 'c'<<8 | 't':
		return 9
	case 'N'<<16 | 'o'<<8 | 'v':
		return 10
	case 'D'<<16 | 'e'<<8 | 'c':
		return 11
	}
	return -1
}

// The seconds since the epoch of the first and the last second a report
// can carry: 0001-01-01T00:00:00Z (its first instant excluded: it is the
// zero time) and 9999-12-31T23:59:59Z.
const (
	minUnix = -62135596800
	maxUnix = 253402300799
)

// civil is a calendar time as logged, with its zone offset in seconds.
type civil struct {
	y, mo, d, h, mi, s, nsec, off int
}

// valid checks that the date exists and that the time falls in the years
// 0001-9999 both as logged and in UTC. Only the first and the last year
// need the conversion.
func (c *civil) valid() bool {
	if c.y < 1 || c.y > 9999 || c.mo < 1 || c.mo > 12 || c.d < 1 || c.d > 28 && c.d > daysIn(c.mo, c.y) {
		return false
	}
	if c.y == 1 || c.y == 9999 {
		u := time.Date(c.y, time.Month(c.mo), c.d, c.h, c.mi, c.s, 0, time.UTC).Unix() - int64(c.off)
		// The very first instant is the zero time.Time, which stands
		// for "no time" everywhere.
		return (u > minUnix || u == minUnix && c.nsec > 0) && u <= maxUnix
	}
	return true
}

func daysIn(month, year int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// reportableTime reports whether t falls in the years 0001-9999, both in
// its own zone and in UTC, and is not the zero time.
func reportableTime(t time.Time) bool {
	y, u := t.Year(), t.UTC().Year()
	return y >= 1 && y <= 9999 && u >= 1 && u <= 9999 && !t.IsZero()
}

// validCLFTime checks "02/Jan/2006:15:04:05 -0700" as clfFields does,
// quicker: only the first and the last year need the whole check.
func validCLFTime(b []byte) bool {
	if len(b) != 26 || b[2] != '/' || b[6] != '/' || b[11] != ':' || b[14] != ':' || b[17] != ':' || b[20] != ' ' || (b[21] != '+' && b[21] != '-') {
		return false
	}
	mon := monthIndex(b[3], b[4], b[5])
	d, ok1 := num2(b[0:2])
	y, ok2 := num4(b[7:11])
	h, ok3 := num2(b[12:14])
	mi, ok4 := num2(b[15:17])
	s, ok5 := num2(b[18:20])
	zh, ok6 := num2(b[22:24])
	zm, ok7 := num2(b[24:26])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7) || mon < 0 || d < 1 || h > 23 || mi > 59 || s > 60 || zh > 23 || zm > 59 {
		return false
	}
	if y <= 1 || y >= 9999 {
		_, ok := clfFields(b)
		return ok
	}
	return d <= 28 || d <= daysIn(mon+1, y)
}

// clfFields parses "02/Jan/2006:15:04:05 -0700" into its parts.
func clfFields(b []byte) (c civil, ok bool) {
	if len(b) != 26 || b[2] != '/' || b[6] != '/' || b[11] != ':' || b[14] != ':' || b[17] != ':' || b[20] != ' ' {
		return c, false
	}
	mon := monthIndex(b[3], b[4], b[5])
	if mon < 0 {
		return c, false
	}
	d, ok1 := num2(b[0:2])
	y, ok2 := num4(b[7:11])
	h, ok3 := num2(b[12:14])
	mi, ok4 := num2(b[15:17])
	s, ok5 := num2(b[18:20])
	zh, ok6 := num2(b[22:24])
	zm, ok7 := num2(b[24:26])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && ok7) || (b[21] != '+' && b[21] != '-') {
		return c, false
	}
	if h > 23 || mi > 59 || s > 60 || zh > 23 || zm > 59 {
		return c, false
	}
	off := zh*3600 + zm*60
	if b[21] == '-' {
		off = -off
	}
	c = civil{y: y, mo: mon + 1, d: d, h: h, mi: mi, s: s, off: off}
	return c, c.valid()
}

func num2(b []byte) (int, bool) {
	if b[0] < '0' || b[0] > '9' || b[1] < '0' || b[1] > '9' {
		return 0, false
	}
	return int(b[0]-'0')*10 + int(b[1]-'0'), true
}

func num4(b []byte) (int, bool) {
	a, ok1 := num2(b[0:2])
	c, ok2 := num2(b[2:4])
	return a*100 + c, ok1 && ok2
}

func (p *lineParser) zone(offset int) *time.Location {
	if offset == 0 {
		return time.UTC
	}
	if z, ok := p.zones[offset]; ok {
		return z
	}
	z := time.FixedZone("", offset)
	if len(p.zones) < 64 {
		p.zones[offset] = z
	}
	return z
}

func (p *lineParser) civilTime(c civil) time.Time {
	return time.Date(c.y, time.Month(c.mo), c.d, c.h, c.mi, c.s, c.nsec, p.zone(c.off))
}

func (p *lineParser) clfTime(b []byte) (time.Time, bool) {
	c, ok := clfFields(b)
	if !ok {
		return time.Time{}, false
	}
	return p.civilTime(c), true
}

// isoFields parses "2006-01-02T15:04:05" with optional fraction and a zone
// of Z, ±hh:mm or ±hhmm.
func isoFields(b []byte) (c civil, ok bool) {
	if len(b) < 20 || b[4] != '-' || b[7] != '-' || (b[10] != 'T' && b[10] != ' ') || b[13] != ':' || b[16] != ':' {
		return c, false
	}
	y, ok1 := num4(b[0:4])
	mo, ok2 := num2(b[5:7])
	d, ok3 := num2(b[8:10])
	h, ok4 := num2(b[11:13])
	mi, ok5 := num2(b[14:16])
	s, ok6 := num2(b[17:19])
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || h > 23 || mi > 59 || s > 60 {
		return c, false
	}
	rest := b[19:]
	nsec := 0
	if len(rest) > 0 && (rest[0] == '.' || rest[0] == ',') {
		i := 1
		scale := 100000000
		for i < len(rest) && rest[i] >= '0' && rest[i] <= '9' {
			nsec += int(rest[i]-'0') * scale
			scale /= 10
			i++
		}
		if i == 1 {
			return c, false
		}
		rest = rest[i:]
	}
	off := 0
	switch {
	case len(rest) == 1 && rest[0] == 'Z':
	case len(rest) == 6 && (rest[0] == '+' || rest[0] == '-') && rest[3] == ':':
		zh, a := num2(rest[1:3])
		zm, c := num2(rest[4:6])
		if !a || !c || zh > 23 || zm > 59 {
			return civil{}, false
		}
		off = zh*3600 + zm*60
		if rest[0] == '-' {
			off = -off
		}
	case len(rest) == 5 && (rest[0] == '+' || rest[0] == '-'):
		zh, a := num2(rest[1:3])
		zm, c := num2(rest[3:5])
		if !a || !c || zh > 23 || zm > 59 {
			return civil{}, false
		}
		off = zh*3600 + zm*60
		if rest[0] == '-' {
			off = -off
		}
	default:
		return c, false
	}
	c = civil{y: y, mo: mo, d: d, h: h, mi: mi, s: s, nsec: nsec, off: off}
	return c, c.valid()
}

// isoTime parses an ISO 8601 time (see isoFields); its resolution is a
// millisecond when it has a fraction, else a second.
func (p *lineParser) isoTime(b []byte) (time.Time, time.Duration, bool) {
	c, ok := isoFields(b)
	if !ok {
		return time.Time{}, 0, false
	}
	res := time.Second
	if bytes.IndexAny(b, ".,") >= 0 {
		res = time.Millisecond
	}
	return p.civilTime(c), res, true
}

// parseDecimal parses digits with an optional fraction, scaled by unit,
// into a duration. It rejects values past about 146 years.
func parseDecimal(b []byte, unit time.Duration) (time.Duration, bool) {
	if !validDecimal(b) {
		return 0, false
	}
	intPart, frac, _ := bytes.Cut(b, []byte("."))
	const limit = math.MaxInt64 / 2
	var n int64
	for _, c := range intPart {
		n = n*10 + int64(c-'0')
		if n > limit/int64(unit) {
			return 0, false
		}
	}
	d := time.Duration(n) * unit
	scale := unit / 10
	for _, c := range frac {
		if scale == 0 {
			break
		}
		d += time.Duration(c-'0') * scale
		scale /= 10
	}
	return d, true
}

func durUnit(f field) time.Duration {
	switch f {
	case fDurMsec:
		return time.Millisecond
	case fDurUsec:
		return time.Microsecond
	}
	return time.Second
}

func epochUnit(f field) time.Duration {
	switch f {
	case fTimeMsecInt:
		return time.Millisecond
	case fTimeUsecInt:
		return time.Microsecond
	}
	return time.Second
}

// epochParts parses a decimal number of units since the epoch into
// seconds and nanoseconds, and the resolution its digits give. It fails
// past 9999-12-31T23:59:59Z.
func epochParts(b []byte, unit time.Duration) (sec, nsec int64, res time.Duration, ok bool) {
	if !validDecimal(b) {
		return 0, 0, 0, false
	}
	intPart, frac, _ := bytes.Cut(b, []byte("."))
	perSec := int64(time.Second / unit)
	var n int64
	for _, c := range intPart {
		n = n*10 + int64(c-'0')
		if n/perSec > maxUnix {
			return 0, 0, 0, false
		}
	}
	sec, nsec, res = n/perSec, n%perSec*int64(unit), unit
	scale := int64(unit) / 10
	for _, c := range frac {
		if scale == 0 {
			break
		}
		nsec += int64(c-'0') * scale
		res = time.Duration(scale)
		scale /= 10
	}
	return sec, nsec, res, true
}

// epochTime converts a decimal number of units since the epoch.
func epochTime(b []byte, unit time.Duration) (time.Time, time.Duration, bool) {
	sec, nsec, res, ok := epochParts(b, unit)
	if !ok {
		return time.Time{}, 0, false
	}
	return time.Unix(sec, nsec).UTC(), res, true
}

// fieldTime reads a time field of a well-formed line, and its resolution.
func (p *lineParser) fieldTime(f field, b []byte) (time.Time, time.Duration, bool) {
	switch f {
	case fTimeCLF:
		t, ok := p.clfTime(b)
		return t, time.Second, ok
	case fTimeISO:
		return p.isoTime(b)
	case fTimeSec, fTimeMsecInt, fTimeUsecInt:
		t, _, ok := epochTime(b, epochUnit(f))
		return t, epochUnit(f), ok
	case fTimeMsec:
		return epochTime(b, time.Second)
	case fTimeAny:
		return p.anyTime(b, true)
	}
	return time.Time{}, 0, false
}

// fillText builds rec from a line that matched a text format.
func (p *lineParser) fillText(line []byte, spans *[maxItems]span, rec *Record) {
	*rec = Record{Bytes: -1}
	var path, query, hostHeader string
	var timeRes time.Duration
	var tp timeParts
	for i := range p.f.items {
		it := &p.f.items[i]
		if it.isLit || it.field == fIgnore {
			continue
		}
		b := line[spans[i].s:spans[i].e]
		switch it.field {
		case fTimeStrf:
			var tc tcivil
			it.tl.match(b, 0, &tc)
			tp.add(&tc, it.tl.utc)
		case fFracMsec, fFracUsec:
			tp.frac(b, fracUnit(it.field))
		case fAddrPort, fXFFClient, fCaptures, fDurTimer, fDurAuto, fStatusOpt:
			p.setExtra(rec, it, b)
		default:
			enc := encLog
			if it.dec != decLog && it.field.isText() {
				b, enc = []byte(decodeText(b, it.dec)), encRaw
			}
			p.setField(rec, it.field, b, enc, &path, &query, &hostHeader, &timeRes)
		}
	}
	if p.f.splitTime {
		if t, res, ok := tp.time(p.location()); ok && (timeRes == 0 || res < timeRes) {
			rec.Time, timeRes = t, res
		}
	}
	p.finishRecord(rec, path, query, hostHeader, timeRes)
}

// How setField reads a text field.
const (
	encLog  = iota // log-escaped (\xHH, \")
	encJSON        // the inside of a JSON string
	encRaw         // as it is
)

// setField stores one field's text in rec; enc says how the text is
// escaped.
func (p *lineParser) setField(rec *Record, f field, b []byte, enc int, path, query, hostHeader *string, timeRes *time.Duration) {
	text := func() string {
		switch enc {
		case encJSON:
			return unescapeJSON(b)
		case encRaw:
			return string(b)
		}
		return unescapeLog(b)
	}
	dash := len(b) == 1 && b[0] == '-'
	better := func(res time.Duration) bool { return *timeRes == 0 || res < *timeRes }
	switch f {
	case fAddr:
		rec.ClientRaw = text()
		if a, err := netip.ParseAddr(strings.TrimSpace(rec.ClientRaw)); err == nil {
			rec.Client = a.Unmap()
		}
	case fUser:
		if !dash {
			rec.RemoteUser = text()
		}
	case fTimeCLF, fTimeISO, fTimeSec, fTimeMsec, fTimeMsecInt, fTimeUsecInt:
		if t, res, ok := p.fieldTime(f, b); ok && better(res) {
			rec.Time, *timeRes = t, res
		}
	case fRequest:
		rec.Request = text()
	case fMethod:
		rec.Method = text()
	case fURI:
		rec.Target = text()
	case fPath:
		*path = text()
	case fQuery:
		if !dash {
			*query = text()
		}
	case fProto:
		rec.Proto = text()
	case fStatus:
		if n, err := strconv.Atoi(string(b)); err == nil && n >= 0 && n < 1000 {
			rec.Status = n
		}
	case fBytes:
		if n, err := strconv.ParseInt(string(b), 10, 64); err == nil {
			rec.Bytes = n
		}
	case fReferer:
		if !dash {
			rec.Referer = text()
		}
	case fUA:
		if !dash {
			rec.UserAgent = text()
		}
	case fHost:
		if !dash && len(b) > 0 {
			rec.Host = text()
		}
	case fHostHeader:
		if !dash && len(b) > 0 {
			*hostHeader = text()
		}
	case fDurSec, fDurMsec, fDurUsec:
		if d, ok := parseDecimal(b, durUnit(f)); ok {
			rec.Duration, rec.HasDuration = d, true
		}
	case fRetryAfter:
		if !dash {
			rec.RetryAfter = text()
		}
	case fXFF:
		if !dash {
			rec.XFF = text()
		}
	case fCFConnectingIP:
		if !dash {
			rec.CFConnectingIP = text()
		}
	case fTrueClientIP:
		if !dash {
			rec.TrueClientIP = text()
		}
	case fXRealIP:
		if !dash {
			rec.XRealIP = text()
		}
	}
}

// finishRecord derives the fields that depend on several others.
func (p *lineParser) finishRecord(rec *Record, path, query, hostHeader string, timeRes time.Duration) {
	if rec.Request != "" && rec.Method == "" && rec.Target == "" {
		rec.Method, rec.Target, rec.Proto = splitRequest(rec.Request)
	}
	if rec.Target == "" && path != "" {
		rec.Target = path
		if query != "" {
			if query[0] != '?' {
				query = "?" + query
			}
			rec.Target += query
		}
	}
	if rec.Host == "" {
		rec.Host = hostHeader
	}
	if rec.Host == "" && p.f.hostFromTarget {
		rec.Host = targetHost(rec.Target)
	}
	rec.Host = NormalizeSite(rec.Host)
	if rec.Host == "" {
		rec.Host = p.site
	}
	if p.reads() && (!p.f.json || p.jsonReal) && rec.Client.IsValid() && p.trusts(rec.Client) {
		p.realClient(rec)
	}
	rec.Resolution = timeRes
	rec.Start, rec.End = rec.Time, rec.Time
	if rec.HasDuration {
		if p.f.timeIsEnd {
			rec.Start = rec.Time.Add(-rec.Duration)
		} else {
			rec.End = rec.Time.Add(rec.Duration)
		}
	}
}

// splitRequest splits a request line into method, target and protocol.
// The target may hold spaces (servers log what the client sent); the
// protocol is the last word when it starts with "HTTP/". A line that is not
// a request (a TLS handshake sent to a plain port, say) gives three empty
// strings.
func splitRequest(req string) (method, target, proto string) {
	m, rest, ok := strings.Cut(req, " ")
	if !ok || m == "" || rest == "" {
		return "", "", ""
	}
	for i := 0; i < len(m); i++ {
		if c := m[i]; c < 'A' || c > 'Z' {
			if c != '-' && c != '_' && (c < 'a' || c > 'z') {
				return "", "", ""
			}
		}
	}
	if i := strings.LastIndexByte(rest, ' '); i >= 0 && strings.HasPrefix(rest[i+1:], "HTTP/") {
		return m, rest[:i], rest[i+1:]
	}
	if strings.HasPrefix(rest, "HTTP/") {
		return "", "", ""
	}
	return m, rest, "" // HTTP/0.9, or a protocol the server did not log
}

// targetHost returns the host of an absolute-form request target
// ("http://www.example.com:80/x" gives "www.example.com:80"), or "".
func targetHost(t string) string {
	_, rest, ok := strings.Cut(t, "://")
	if !ok || strings.ContainsAny(t[:len(t)-len(rest)-3], "/?") {
		return ""
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	if i := strings.LastIndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	return rest
}

// NormalizeSite turns a virtual host or Host header into a site name: lower
// case, without a port or trailing dot ("Blog.Example:443" is
// "blog.example", "[2001:db8::1]:8080" is "2001:db8::1").
func NormalizeSite(h string) string {
	h = strings.TrimSpace(h)
	if h == "" || h == "-" {
		return ""
	}
	if h[0] == '[' {
		if i := strings.IndexByte(h, ']'); i > 0 {
			h = h[1:i]
		}
	} else if i := strings.LastIndexByte(h, ':'); i >= 0 && strings.Count(h, ":") == 1 {
		h = h[:i]
	}
	h = strings.TrimSuffix(h, ".")
	return strings.ToLower(h)
}

// unescapeLog undoes the escaping Apache and nginx apply to logged values:
// \xHH, \", \\ and Apache's \n \r \t \b \v \f. Other text is kept as it is.
func unescapeLog(b []byte) string {
	if bytes.IndexByte(b, '\\') < 0 {
		return string(b)
	}
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		c := b[i]
		if c != '\\' || i+1 >= len(b) {
			out = append(out, c)
			continue
		}
		switch n := b[i+1]; n {
		case 'x', 'X':
			if i+3 < len(b) && isHex(b[i+2]) && isHex(b[i+3]) {
				out = append(out, unhex(b[i+2])<<4|unhex(b[i+3]))
				i += 3
				continue
			}
			out = append(out, c)
		case '"', '\\':
			out = append(out, n)
			i++
		case 'n':
			out = append(out, '\n')
			i++
		case 'r':
			out = append(out, '\r')
			i++
		case 't':
			out = append(out, '\t')
			i++
		case 'b':
			out = append(out, '\b')
			i++
		case 'v':
			out = append(out, '\v')
			i++
		case 'f':
			out = append(out, '\f')
			i++
		default:
			out = append(out, c)
		}
	}
	return string(out)
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
