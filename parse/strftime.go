package parse

import (
	"fmt"
	"strings"
	"time"
)

// A timeLayout is a strftime(3) format compiled into steps that read a
// logged time from left to right, without allocating: Apache's
// %{FORMAT}t, and the times of other servers' formats (HAProxy's accept
// date, a W3C log's date and time). A layout may give only some parts of
// a time (%H:%M:%S gives no date): the parts of every time field of a line
// are put together (see timeParts).
type timeLayout struct {
	src   string
	steps []tstep
	// parts is what the layout gives: partDate, partClock, partZone …
	parts uint8
	// utc says the time is in UTC when it has no zone (W3C logs).
	utc bool
	// internal layouts may use %L.
	internal bool
}

// The parts of a time.
const (
	partDate  uint8 = 1 << iota // year, month and day
	partClock                   // hour, minute and second
	partZone                    // the UTC offset (or a zone name)
	partFrac                    // a fraction of the second
	partEpoch                   // seconds since the epoch: the whole instant
)

type tstep struct {
	op  uint8
	lit string
}

// Steps of a layout.
const (
	tLit      uint8 = iota // lit, exactly
	tYear4                 // %Y: four digits
	tYear2                 // %y: two digits, 1969-2068 as POSIX says
	tMonth                 // %m: 01-12
	tMonAbbr               // %b %h: Jan … Dec
	tMonFull               // %B: January … December
	tDay                   // %d: 01-31
	tDaySpace              // %e: " 1"-"31"
	tHour                  // %H: 00-23
	tHour12                // %I: 01-12
	tMin                   // %M
	tSec                   // %S: 00-60
	tAMPM                  // %p: AM or PM
	tDOY                   // %j: 001-366
	tZone                  // %z: +hhmm (also +hh:mm, Z)
	tZoneName              // %Z: letters (UTC and GMT are UTC; others take the default zone)
	tEpoch                 // %s: seconds since the epoch
	tWord                  // %a %A: letters (a weekday's name, not checked)
	tNum                   // %u %w %U %W %V %G %g %C: digits, not used
	tSpace                 // %n %t: white space
	tFrac                  // (internal) '.' or ',' and 1-9 digits
)

// compileStrftime compiles a strftime format. It accepts the conversions
// of POSIX strftime that a log's time may use; %c, %x, %X, %r, %D, %F, %R
// and %T are written out as the C locale does.
func compileStrftime(src string) (*timeLayout, error) { return compileLayout(src, false) }

// compileLayout compiles a strftime format; internal layouts may also
// use %L, a fraction of a second after '.' or ','.
func compileLayout(src string, internal bool) (*timeLayout, error) {
	l := &timeLayout{src: src, internal: internal}
	if err := l.add(src); err != nil {
		return nil, err
	}
	if l.parts&(partDate|partEpoch) == 0 && l.parts&partClock == 0 {
		return nil, fmt.Errorf("time format %q holds neither a date nor a time of day", src)
	}
	return l, nil
}

// mustLayout compiles a built-in layout; "%L" is a fraction of a second
// (HAProxy's .655).
func mustLayout(src string, utc bool) *timeLayout {
	l, err := compileLayout(src, true)
	if err != nil {
		panic("parse: built-in time layout " + src + ": " + err.Error())
	}
	l.utc = utc
	return l
}

func (l *timeLayout) lit(s string) {
	if n := len(l.steps); n > 0 && l.steps[n-1].op == tLit {
		l.steps[n-1].lit += s
		return
	}
	l.steps = append(l.steps, tstep{op: tLit, lit: s})
}

func (l *timeLayout) add(s string) error {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '%' {
			l.lit(string(c))
			continue
		}
		i++
		if i >= len(s) {
			return fmt.Errorf("time format %q ends in '%%'", s)
		}
		// GNU flags and widths (%-d, %_H, %0e) are read and ignored:
		// the number steps accept what each writes.
		for i < len(s) && (s[i] == '-' || s[i] == '_' || s[i] == '0' || s[i] == '^' || s[i] == '#') {
			i++
		}
		if i < len(s) && (s[i] == 'E' || s[i] == 'O') {
			i++
		}
		if i >= len(s) {
			return fmt.Errorf("time format %q ends in a '%%' conversion without its letter", s)
		}
		op := uint8(255)
		var sub string
		var part uint8
		switch s[i] {
		case '%':
			l.lit("%")
			continue
		case 'Y':
			op, part = tYear4, partDate
		case 'y':
			op, part = tYear2, partDate
		case 'm':
			op, part = tMonth, partDate
		case 'b', 'h':
			op, part = tMonAbbr, partDate
		case 'B':
			op, part = tMonFull, partDate
		case 'd':
			op, part = tDay, partDate
		case 'e':
			op, part = tDaySpace, partDate
		case 'j':
			op, part = tDOY, partDate
		case 'H':
			op, part = tHour, partClock
		case 'I':
			op, part = tHour12, partClock
		case 'M':
			op, part = tMin, partClock
		case 'S':
			op, part = tSec, partClock
		case 'p', 'P':
			op = tAMPM
		case 'z':
			op, part = tZone, partZone
		case 'Z':
			op, part = tZoneName, partZone
		case 's':
			op, part = tEpoch, partEpoch
		case 'a', 'A':
			op = tWord
		case 'u', 'w', 'U', 'W', 'V', 'G', 'g', 'C':
			op = tNum
		case 'n', 't':
			op = tSpace
		case 'L':
			if !l.internal {
				return fmt.Errorf("time format %q: %%L is not a strftime conversion; Apache writes a fraction with %%{msec_frac}t or %%{usec_frac}t", s)
			}
			op, part = tFrac, partFrac
		case 'c':
			sub = "%a %b %e %H:%M:%S %Y"
		case 'x', 'D':
			sub = "%m/%d/%y"
		case 'X', 'T':
			sub = "%H:%M:%S"
		case 'r':
			sub = "%I:%M:%S %p"
		case 'F':
			sub = "%Y-%m-%d"
		case 'R':
			sub = "%H:%M"
		default:
			return fmt.Errorf("time format %q: %%%c is not a strftime conversion a log's time can use", s, s[i])
		}
		if sub != "" {
			if err := l.add(sub); err != nil {
				return err
			}
			continue
		}
		l.steps = append(l.steps, tstep{op: op})
		l.parts |= part
	}
	if l.parts&partDate != 0 && !l.hasDay() {
		return fmt.Errorf("time format %q has a year or month but not the whole date (%%Y, %%m and %%d, or %%Y and %%j)", s)
	}
	return nil
}

// hasDay reports whether the layout gives a whole date: a year and a day
// of the year, or a year, a month and a day.
func (l *timeLayout) hasDay() bool {
	var y, m, d, j bool
	for _, st := range l.steps {
		switch st.op {
		case tYear4, tYear2:
			y = true
		case tMonth, tMonAbbr, tMonFull:
			m = true
		case tDay, tDaySpace:
			d = true
		case tDOY:
			j = true
		}
	}
	return y && (j || m && d)
}

// tcivil is what a layout read: the parts it gives, in civil.
type tcivil struct {
	civil
	parts uint8
	pm    int8 // 0: no %p, 1: AM, 2: PM
	doy   int  // %j, when no month
	epoch int64
	res   time.Duration // the resolution of a fraction
}

var monthFull = [12]string{"january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november", "december"}

// match reads the layout from b[pos:]. It returns the end of the time and
// what it read, or -1.
func (l *timeLayout) match(b []byte, pos int, t *tcivil) int {
	*t = tcivil{parts: l.parts}
	t.d, t.mo = 1, 1
	for _, st := range l.steps {
		switch st.op {
		case tLit:
			if len(b)-pos < len(st.lit) || string(b[pos:pos+len(st.lit)]) != st.lit {
				return -1
			}
			pos += len(st.lit)
		case tYear4:
			v, n := digitsAt(b, pos, 4, 4)
			if n < 0 {
				return -1
			}
			t.y, pos = v, n
		case tYear2:
			v, n := digitsAt(b, pos, 2, 2)
			if n < 0 {
				return -1
			}
			if v < 69 {
				v += 2000
			} else {
				v += 1900
			}
			t.y, pos = v, n
		case tMonth:
			v, n := digitsAt(b, pos, 1, 2)
			if n < 0 || v < 1 || v > 12 {
				return -1
			}
			t.mo, pos = v, n
		case tMonAbbr:
			if len(b)-pos < 3 {
				return -1
			}
			m := monthIndex(upperASCII(b[pos]), lowerASCII(b[pos+1]), lowerASCII(b[pos+2]))
			if m < 0 {
				return -1
			}
			t.mo, pos = m+1, pos+3
		case tMonFull:
			found := false
			for m, name := range monthFull {
				if len(b)-pos >= len(name) && strings.EqualFold(string(b[pos:pos+len(name)]), name) {
					t.mo, pos, found = m+1, pos+len(name), true
					break
				}
			}
			if !found {
				return -1
			}
		case tDay, tDaySpace:
			if st.op == tDaySpace && pos < len(b) && b[pos] == ' ' {
				pos++
			}
			v, n := digitsAt(b, pos, 1, 2)
			if n < 0 || v < 1 || v > 31 {
				return -1
			}
			t.d, pos = v, n
		case tDOY:
			v, n := digitsAt(b, pos, 1, 3)
			if n < 0 || v < 1 || v > 366 {
				return -1
			}
			t.doy, pos = v, n
		case tHour, tHour12:
			v, n := digitsAt(b, pos, 1, 2)
			if n < 0 || v > 23 || st.op == tHour12 && (v < 1 || v > 12) {
				return -1
			}
			t.h, pos = v, n
		case tMin:
			v, n := digitsAt(b, pos, 1, 2)
			if n < 0 || v > 59 {
				return -1
			}
			t.mi, pos = v, n
		case tSec:
			v, n := digitsAt(b, pos, 1, 2)
			if n < 0 || v > 60 {
				return -1
			}
			t.s, pos = v, n
		case tAMPM:
			if len(b)-pos < 2 || lowerASCII(b[pos+1]) != 'm' {
				return -1
			}
			switch lowerASCII(b[pos]) {
			case 'a':
				t.pm = 1
			case 'p':
				t.pm = 2
			default:
				return -1
			}
			pos += 2
		case tZone:
			off, n := zoneAt(b, pos)
			if n < 0 {
				return -1
			}
			t.off, pos = off, n
		case tZoneName:
			n := pos
			for n < len(b) && n-pos < 6 && (b[n] >= 'A' && b[n] <= 'Z' || b[n] >= 'a' && b[n] <= 'z') {
				n++
			}
			if n == pos {
				return -1
			}
			switch string(b[pos:n]) {
			case "UTC", "GMT", "Z", "UT":
			default:
				// A zone name says no offset for sure ("CST" is three
				// zones): the default zone decides.
				t.parts &^= partZone
			}
			pos = n
		case tEpoch:
			n := pos
			for n < len(b) && n-pos < 12 && b[n] >= '0' && b[n] <= '9' {
				n++
			}
			if n == pos || n-pos == 12 {
				return -1
			}
			var v int64
			for _, c := range b[pos:n] {
				v = v*10 + int64(c-'0')
			}
			if v > maxUnix {
				return -1
			}
			t.epoch, pos = v, n
		case tWord:
			n := pos
			for n < len(b) && n-pos < 12 && (b[n] >= 'A' && b[n] <= 'Z' || b[n] >= 'a' && b[n] <= 'z') {
				n++
			}
			if n == pos {
				return -1
			}
			pos = n
		case tNum:
			n := pos
			for n < len(b) && n-pos < 4 && b[n] >= '0' && b[n] <= '9' {
				n++
			}
			if n == pos {
				return -1
			}
			pos = n
		case tSpace:
			n := pos
			for n < len(b) && (b[n] == ' ' || b[n] == '\t') {
				n++
			}
			if n == pos {
				return -1
			}
			pos = n
		case tFrac:
			if pos >= len(b) || b[pos] != '.' && b[pos] != ',' {
				return -1
			}
			nsec, res, n := fracAt(b, pos+1)
			if n < 0 {
				return -1
			}
			t.nsec, t.res, pos = nsec, res, n
		}
	}
	if t.pm != 0 && t.h > 0 && t.h <= 12 {
		t.h %= 12
		if t.pm == 2 {
			t.h += 12
		}
	}
	if t.doy > 0 && t.parts&partDate != 0 {
		if t.doy > 365 && daysIn(2, t.y) == 28 {
			return -1
		}
		d := time.Date(t.y, 1, t.doy, 0, 0, 0, 0, time.UTC)
		t.mo, t.d = int(d.Month()), d.Day()
	}
	if t.parts&partDate != 0 && t.d > 28 && t.d > daysIn(t.mo, t.y) {
		return -1
	}
	return pos
}

// fracAt reads 1 to 9 digits of a fraction of a second at b[pos:]: the
// nanoseconds, the resolution, and the end, or -1.
func fracAt(b []byte, pos int) (nsec int, res time.Duration, end int) {
	n := pos
	scale := 100000000
	res = time.Second
	for n < len(b) && b[n] >= '0' && b[n] <= '9' {
		if n-pos == 9 {
			return 0, 0, -1
		}
		nsec += int(b[n]-'0') * scale
		res /= 10
		scale /= 10
		n++
	}
	if n == pos {
		return 0, 0, -1
	}
	return nsec, res, n
}

// digitsAt reads min to max digits at b[pos:] (fewer than max only when
// a non-digit follows): the value and the end, or -1.
func digitsAt(b []byte, pos, least, most int) (int, int) {
	v, n := 0, pos
	for n < len(b) && n-pos < most && b[n] >= '0' && b[n] <= '9' {
		v = v*10 + int(b[n]-'0')
		n++
	}
	if n-pos < least {
		return 0, -1
	}
	return v, n
}

// zoneAt reads a UTC offset at b[pos:]: +hhmm, +hh:mm or Z.
func zoneAt(b []byte, pos int) (int, int) {
	if pos < len(b) && b[pos] == 'Z' {
		return 0, pos + 1
	}
	if len(b)-pos < 5 || b[pos] != '+' && b[pos] != '-' {
		return 0, -1
	}
	zh, ok1 := num2(b[pos+1 : pos+3])
	i := pos + 3
	if b[i] == ':' {
		i++
	}
	if len(b)-i < 2 {
		return 0, -1
	}
	zm, ok2 := num2(b[i : i+2])
	if !ok1 || !ok2 || zh > 23 || zm > 59 {
		return 0, -1
	}
	off := zh*3600 + zm*60
	if b[pos] == '-' {
		off = -off
	}
	return off, i + 2
}

func upperASCII(c byte) byte {
	if c >= 'a' && c <= 'z' {
		return c - 32
	}
	return c
}

// timeParts puts together the time parts of one line's time fields.
type timeParts struct {
	t     tcivil
	parts uint8
	utc   bool
}

func (tp *timeParts) add(t *tcivil, utc bool) {
	p := t.parts
	if p&partEpoch != 0 {
		tp.t.epoch = t.epoch
	}
	if p&partDate != 0 {
		tp.t.y, tp.t.mo, tp.t.d = t.y, t.mo, t.d
	}
	if p&partClock != 0 {
		tp.t.h, tp.t.mi, tp.t.s = t.h, t.mi, t.s
	}
	if p&partZone != 0 {
		tp.t.off = t.off
	}
	if p&partFrac != 0 || t.res != 0 {
		tp.t.nsec, tp.t.res = t.nsec, t.res
		p |= partFrac
	}
	tp.parts |= p
	tp.utc = tp.utc || utc
}

// frac adds a fraction of a second written as n digits (Apache's
// %{msec_frac}t and %{usec_frac}t).
func (tp *timeParts) frac(b []byte, unit time.Duration) bool {
	if len(b) == 0 || len(b) > 9 || !allDigits(b) {
		return false
	}
	v := 0
	for _, c := range b {
		v = v*10 + int(c-'0')
	}
	if time.Duration(v)*unit >= time.Second {
		return false
	}
	tp.t.nsec, tp.t.res = int(time.Duration(v)*unit), unit
	tp.parts |= partFrac
	return true
}

// time returns the instant the parts make, in loc when they carry no
// offset, and its resolution; false when the parts do not make a whole
// time, or one outside the years 0001-9999.
func (tp *timeParts) time(loc *time.Location) (time.Time, time.Duration, bool) {
	res := time.Second
	if tp.parts&partFrac != 0 && tp.t.res != 0 {
		res = tp.t.res
	}
	if tp.parts&partEpoch != 0 {
		t := time.Unix(tp.t.epoch, int64(tp.t.nsec)).UTC()
		return t, res, reportableTime(t)
	}
	if tp.parts&(partDate|partClock) != partDate|partClock {
		return time.Time{}, 0, false
	}
	c := tp.t.civil
	if tp.parts&partZone != 0 || tp.utc || loc == nil {
		if !c.valid() {
			return time.Time{}, 0, false
		}
		z := time.UTC
		if c.off != 0 {
			z = time.FixedZone("", c.off)
		}
		return time.Date(c.y, time.Month(c.mo), c.d, c.h, c.mi, c.s, c.nsec, z), res, true
	}
	if c.y < 1 || c.y > 9999 {
		return time.Time{}, 0, false
	}
	t := time.Date(c.y, time.Month(c.mo), c.d, c.h, c.mi, c.s, c.nsec, loc)
	return t, res, reportableTime(t)
}
