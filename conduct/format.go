package conduct

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// quote quotes a string from a log or a robots.txt for a detail:
// Go syntax, so that it is one printable line, cut at maxQuote
// bytes.
func quote(s string) string {
	if len(s) > maxQuote {
		n := maxQuote
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n] + "…"
	}
	return strconv.Quote(s)
}

// fmtTime formats a time for a detail: RFC 3339 in UTC, with a
// fraction only when there is one.
func fmtTime(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// fmtDur formats a duration for people: "0.4s", "12s", "2m30s",
// "25h3m"; below a minute to the millisecond, above it to the second.
func fmtDur(d time.Duration) string {
	sign := ""
	if d < 0 {
		sign = "-"
		if d == -1<<63 {
			d++
		}
		d = -d
	}
	if d < time.Minute {
		s := strconv.FormatFloat(d.Round(time.Millisecond).Seconds(), 'f', 3, 64)
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
		return sign + s + "s"
	}
	d = d.Round(time.Second)
	h, m, s := d/time.Hour, (d%time.Hour)/time.Minute, (d%time.Minute)/time.Second
	var b strings.Builder
	b.WriteString(sign)
	if h > 0 {
		fmt.Fprintf(&b, "%dh", h)
	}
	if m > 0 {
		fmt.Fprintf(&b, "%dm", m)
	}
	if s > 0 {
		fmt.Fprintf(&b, "%ds", s)
	}
	return b.String()
}
