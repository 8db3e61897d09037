package gha

import "testing"

func TestCommandEscaping(t *testing.T) {
	tests := []struct {
		name       string
		kind, file string
		line       int
		title, msg string
		want       string
	}{
		{name: "plain", kind: "error", file: "robots.txt", line: 3, title: "robots check", msg: "blocked", want: "::error file=robots.txt,line=3,title=robots check::blocked"},
		{name: "no file no line", kind: "notice", title: "t", msg: "m", want: "::notice title=t::m"},
		{name: "line without file is dropped", kind: "error", line: 4, msg: "m", want: "::error::m"},
		{name: "percent and newlines in message", kind: "error", msg: "100%\r\nnext", want: `::error::100%25\x0d\x0anext`},
		{name: "property separators", kind: "error", file: "a,b:c%.txt", line: 1, title: "x:y,z", msg: "a:b,c", want: "::error file=a%2Cb%3Ac%25.txt,line=1,title=x%3Ay%2Cz::a:b,c"},
		{name: "double colon in message", kind: "error", msg: "::set-env name=X::1", want: "::error::::set-env name=X::1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Command(tc.kind, tc.file, tc.line, tc.title, tc.msg); got != tc.want {
				t.Errorf("Command = %q, want %q", got, tc.want)
			}
		})
	}
	// The escapes themselves, before control characters are made visible.
	if got := escapeData("a%b\rc\nd"); got != "a%25b%0Dc%0Ad" {
		t.Errorf("escapeData = %q", got)
	}
	if got := escapeProperty("a:b,c"); got != "a%3Ab%2Cc" {
		t.Errorf("escapeProperty = %q", got)
	}
}
