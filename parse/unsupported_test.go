package parse

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func readServerLog(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "servers", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func readTestLog(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "logs", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// TestDetectUnsupported checks that auto-detection names the logs it
// recognises but does not read, and only those: an access log is never
// taken for one, nor is a program's log of dated lines without a W3C
// header.
func TestDetectUnsupported(t *testing.T) {
	for _, tc := range []struct {
		name, sample, kind string
	}{
		{"iis without #Fields", "#Software: Microsoft Internet Information Services 10.0\n#Version: 1.0\n2026-12-01 06:25:01 203.0.113.10 GET / 200\n", "a W3C extended log (IIS): no #Fields: directive comes before its entries, so their fields are not known"},
		{"w3c without c-ip", "#Version: 1.0\n#Fields: date time s-ip cs-method cs-uri-stem sc-status\n2026-12-01 06:25:01 203.0.113.10 GET / 200\n", "a W3C extended log: its #Fields: directive names no c-ip (the client), or no date and time"},
		{"haproxy tcplog", string(readServerLog(t, "haproxy_tcplog.log")), "an HAProxy tcplog: no request line (log the frontend with option httplog)"},
		{"nginx error log", string(readTestLog(t, "nginx_error.log")), "an nginx error log: not an access log"},
		{"apache error log", string(readTestLog(t, "apache_error.log")), "an Apache error log: not an access log"},
		{"dated program log", "2026-12-01 06:25:01 INFO started\n2026-12-01 06:25:02 INFO ready\n", ""},
		{"garbage", "hello\nworld\n", ""},
		{"one error line among garbage", "2026/12/01 06:25:01 [error] 1#1: x\nhello\nworld\n", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Detect([]byte(tc.sample))
			if !errors.Is(err, ErrUnknownFormat) {
				t.Fatalf("error %v, want one wrapping ErrUnknownFormat", err)
			}
			var ue *UnsupportedError
			switch {
			case tc.kind == "" && errors.As(err, &ue):
				t.Errorf("taken for %s: %v", ue.Kind, err)
			case tc.kind == "":
			case !errors.As(err, &ue) || ue.Looks() != tc.kind:
				t.Errorf("error %v, want one naming %q", err, tc.kind)
			default:
				want := "cannot detect the log format: it looks like " + tc.kind
				if err.Error() != want {
					t.Errorf("error %q, want %q", err, want)
				}
			}
		})
	}
	// An access log stays an access log, with W3C-like comment lines in it.
	f, err := Detect([]byte("#Fields: nothing\n" + string(readTestLog(t, "combined.log"))))
	if err != nil || f.Name() != "combined" {
		t.Errorf("combined log after a #Fields line: %v, %v; want combined", f, err)
	}
}

// TestReaderGuess checks what a reader given a format says of the first
// lines when they do not match it: the format auto-detection reads them
// as, the kind of log it recognises, or why nothing fits; and nothing
// when they match or no format was given.
func TestReaderGuess(t *testing.T) {
	// The test log ends with a combined line: the others are vhost lines.
	lines := strings.SplitAfter(string(readTestLog(t, "vhost_combined.log")), "\n")
	vhost := strings.Join(lines[:7], "")
	for _, tc := range []struct {
		name    string
		format  *Format
		input   string
		want    string // the guessed format's name, or a part of Err
		fit     int
		noGuess bool
	}{
		{name: "vhost read as combined", format: Combined, input: vhost, want: "vhost_combined"},
		{name: "json read as combined", format: Combined, input: string(readTestLog(t, "nginx_json.log")), want: "json"},
		{name: "iis read as combined", format: Combined, input: string(readTestLog(t, "iis_w3c.log")), want: "w3c"},
		{name: "tcplog read as combined", format: Combined, input: string(readServerLog(t, "haproxy_tcplog.log")), want: "it looks like an HAProxy tcplog"},
		{name: "garbage read as combined", format: Combined, input: "hello\nworld\n", want: "none of the first 2 lines matches"},
		{name: "one bad line of three", format: Combined, fit: 2, want: "combined",
			input: strings.Join(strings.SplitN(string(readTestLog(t, "combined.log")), "\n", 3)[:2], "\n") + "\nhello\n"},
		{name: "matching format", format: VhostCombined, input: vhost, noGuess: true},
		{name: "no format given", input: vhost, noGuess: true},
		{name: "empty input", format: Combined, input: "", noGuess: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(tc.input), Options{Claims: testClaims, Name: "x.log", Format: tc.format, KeepAll: true})
			for r.Scan() {
			}
			if err := r.Err(); err != nil {
				t.Fatal(err)
			}
			g := r.Guess()
			switch {
			case tc.noGuess:
				if g != nil {
					t.Errorf("guess %+v, want none", g)
				}
				return
			case g == nil:
				t.Fatal("no guess")
			case g.Fit != tc.fit || g.Lines == 0:
				t.Errorf("%d of %d lines fit, want %d", g.Fit, g.Lines, tc.fit)
			}
			switch {
			case g.Format != nil:
				if g.Format.Name() != tc.want || g.Err != nil {
					t.Errorf("guessed %s (%v), want %s", g.Format.Name(), g.Err, tc.want)
				}
			case g.Err == nil || !errors.Is(g.Err, ErrUnknownFormat) || !strings.Contains(g.Err.Error(), tc.want):
				t.Errorf("guess error %v, want one saying %q", g.Err, tc.want)
			}
		})
	}
}
