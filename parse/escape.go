package parse

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// EscapeControl returns s with everything a terminal could act on, and
// everything a reader would not see, made visible: ASCII control
// characters, DEL and each byte of invalid UTF-8 become \xHH, the runes
// IsTerminalUnsafe names \uHHHH (\UHHHHHHHH beyond U+FFFF); a backslash
// stays as it is. Text from logs, DNS or robots.txt goes through it before
// it is printed, in every format meant for people.
func EscapeControl(s string) string { return EscapeFunc(s, IsTerminalUnsafe) }

// EscapeFunc returns s with the ASCII control characters and DEL written
// as \xHH, each byte of invalid UTF-8 as \xHH, and the runes beyond ASCII
// for which escape is true as \uHHHH (\UHHHHHHHH beyond U+FFFF); a
// backslash stays as it is. It is EscapeControl with another choice of the
// runes beyond ASCII to show.
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
			top := 12
			if r > 0xffff {
				b.WriteString(`\U`)
				top = 28
			} else {
				b.WriteString(`\u`)
			}
			for shift := top; shift >= 0; shift -= 4 {
				b.WriteByte(hex[(r>>uint(shift))&15])
			}
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// IsTerminalUnsafe reports whether r, beyond the ASCII controls, is a
// rune a terminal could act on or a reader would not see: DEL, the C1
// controls, the line and paragraph separators, and every invisible format
// character — the bidi marks, embeddings, overrides and isolates (U+061C,
// U+200E, U+200F, U+202A–U+202E, U+2066–U+2069), zero-width characters,
// the byte order mark, soft hyphen and tag characters (Unicode category
// Cf), the other default-ignorable code points (Hangul fillers, U+2065,
// …) and the variation selectors. It is the one rule for every output
// meant for a terminal: text, tables, Markdown, CSV, and JSON and YAML
// shown on a terminal.
func IsTerminalUnsafe(r rune) bool {
	switch {
	case r < 0x80:
		return r == 0x7f
	case r < 0xa0, r == 0x2028, r == 0x2029:
		return true
	case r < 0xad:
		return false
	}
	return unicode.In(r, unicode.Cf, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector)
}
