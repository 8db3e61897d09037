package parse

import (
	"bytes"
	"regexp"
)

// UnsupportedError is an input that auto-detection recognises as a kind
// of log the reader does not read: a W3C extended log (IIS's), or a web
// server's error log. It wraps ErrUnknownFormat.
type UnsupportedError struct {
	// Kind names the log, as in "a W3C extended log (IIS)".
	Kind string
}

func (e *UnsupportedError) Error() string {
	return ErrUnknownFormat.Error() + ": it looks like " + e.Kind + "; not supported: give an nginx/Apache/JSON access log"
}

func (e *UnsupportedError) Unwrap() error { return ErrUnknownFormat }

// The lines of the logs recognised, looked at only once detection has
// failed (never per line of a log that is read).
var (
	// w3cDirective is a W3C extended log's header line.
	w3cDirective = regexp.MustCompile(`^#(Software|Version|Date|Fields|Start-Date|End-Date|Remark):`)
	// w3cEntry is a W3C extended log's entry: the date and time first.
	w3cEntry = regexp.MustCompile(`^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d `)
	// nginxError is a line of nginx's error_log.
	nginxError = regexp.MustCompile(`^\d{4}/\d\d/\d\d \d\d:\d\d:\d\d \[(debug|info|notice|warn|error|crit|alert|emerg)\] `)
	// apacheError is a line of Apache's ErrorLog (2.2 and 2.4).
	apacheError = regexp.MustCompile(`^\[[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d(\.\d+)? \d{4}\] \[`)
)

// recognise names the kind of log lines are when it is one the reader
// does not read, or returns "". More than half of the lines must look so,
// and a W3C extended log needs its header (#Fields:, #Software: …), as
// entries alone could be any program's log.
func recognise(lines [][]byte) string {
	if len(lines) == 0 {
		return ""
	}
	var directives, entries, nginx, apache int
	iis := false
	for _, l := range lines {
		switch {
		case w3cDirective.Match(l):
			directives++
			if bytes.HasPrefix(l, []byte("#Software:")) && bytes.Contains(l, []byte("Internet Information Services")) {
				iis = true
			}
		case w3cEntry.Match(l):
			entries++
		case nginxError.Match(l):
			nginx++
		case apacheError.Match(l):
			apache++
		}
	}
	most := func(n int) bool { return n*2 > len(lines) }
	switch {
	case directives > 0 && most(directives+entries):
		if iis {
			return "a W3C extended log (IIS)"
		}
		return "a W3C extended log"
	case most(nginx):
		return "an nginx error log"
	case most(apache):
		return "an Apache error log"
	}
	return ""
}
