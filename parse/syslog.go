package parse

// Syslog headers in front of access log lines.
//
// nginx's access_log syslog:server=… sends "<PRI>Mmm dd hh:mm:ss HOST TAG: "
// (without HOST when nohostname is set; the day padded with a space);
// rsyslog writes what it receives into files as "Mmm dd hh:mm:ss HOST TAG: "
// (RSYSLOG_TraditionalFileFormat), "2026-12-01T06:25:01.123456+01:00 HOST
// TAG: " (RSYSLOG_FileFormat, the default of newer releases) or
// "<PRI>1 2026-12-01T06:25:01.123456+01:00 HOST APP PROCID MSGID SD "
// (RSYSLOG_SyslogProtocol23Format, RFC 5424); journalctl prints "Dec 01
// 06:25:01 HOST TAG[PID]: " (short), with microseconds (short-precise),
// "2026-12-01T06:25:01+0100 HOST TAG[PID]: " (short-iso, and
// short-iso-precise with microseconds), or "Tue 2026-12-01 06:25:01 CET
// HOST TAG[PID]: " (short-full); --no-hostname leaves HOST out.

// syslogHeaderLen returns the length of the syslog header at the start of
// line (up to the message, past the spaces before it), or -1 when line
// does not start with one. It does not allocate.
//
// The host is never taken for the message: after the time comes either a
// tag ("nginx:", "nginx[812]:"), or a host and then a tag, or a host and
// the message. A line without a host and without a tag therefore loses
// its first word to the host, and fails the format, rather than giving
// the syslog host as a field of the request.
func syslogHeaderLen(line []byte) int {
	i := 0
	if len(line) > 0 && line[0] == '<' {
		j := 1
		for j < len(line) && j <= 4 && line[j] >= '0' && line[j] <= '9' {
			j++
		}
		if j == 1 || j > 4 || j >= len(line) || line[j] != '>' {
			return -1
		}
		if pri := atoiSmall(line[1:j]); pri > 191 || j > 2 && line[1] == '0' {
			return -1
		}
		i = j + 1
	}
	// RFC 5424: VERSION SP TIMESTAMP SP HOSTNAME SP APP-NAME SP PROCID SP
	// MSGID SP STRUCTURED-DATA [SP MSG]
	if j := i; j < len(line) && line[j] >= '1' && line[j] <= '9' {
		j++
		if j < len(line) && line[j] >= '0' && line[j] <= '9' {
			j++
		}
		if j < len(line) && line[j] == ' ' {
			return rfc5424Rest(line, j+1)
		}
	}
	n := syslogTime(line[i:])
	if n < 0 {
		return -1
	}
	i += n
	if i >= len(line) || line[i] != ' ' {
		return -1
	}
	i++
	if criStream(line[i:]) > 0 {
		// "TIME stdout F ": a container runtime's prefix (CRI), whose
		// stream is no syslog host.
		return -1
	}
	// [HOST SP] [TAG SP] MSG
	w := wordEnd(line, i)
	if w == i {
		return -1
	}
	if isSyslogTag(line[i:w]) {
		return skipSpaces(line, w)
	}
	i = skipSpaces(line, w) // the host
	if w2 := wordEnd(line, i); w2 > i && isSyslogTag(line[i:w2]) {
		return skipSpaces(line, w2)
	}
	return i
}

// rfc5424Rest reads an RFC 5424 header from TIMESTAMP on (at i).
func rfc5424Rest(line []byte, i int) int {
	// TIMESTAMP: an RFC 3339 time or "-"
	if i < len(line) && line[i] == '-' {
		i++
	} else {
		n := rfc3339Len(line[i:], true)
		if n < 0 {
			return -1
		}
		i += n
	}
	// HOSTNAME APP-NAME PROCID MSGID: printable words of at most 255, 48,
	// 128 and 32 bytes, or "-"
	for _, max := range [...]int{255, 48, 128, 32} {
		if i >= len(line) || line[i] != ' ' {
			return -1
		}
		i++
		w := i
		for w < len(line) && line[w] > ' ' && line[w] < 0x7f {
			w++
		}
		if w == i || w-i > max {
			return -1
		}
		i = w
	}
	if i >= len(line) || line[i] != ' ' {
		return -1
	}
	i++
	// STRUCTURED-DATA: "-" or [ID PARAM="VALUE" …]…, where a value escapes
	// '"', '\' and ']' with a backslash.
	switch {
	case i < len(line) && line[i] == '-':
		i++
	case i < len(line) && line[i] == '[':
		for i < len(line) && line[i] == '[' {
			if i = sdElementEnd(line, i); i < 0 {
				return -1
			}
		}
	default:
		return -1
	}
	if i == len(line) {
		return i
	}
	if line[i] != ' ' {
		return -1
	}
	i = skipSpaces(line, i)
	// A UTF-8 message may start with a byte order mark.
	if len(line)-i >= 3 && line[i] == 0xef && line[i+1] == 0xbb && line[i+2] == 0xbf {
		i += 3
	}
	return i
}

// sdElementEnd returns the index just past the structured data element
// "[SD-ID *(SP PARAM-NAME="PARAM-VALUE")]" at line[i], or -1. Names are
// 1 to 32 printable bytes other than '=', ' ', ']' and '"'; a value escapes
// '"', '\' and ']' with a backslash.
func sdElementEnd(line []byte, i int) int {
	name := func(i int) int {
		j := i
		for j < len(line) && j-i < 32 && line[j] > ' ' && line[j] < 0x7f && line[j] != '=' && line[j] != ']' && line[j] != '"' {
			j++
		}
		if j == i {
			return -1
		}
		return j
	}
	if i = name(i + 1); i < 0 {
		return -1
	}
	for i < len(line) && line[i] == ' ' {
		if i = name(i + 1); i < 0 || i+1 >= len(line) || line[i] != '=' || line[i+1] != '"' {
			return -1
		}
		i += 2
		for i < len(line) && line[i] != '"' {
			if line[i] == '\\' {
				i++
			}
			i++
		}
		if i >= len(line) {
			return -1
		}
		i++ // past the closing '"'
	}
	if i >= len(line) || line[i] != ']' {
		return -1
	}
	return i + 1
}

// syslogTime returns the length of the time at the start of b: "Mmm dd
// hh:mm:ss" (the day padded with a space or a zero, optionally with a
// fraction), an RFC 3339 time (the zone with or without ':'), or
// journalctl's short-full "Www YYYY-MM-DD hh:mm:ss ZONE"; -1 when b does
// not start with one.
func syslogTime(b []byte) int {
	if len(b) >= 15 && monthIndex(b[0], b[1], b[2]) >= 0 && b[3] == ' ' {
		if !(b[4] == ' ' || b[4] >= '0' && b[4] <= '3') || b[5] < '0' || b[5] > '9' || b[6] != ' ' {
			return -1
		}
		if !clockAt(b, 7) {
			return -1
		}
		return 15 + fractionLen(b[15:])
	}
	if len(b) >= 4 && weekday(b[:3]) && b[3] == ' ' {
		// short-full: "Tue 2026-12-01 06:25:01 CET"
		r := b[4:]
		if len(r) < 19 || !dateAt(r, 0) || r[10] != ' ' || !clockAt(r, 11) {
			return -1
		}
		n := 4 + 19
		n += fractionLen(b[n:])
		if n >= len(b) || b[n] != ' ' {
			return -1
		}
		z := n + 1
		for z < len(b) && (b[z] >= 'A' && b[z] <= 'Z' || b[z] >= 'a' && b[z] <= 'z' || b[z] >= '0' && b[z] <= '9' || b[z] == '+' || b[z] == '-' || b[z] == '/' || b[z] == '_') {
			z++
		}
		if z == n+1 {
			return -1
		}
		return z
	}
	return rfc3339Len(b, false)
}

// rfc3339Len returns the length of the time "YYYY-MM-DDThh:mm:ss[.frac]"
// with a zone of "Z", "±hh:mm" or, unless strict, "±hhmm" at the start of
// b, or -1.
func rfc3339Len(b []byte, strict bool) int {
	if len(b) < 20 || !dateAt(b, 0) || b[10] != 'T' || !clockAt(b, 11) {
		return -1
	}
	n := 19 + fractionLen(b[19:])
	switch {
	case n < len(b) && b[n] == 'Z':
		return n + 1
	case len(b)-n >= 6 && (b[n] == '+' || b[n] == '-') && b[n+3] == ':' && digits(b[n+1:n+3]) && digits(b[n+4:n+6]):
		return n + 6
	case !strict && len(b)-n >= 5 && (b[n] == '+' || b[n] == '-') && digits(b[n+1:n+5]):
		return n + 5
	}
	return -1
}

// dateAt checks "YYYY-MM-DD" at b[i:].
func dateAt(b []byte, i int) bool {
	return len(b)-i >= 10 && digits(b[i:i+4]) && b[i+4] == '-' && digits(b[i+5:i+7]) && b[i+7] == '-' && digits(b[i+8:i+10])
}

// clockAt checks "hh:mm:ss" at b[i:].
func clockAt(b []byte, i int) bool {
	return len(b)-i >= 8 && digits(b[i:i+2]) && b[i+2] == ':' && digits(b[i+3:i+5]) && b[i+5] == ':' && digits(b[i+6:i+8])
}

// fractionLen returns the length of ".digits" at the start of b, or 0.
func fractionLen(b []byte) int {
	if len(b) < 2 || b[0] != '.' {
		return 0
	}
	n := 1
	for n < len(b) && b[n] >= '0' && b[n] <= '9' {
		n++
	}
	if n == 1 {
		return 0
	}
	return n
}

func digits(b []byte) bool {
	return len(b) > 0 && allDigits(b)
}

func weekday(b []byte) bool {
	switch string(b) {
	case "Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun":
		return true
	}
	return false
}

// isSyslogTag reports whether w is a tag: "nginx:", "nginx[812]:",
// "/usr/sbin/httpd[4]:" — a name without ':' or '[' (at most 128 bytes),
// an optional process id in brackets, and a ':' at the end.
func isSyslogTag(w []byte) bool {
	if len(w) < 2 || w[len(w)-1] != ':' {
		return false
	}
	w = w[:len(w)-1]
	if w[len(w)-1] == ']' {
		open := -1
		for k := len(w) - 2; k >= 0; k-- {
			if w[k] == '[' {
				open = k
				break
			}
		}
		if open <= 0 {
			return false
		}
		w = w[:open]
	}
	if len(w) > 128 {
		return false
	}
	for _, c := range w {
		if c == ':' || c == '[' || c == ']' || c == '"' || c == '{' {
			return false
		}
	}
	return true
}

// wordEnd returns the index of the first space at or after i, or len(b).
func wordEnd(b []byte, i int) int {
	for i < len(b) && b[i] != ' ' {
		i++
	}
	return i
}

func skipSpaces(b []byte, i int) int {
	for i < len(b) && b[i] == ' ' {
		i++
	}
	return i
}

// atoiSmall parses at most a few digits.
func atoiSmall(b []byte) int {
	n := 0
	for _, c := range b {
		n = n*10 + int(c-'0')
	}
	return n
}

// isJournalMarker reports whether line is one of journalctl's own lines
// ("-- Boot 5f…--", "-- No entries --", "-- Logs begin at … --").
func isJournalMarker(line []byte) bool {
	return len(line) >= 6 && string(line[:3]) == "-- " && string(line[len(line)-3:]) == " --"
}
