package render

import (
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lohisoft/lohibot-audit/internal/nouns"
	"github.com/lohisoft/lohibot-audit/parse"
)

// visible returns s with everything that could hide or rearrange text made
// visible, as parse.EscapeControl does for every output: controls, bidi
// and other invisible format characters, and invalid UTF-8. HTML escaping
// is html/template's job.
func visible(s string) string { return parse.EscapeControl(s) }

// cut returns visible(s), cut after about n characters with the length of
// what was left out said.
func cut(s string, n int) string {
	if len(s) > 4*n+64 {
		// Do not make a huge string visible only to cut it.
		rest := len(s) - 4*n
		s = s[:4*n]
		v := visible(s)
		if utf8.RuneCountInString(v) > n {
			v = string([]rune(v)[:n])
		}
		return v + "… (" + num(int64(rest)) + "+ more bytes)"
	}
	v := visible(s)
	if utf8.RuneCountInString(v) <= n {
		return v
	}
	r := []rune(v)
	return string(r[:n]) + "… (" + num(int64(len(r)-n)) + " more)"
}

// short returns visible(s) cut to n characters with "…" when longer.
func short(s string, n int) string {
	v := cut(s, n)
	if r := []rune(v); len(r) > n {
		return string(r[:n]) + "…"
	}
	return v
}

// num formats n with thousands separators: 1,234,567.
func num(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	if len(s) <= 3 {
		if neg {
			return "-" + s
		}
		return s
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	first := len(s) % 3
	if first == 0 {
		first = 3
	}
	b.WriteString(s[:first])
	for i := first; i < len(s); i += 3 {
		b.WriteByte(',')
		b.WriteString(s[i : i+3])
	}
	return b.String()
}

// plural returns "1 page" or "2 pages", n with thousands separators.
func plural(n int64, one, many string) string { return num(n) + " " + nouns.Of(n, one, many) }

// dur formats d for people: "7s", "3m 35s", "24h", "28h 1m", "2d 4h",
// "450ms".
func dur(d time.Duration) string {
	if d < 0 {
		return "-" + dur(-d)
	}
	switch {
	case d == 0:
		return "0s"
	case d < time.Second:
		return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
	case d < time.Minute:
		s := d.Seconds()
		if d%time.Second == 0 {
			return strconv.FormatInt(int64(s), 10) + "s"
		}
		return strconv.FormatFloat(s, 'f', 1, 64) + "s"
	}
	d = d.Round(time.Second)
	days := int64(d / (24 * time.Hour))
	h := int64(d/time.Hour) % 24
	m := int64(d/time.Minute) % 60
	s := int64(d/time.Second) % 60
	var parts []string
	add := func(v int64, unit string) {
		if v != 0 {
			parts = append(parts, strconv.FormatInt(v, 10)+unit)
		}
	}
	switch {
	case days >= 2:
		add(days, "d")
		add(h, "h")
	case days > 0:
		add(24*days+h, "h")
		add(m, "m")
	case h > 0:
		add(h, "h")
		add(m, "m")
	default:
		add(m, "m")
		add(s, "s")
	}
	return strings.Join(parts, " ")
}

// stamp formats t in UTC as "2006-01-02 15:04:05", with milliseconds when
// it has them; the zero time is "".
func stamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	t = t.UTC()
	if t.Nanosecond()/1e6 != 0 {
		return t.Format("2006-01-02 15:04:05.000")
	}
	return t.Format("2006-01-02 15:04:05")
}

// clock formats t in UTC as "15:04:05", with milliseconds when it has them.
func clock(t time.Time) string {
	t = t.UTC()
	if t.Nanosecond()/1e6 != 0 {
		return t.Format("15:04:05.000")
	}
	return t.Format("15:04:05")
}
