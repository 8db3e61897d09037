package parse

import (
	"bytes"
	"fmt"
	"strings"
)

// sample is what auto-detection looks at: the first lines of an input
// that are neither blank nor comments, and the comments before and
// among them (a W3C log's #Fields: directive).
type sample struct {
	lines [][]byte
	// fields is the first #Fields: directive's list, and comments
	// counts the '#' lines seen; lineFields is the list in force at each
	// line (a W3C log's fields change at each #Fields:).
	fields     string
	lineFields []string
	comments   int
	software   string // a W3C #Software: directive
}

// isComment reports whether line is a comment: '#' first, after any
// spaces (AWStats' and W3C logs' headers). No log format writes a request
// so: a line that starts with '#' and does not match the format is
// counted as a comment, not as malformed.
func isComment(line []byte) bool {
	for _, c := range line {
		if c != ' ' && c != '\t' {
			return c == '#'
		}
	}
	return false
}

// sampleLines returns the first lines of sample that are neither blank
// nor comments (at most detectLines), without their line ends.
func sampleLines(b []byte) [][]byte { return readSample(b).lines }

func readSample(b []byte) *sample {
	s := &sample{}
	cur := ""
	for len(b) > 0 && len(s.lines) < detectLines {
		var line []byte
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			line, b = b, nil
		}
		line = bytes.TrimRight(line, "\r")
		switch {
		case isBlank(line):
		case isComment(line):
			s.comments++
			if f, ok := w3cFields(line); ok {
				if s.fields == "" && len(s.lines) == 0 {
					s.fields = f
				}
				cur = f
			}
			if v, ok := bytes.CutPrefix(line, []byte("#Software:")); ok && s.software == "" {
				s.software = strings.TrimSpace(string(v))
			}
		default:
			s.lines = append(s.lines, line)
			s.lineFields = append(s.lineFields, cur)
		}
	}
	return s
}

// syslogCandidates are autoCandidates after a syslog header.
var syslogCandidates = withHeaders(headerSyslog)

// containerCandidates are autoCandidates after a container runtime's
// prefix.
var containerCandidates = withHeaders(headerContainer)

func withHeaders(h headerKind) []*Format {
	out := make([]*Format, len(autoCandidates))
	for i, f := range autoCandidates {
		out[i] = withHeader(f, h)
	}
	return out
}

// Detect returns the format that fits more than half of the first lines
// of sample that are neither blank nor comments (at most 50): a W3C
// extended log by its #Fields: directive; caddy, json, traefik, haproxy,
// alb, istio, envoy, vhost_combined, vhost_common, nginx_main, combined
// or common, each also after a syslog header ("syslog+combined"); or one
// of the presets followed by extra fields ("combined+sec", see
// buildExtended). A line fits a format when it matches it with an IP
// address literal as the client: a host name, an address with a port
// where none is written, or any other word there does not count, so that
// no other field (a virtual host, a syslog host) is ever taken for the
// client. A tie goes to the earlier format in that list. Without such a
// format the error wraps ErrUnknownFormat (an *UnsupportedError names a
// kind of log that is not read).
func Detect(b []byte) (*Format, error) {
	s := readSample(b)
	if len(s.lines) == 0 {
		return nil, fmt.Errorf("%w: no lines to look at", ErrUnknownFormat)
	}
	return detectFormat(s)
}

// A Candidate is what one format makes of the first lines of an input:
// how many fit, and why the first that does not fit does not.
type Candidate struct {
	Format *Format
	Fit    int
	// FirstMiss is the index in the sample of the first line that does
	// not fit, or -1, and Reason why it does not.
	FirstMiss int
	Reason    string
	// NotRequests counts the lines that are no requests in this format
	// (Caddy's other loggers): they count neither way.
	NotRequests int
}

// candidates tries every format auto-detection knows on the sample, in
// the order it prefers them.
func candidates(s *sample) []Candidate {
	var out []Candidate
	try := func(f *Format) {
		lp := newLineParser(f, nil, nil, "", false)
		lp.ipOnly, lp.strictQuotes = true, true
		var rec Record
		c := Candidate{Format: f, FirstMiss: -1}
		for i, l := range s.lines {
			if _, reason := lp.parse(l, &rec); reason == "" {
				c.Fit++
			} else if lp.notRequest {
				c.NotRequests++
			} else if c.FirstMiss < 0 {
				c.FirstMiss, c.Reason = i, reason
			}
		}
		out = append(out, c)
	}
	if s.fields != "" {
		if f, err := compileW3C(s.fields, w3cSep(s.lines)); err == nil {
			out = append(out, tryW3C(s, f))
		}
	}
	for i, f := range autoCandidates {
		try(f)
		try(syslogCandidates[i])
		try(containerCandidates[i])
	}
	for _, f := range extendedCandidates(s.lines) {
		try(f)
	}
	return out
}

// extendedCandidates returns the presets followed by the extra fields
// the lines have after them (see buildExtended): for each preset, plain
// and after a syslog header, the fields of the lines that match it up to
// an extra text, merged over the lines that have as many.
func extendedCandidates(lines [][]byte) []*Format {
	var out []*Format
	seen := map[string]bool{}
	for _, base := range extraBases {
		for _, b := range [3]*Format{base, withSyslog(base), withHeader(base, headerContainer)} {
			tf := withTail(b)
			if tf == nil {
				continue
			}
			lp := newLineParser(tf, nil, nil, "", false)
			lp.ipOnly, lp.strictQuotes = true, true
			last := len(tf.items) - 1
			var rec Record
			var groups [][]extra
			var counts []int
			for _, l := range lines {
				if _, reason := lp.parse(l, &rec); reason != "" {
					continue
				}
				sp := lp.spans[last]
				ex := inferExtras(l[p0(lp, sp.s):p0(lp, sp.e)])
				if ex == nil {
					continue
				}
				merged := false
				for g := range groups {
					if m, ok := mergeExtras(groups[g], ex); ok {
						groups[g], counts[g], merged = m, counts[g]+1, true
						break
					}
				}
				if !merged && len(groups) < 4 {
					groups, counts = append(groups, ex), append(counts, 1)
				}
			}
			best := -1
			for g := range groups {
				if best < 0 || counts[g] > counts[best] {
					best = g
				}
			}
			if best < 0 {
				continue
			}
			f, err := buildExtended(b, groups[best])
			if err != nil || seen[f.name] {
				continue
			}
			seen[f.name] = true
			out = append(out, f)
			if counts[best]*2 > len(lines) {
				// A less specific preset would only read this one's
				// fields as extra ones (common+str+str+…).
				return out
			}
		}
	}
	return out
}

// p0 turns a span offset of the message (after a syslog header) into an
// offset of the line.
func p0(lp *lineParser, off int32) int { return lp.off + int(off) }

// w3cSep tells the separator of a W3C log's entries from the first one:
// a tab (CloudFront) or a space (IIS).
func w3cSep(lines [][]byte) byte {
	if len(lines) > 0 && bytes.IndexByte(lines[0], '\t') >= 0 {
		return '\t'
	}
	return ' '
}

func detectFormat(s *sample) (*Format, error) {
	cands := candidates(s)
	var best *Candidate
	for i := range cands {
		if c := &cands[i]; c.Fit > 0 && (best == nil || c.Fit > best.Fit) {
			best = c
		}
	}
	n := len(s.lines)
	if best != nil {
		n -= best.NotRequests
	}
	if best == nil {
		if u := recognise(s); u != nil {
			return nil, u
		}
		return nil, fmt.Errorf("%w: none of the first %d lines matches %s (also after a syslog header or a container runtime's prefix, or with extra fields at the end) with an IP address as the client; the first: %q",
			ErrUnknownFormat, n, formatList(), EscapeControl(clip(s.lines[0])))
	}
	if best.Fit*2 <= n {
		if u := recognise(s); u != nil {
			return nil, u
		}
		return nil, fmt.Errorf("%w: only %d of the first %d lines fit %s, the closest format; the first that does not (%s): %q",
			ErrUnknownFormat, best.Fit, n, best.Format.Name(), EscapeControl(best.Reason), EscapeControl(clip(s.lines[best.FirstMiss])))
	}
	return best.Format, nil
}

// formatList names the formats auto-detection tries.
func formatList() string {
	var b bytes.Buffer
	b.WriteString("w3c (by its #Fields: line)")
	for _, f := range autoCandidates {
		b.WriteString(", ")
		b.WriteString(f.name)
	}
	return b.String()
}

// withBestHeader returns the given format f read after the header (a
// syslog header, a container runtime's prefix) that more of lines fit
// than without one: more with an IP address as the client, or as many and
// more with any client; f itself when none does, or when f names a header
// already.
func withBestHeader(f *Format, lines [][]byte) *Format {
	if f.header != headerNone || len(lines) == 0 {
		return f
	}
	best := f
	bestIP, bestAny := fitCount(f, lines)
	for _, h := range headers {
		hf := withHeader(f, h)
		ip, any := fitCount(hf, lines)
		if ip > bestIP || ip == bestIP && any > bestAny {
			best, bestIP, bestAny = hf, ip, any
		}
	}
	return best
}

// fitCount counts the lines that match f with an IP address as the client,
// and with any client.
func fitCount(f *Format, lines [][]byte) (ip, any int) {
	var rec Record
	strict := newLineParser(f, nil, nil, "", false)
	strict.ipOnly = true
	loose := newLineParser(f, nil, nil, "", false)
	for _, l := range lines {
		if _, reason := strict.parse(l, &rec); reason == "" {
			ip++
			any++
		} else if _, reason := loose.parse(l, &rec); reason == "" {
			any++
		}
	}
	return ip, any
}

// tryW3C is what a W3C log's #Fields: directives make of the sample: each
// line is read with the fields in force before it.
func tryW3C(s *sample, first *Format) Candidate {
	c := Candidate{Format: first, FirstMiss: -1}
	parsers := map[string]*lineParser{}
	sep := w3cSep(s.lines)
	var rec Record
	for i, l := range s.lines {
		fields := s.lineFields[i]
		lp, ok := parsers[fields]
		if !ok {
			if f, err := compileW3C(fields, sep); err == nil {
				lp = newLineParser(f, nil, nil, "", false)
				lp.ipOnly, lp.strictQuotes = true, true
			}
			parsers[fields] = lp
		}
		reason := "no #Fields: directive before this line"
		if lp != nil {
			_, reason = lp.parse(l, &rec)
		} else if fields != "" {
			reason = "its #Fields: directive names no c-ip, or no date and time"
		}
		if reason == "" {
			c.Fit++
		} else if c.FirstMiss < 0 {
			c.FirstMiss, c.Reason = i, reason
		}
	}
	return c
}
