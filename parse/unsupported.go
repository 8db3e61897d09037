package parse

import (
	"bytes"
	"regexp"
)

// UnsupportedError is an input that auto-detection recognises as a kind
// of log the reader does not read: an HAProxy tcplog, a W3C extended log
// without its #Fields: directive, a web server's error log. It wraps
// ErrUnknownFormat.
type UnsupportedError struct {
	// Kind names the log, as in "an HAProxy tcplog", and Why says why
	// it is not read and what to do: "no request line (log the
	// frontend with option httplog)".
	Kind, Why string
}

func (e *UnsupportedError) Error() string {
	return ErrUnknownFormat.Error() + ": it looks like " + e.Looks()
}

// Looks says what the log looks like and why it is not read: "an
// HAProxy tcplog: no request line (…)".
func (e *UnsupportedError) Looks() string { return e.Kind + ": " + e.Why }

func (e *UnsupportedError) Unwrap() error { return ErrUnknownFormat }

// The lines of the logs recognised, looked at only once detection has
// failed (never per line of a log that is read).
var (
	// w3cEntry is a W3C extended log's entry: the date and time first.
	w3cEntry = regexp.MustCompile(`^\d{4}-\d\d-\d\d[ \t]\d\d:\d\d:\d\d[ \t]`)
	// nginxError is a line of nginx's error_log.
	nginxError = regexp.MustCompile(`^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d \[(debug|info|notice|warn|error|crit|alert|emerg)\] `)
	// apacheError is a line of Apache's ErrorLog (2.2 and 2.4).
	apacheError = regexp.MustCompile(`^\[[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d(\.\d+)? \d{4}\] \[`)
	// haproxyTCP is HAProxy's tcplog: client, accept date, frontend,
	// backend/server, Tw/Tc/Tt, bytes, state, connections and queues, and
	// no request.
	haproxyTCP = regexp.MustCompile(`^\S+:\d+ \[\d\d/[A-Z][a-z]{2}/\d{4}:\d\d:\d\d:\d\d\.\d+\] \S+ \S+/\S+ -?\d+/-?\d+/\+?-?\d+ \+?\d+ \S\S(\S\S)? \d+/\d+/\d+/\d+/\+?\d+ \d+/\d+$`)
	// haproxyHTTP is the start of HAProxy's httplog: what a line that
	// does not read as one still has.
	haproxyHTTP = regexp.MustCompile(`^\S+:\d+ \[\d\d/[A-Z][a-z]{2}/\d{4}:\d\d:\d\d:\d\d\.\d+\] \S+ \S+/\S+ -?\d+/-?\d+/-?\d+/-?\d+/\+?-?\d+ -?\d+ `)
)

// recognise names the kind of log the sample's lines are, and why it is
// not read, when it is one the reader does not read; or returns "". More
// than half of the lines must look so; a W3C extended log needs its
// header (#Fields:, #Software: …), as entries alone could be any
// program's log.
func recognise(s *sample) *UnsupportedError {
	lines := s.lines
	if len(lines) == 0 {
		return nil
	}
	var entries, nginx, apache, tcp, http int
	for _, l := range lines {
		if n := syslogHeaderLen(l); n > 0 && (haproxyTCP.Match(l[n:]) || haproxyHTTP.Match(l[n:])) {
			l = l[n:]
		}
		switch {
		case w3cEntry.Match(l):
			entries++
		case nginxError.Match(l):
			nginx++
		case apacheError.Match(l):
			apache++
		case haproxyTCP.Match(l):
			tcp++
		case haproxyHTTP.Match(l):
			http++
		}
	}
	most := func(n int) bool { return n*2 > len(lines) }
	switch {
	case s.comments > 0 && most(entries) && s.fields == "":
		return &UnsupportedError{"a W3C extended log" + iisNote(s), "no #Fields: directive comes before its entries, so their fields are not known"}
	case s.comments > 0 && most(entries):
		if _, err := compileW3C(s.fields, ' '); err != nil {
			return &UnsupportedError{"a W3C extended log" + iisNote(s), "its #Fields: directive names no c-ip (the client), or no date and time"}
		}
		// Its fields are known: the entries that do not fit them are
		// said by detection.
	case most(tcp):
		return &UnsupportedError{"an HAProxy tcplog", "no request line (log the frontend with option httplog)"}
	case most(http):
		return &UnsupportedError{"an HAProxy log in a log-format of its own", "give HAProxy's default option httplog, or the format as --log-format"}
	case most(nginx):
		return &UnsupportedError{"an nginx error log", "not an access log"}
	case most(apache):
		return &UnsupportedError{"an Apache error log", "not an access log"}
	}
	return nil
}

func iisNote(s *sample) string {
	if bytes.Contains([]byte(s.software), []byte("Internet Information Services")) {
		return " (IIS)"
	}
	return ""
}
