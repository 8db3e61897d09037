package parse

import (
	"strings"
	"unicode/utf8"
)

// EscapeControl returns s with everything a terminal could act on made
// visible: ASCII control characters, DEL, C1 controls and invalid UTF-8
// become \xHH (or \u00HH for C1), and a backslash stays as it is. Text from
// logs, DNS or robots.txt goes through it before it is printed.
func EscapeControl(s string) string { return EscapeFunc(s, IsTerminalUnsafe) }

// EscapeFunc returns s with the ASCII control characters and DEL written
// as \xHH, each byte of invalid UTF-8 as \xHH, and the runes beyond ASCII
// for which escape is true as \uHHHH; a backslash stays as it is. It is
// EscapeControl with another choice of the runes beyond ASCII to show.
func EscapeFunc(s string, escape func(rune) bool) string {
	clean := true
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c >= 0x80 {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	const hex = "0123456789abcdef"
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		c := s[i]
		if c < 0x80 {
			if c < 0x20 || c == 0x7f {
				b.WriteString(`\x`)
				b.WriteByte(hex[c>>4])
				b.WriteByte(hex[c&15])
			} else {
				b.WriteByte(c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			b.WriteString(`\x`)
			b.WriteByte(hex[c>>4])
			b.WriteByte(hex[c&15])
		case escape(r):
			b.WriteString(`\u`)
			for shift := 12; shift >= 0; shift -= 4 {
				b.WriteByte(hex[(r>>uint(shift))&15])
			}
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// IsTerminalUnsafe reports whether a terminal could act on r beyond the
// ASCII controls: DEL, the C1 controls, the line and paragraph separators,
// and the bidi overrides and isolates that reorder what is shown.
func IsTerminalUnsafe(r rune) bool {
	return r == 0x7f || r >= 0x80 && r < 0xa0 || r == 0x2028 || r == 0x2029 ||
		r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}
