package audit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot-audit/parse"
)

// textInput is an input of the given text.
func textInput(name, text string) Input {
	return Input{Name: name, Site: "s.example", Open: func(context.Context) (io.ReadCloser, int64, error) {
		return io.NopCloser(strings.NewReader(text)), int64(len(text)), nil
	}}
}

// combinedLine and vhostLine are request lines of the two formats.
func combinedLine(i int) string {
	return fmt.Sprintf(`203.0.113.%d - - [01/Dec/2026:06:25:01 +0000] "GET /%d HTTP/1.1" 200 5 "-" "Mozilla/5.0"`+"\n", i%250+1, i)
}

func vhostLine(i int) string { return "www.example.org:443 " + combinedLine(i) }

func repeat(n int, line func(int) string) string {
	var b strings.Builder
	for i := range n {
		b.WriteString(line(i))
	}
	return b.String()
}

// TestRunWrongLogFormat checks the warning that a given --log-format is
// likely wrong: said when every non-blank line of an input, or 90 % of
// at least 10, does not match it, with what auto-detection reads the
// lines as; never for a detected format, nor for a few bad lines.
func TestRunWrongLogFormat(t *testing.T) {
	iis := "#Software: Microsoft Internet Information Services 10.0\n#Fields: date time c-ip cs-method cs-uri-stem sc-status\n2026-12-01 06:25:01 203.0.113.10 GET / 200\n"
	tcplog := "Dec  1 06:25:01 lb1 haproxy[14389]: 203.0.113.10:33317 [01/Dec/2026:06:25:01.655] tcp-in smtp/srv1 0/0/5007 212 -- 0/0/0/0/3 0/0\nDec  1 06:25:02 lb1 haproxy[14389]: 198.51.100.7:51234 [01/Dec/2026:06:25:02.101] tcp-in smtp/srv2 0/1/30012 2048 CD 1/1/1/1/0 0/0\nDec  1 06:25:03 lb1 haproxy[14389]: 192.0.2.44:40001 [01/Dec/2026:06:25:03.000] tcp-in smtp/srv1 0/0/12 0 -- 1/1/0/0/0 0/0\n"
	for _, tc := range []struct {
		name   string
		format *parse.Format
		text   string
		want   string // "" for no such warning
	}{
		{name: "vhost read as combined", format: parse.Combined, text: repeat(25, vhostLine),
			want: "x.log: 25 of 25 lines do not match --log-format combined; auto-detection reads them as vhost_combined (try --log-format auto)"},
		{name: "few lines, all bad", format: parse.Combined, text: "\n" + repeat(3, vhostLine) + "\n",
			want: "x.log: 3 of 3 lines do not match --log-format combined; auto-detection reads them as vhost_combined (try --log-format auto)"},
		{name: "9 of 10 bad", format: parse.Combined, text: combinedLine(0) + repeat(9, vhostLine),
			want: "x.log: 9 of 10 lines do not match --log-format combined; auto-detection reads them as vhost_combined (try --log-format auto)"},
		{name: "8 of 10 bad", format: parse.Combined, text: combinedLine(0) + combinedLine(1) + repeat(8, vhostLine)},
		{name: "8 of 9 bad: under 10 lines, only all of them count", format: parse.Combined, text: combinedLine(0) + repeat(8, vhostLine)},
		{name: "iis read as combined", format: parse.Combined, text: iis,
			want: "x.log: 1 of 1 lines do not match --log-format combined; auto-detection reads them as w3c (try --log-format auto)"},
		{name: "tcplog read as combined", format: parse.Combined, text: tcplog,
			want: "x.log: 3 of 3 lines do not match --log-format combined; it looks like an HAProxy tcplog: no request line (log the frontend with option httplog)"},
		{name: "nothing fits", format: parse.Combined, text: "hello\nworld\n",
			want: "x.log: 2 of 2 lines do not match --log-format combined; auto-detection finds no format that fits them either: give the server's own log_format (nginx) or LogFormat (Apache) as --log-format 'nginx:<log_format>' or 'apache:<LogFormat>'"},
		{name: "format changes after the first lines", format: parse.Combined, text: repeat(50, combinedLine) + repeat(2000, vhostLine),
			want: "x.log: 2000 of 2050 lines do not match --log-format combined; its first lines do, so its format changes further on (see malformed_examples)"},
		{name: "right format", format: parse.VhostCombined, text: repeat(25, vhostLine)},
		{name: "detected format", text: repeat(25, vhostLine)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := Run(context.Background(), Options{Inputs: []Input{textInput("x.log", tc.text)}, Format: tc.format})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, w := range rep.Warnings {
				if strings.Contains(w, "do not match --log-format") {
					got = append(got, w)
				}
			}
			switch {
			case tc.want == "" && len(got) > 0:
				t.Errorf("warned %q", got)
			case tc.want != "" && !slices.Equal(got, []string{tc.want}):
				t.Errorf("warnings %q, want %q", rep.Warnings, tc.want)
			}
		})
	}
}

// TestRunEmptyAndUnsupportedInputs checks what the report says of an
// empty input (a warning, not an error), of one of blank lines, and of a
// log of a kind that is not read (an error naming the kind, with no
// --log-format hint, and the input among the unread).
func TestRunEmptyAndUnsupportedInputs(t *testing.T) {
	tcplog := "Dec  1 06:25:01 lb1 haproxy[14389]: 203.0.113.10:33317 [01/Dec/2026:06:25:01.655] tcp-in smtp/srv1 0/0/5007 212 -- 0/0/0/0/3 0/0\nDec  1 06:25:02 lb1 haproxy[14389]: 198.51.100.7:51234 [01/Dec/2026:06:25:02.101] tcp-in smtp/srv2 0/1/30012 2048 CD 1/1/1/1/0 0/0\nDec  1 06:25:03 lb1 haproxy[14389]: 192.0.2.44:40001 [01/Dec/2026:06:25:03.000] tcp-in smtp/srv1 0/0/12 0 -- 1/1/0/0/0 0/0\n"
	rep, err := Run(context.Background(), Options{Inputs: []Input{
		textInput("empty.log", ""), textInput("blank.log", "\n  \n\t\n"), textInput("iis.log", tcplog), textInput("good.log", combinedLine(1)),
	}})
	var ie *InputError
	if !errors.As(err, &ie) || !slices.Equal(ie.Inputs, []string{"iis.log"}) {
		t.Fatalf("err = %v, want an InputError naming iis.log only", err)
	}
	const iisErr = "iis.log: cannot detect the log format: it looks like an HAProxy tcplog: no request line (log the frontend with option httplog); none of it was read"
	for _, w := range []string{"empty.log is empty", "blank.log holds blank lines only", iisErr} {
		if !slices.Contains(rep.Warnings, w) {
			t.Errorf("warning %q missing from %q", w, rep.Warnings)
		}
	}
	for _, w := range rep.Warnings {
		if strings.HasPrefix(w, "good.log") || strings.Contains(w, "--log-format") {
			t.Errorf("unexpected warning %q", w)
		}
	}
	if len(rep.Inputs) != 4 || rep.Inputs[2].Error != iisErr || rep.Inputs[0].Error != "" {
		t.Errorf("inputs %+v", rep.Inputs)
	}
	if got := rep.Unread(); !slices.Equal(got, []string{"iis.log"}) {
		t.Errorf("Unread() = %q, want iis.log", got)
	}
}

// TestRunMalformedClaimsNamesCrawlers checks that the warning about
// malformed lines carrying a token names the crawlers audited.
func TestRunMalformedClaimsNamesCrawlers(t *testing.T) {
	line := `www.example.org:443 66.249.66.1 - - [01/Dec/2026:06:25:01 +0000] "GET / HTTP/1.1" 200 5 "-" "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html) LohiSoftBot/1.0"` + "\n"
	for _, tc := range []struct {
		name     string
		crawlers []string
		want     string
	}{
		{"default", nil, "x.log: 1 malformed lines carry the LohiSoftBot token"},
		{"one crawler", []string{"googlebot"}, "x.log: 1 malformed lines carry the googlebot token"},
		{"two crawlers", []string{"googlebot", "lohisoftbot"}, "x.log: 1 malformed lines carry the token of googlebot or lohisoftbot"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := Options{Inputs: []Input{textInput("x.log", line)}, Format: parse.Combined, Named: tc.crawlers != nil}
			names := tc.crawlers
			if names == nil {
				names = []string{"lohisoftbot"}
			}
			for _, p := range builtinProfiles(t, names...) {
				o.Subjects = append(o.Subjects, Subject{Profile: p})
			}
			rep, err := Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.ContainsFunc(rep.Warnings, func(w string) bool { return strings.HasPrefix(w, tc.want) }) {
				t.Errorf("warnings %q, want one starting %q", rep.Warnings, tc.want)
			}
		})
	}
}
