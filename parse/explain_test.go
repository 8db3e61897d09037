package parse

import (
	"strings"
	"testing"
	"time"
)

// TestTestFormat checks what format test is built on: each line's fields
// or where it left the format, the candidates auto-detection tried, the
// closest one when none fits enough lines, and a W3C log's fields changing
// at its #Fields: directive.
func TestTestFormat(t *testing.T) {
	t.Run("auto", func(t *testing.T) {
		res, err := TestFormat(strings.NewReader(string(readServerLog(t, "nginx_timed.log"))), nil, TestOptions{Lines: 2, Claims: testClaims, Location: time.UTC})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Detected || res.Format.Name() != "combined+sec+sec" || len(res.Lines) != 2 {
			t.Fatalf("%+v", res)
		}
		l := res.Lines[0]
		if l.Kind != "request" || l.Record == nil || !l.Record.Claimed || len(l.Fields) != 11 {
			t.Fatalf("line 1: %+v", l)
		}
		if f := l.Fields[9]; f.Name != "request time" || f.Text != "0.026" || f.Value != "26ms" {
			t.Errorf("field %+v", f)
		}
		var combined *CandidateTrace
		for i := range res.Candidates {
			if res.Candidates[i].Format.Name() == "combined" {
				combined = &res.Candidates[i]
			}
		}
		if combined == nil || combined.Fit != 0 || combined.FirstMiss != 1 || !strings.Contains(combined.Reason, "unexpected text after the last field at byte 132") {
			t.Errorf("combined: %+v", combined)
		}
	})
	t.Run("given, not fitting", func(t *testing.T) {
		res, err := TestFormat(strings.NewReader(string(readServerLog(t, "nginx_timed.log"))), Common, TestOptions{Lines: 1})
		if err != nil {
			t.Fatal(err)
		}
		l := res.Lines[0]
		if res.Format != Common || res.Detected || l.Kind != "malformed" || !strings.Contains(l.Reason, "bad bytes") || len(l.Fields) != 6 || len(res.Candidates) == 0 {
			t.Fatalf("%+v / %+v", res, l)
		}
	})
	t.Run("none fits enough", func(t *testing.T) {
		in := combinedTestLine + "hello\nworld\n"
		res, err := TestFormat(strings.NewReader(in), nil, TestOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if res.Format != nil || res.DetectErr == nil || res.Closest == nil || res.Closest.Name() != "combined" || res.Lines[0].Kind != "request" || res.Lines[1].Kind != "malformed" {
			t.Fatalf("%+v", res)
		}
	})
	t.Run("w3c fields change", func(t *testing.T) {
		in := "#Fields: date time c-ip cs-method cs-uri-stem sc-status\n2026-12-01 06:25:01 203.0.113.10 GET /a 200\n" +
			"#Fields: date time cs-method c-ip cs-uri-stem sc-status\n2026-12-01 06:25:02 GET 198.51.100.7 /b 404\n\n"
		res, err := TestFormat(strings.NewReader(in), nil, TestOptions{Lines: 10})
		if err != nil {
			t.Fatal(err)
		}
		kinds := ""
		for _, l := range res.Lines {
			kinds += l.Kind + " "
		}
		if kinds != "comment request comment request blank " || res.Lines[3].Record.Client.String() != "198.51.100.7" {
			t.Fatalf("kinds %q, %+v", kinds, res.Lines[3].Record)
		}
	})
}

// FuzzTestFormat: format test on any input, with a format given or not,
// never panics and shows at most the lines asked for.
func FuzzTestFormat(f *testing.F) {
	f.Add(combinedTestLine+"# c\n\nx\n", false)
	f.Add("#Fields: date time c-ip\n2026-12-01 06:25:01 203.0.113.10\n#Fields: c-ip\n1.2.3.4\n", false)
	f.Add(`{"request":{"client_ip":"1.2.3.4"},"ts":1}`+"\n", true)
	f.Fuzz(func(t *testing.T, in string, given bool) {
		var fm *Format
		if given {
			fm = Combined
		}
		res, err := TestFormat(strings.NewReader(in), fm, TestOptions{Lines: 3, Claims: testClaims})
		if err != nil {
			return
		}
		if len(res.Lines) > 3 {
			t.Fatalf("%d lines shown", len(res.Lines))
		}
		for _, l := range res.Lines {
			if (l.Kind == "request") != (l.Record != nil) {
				t.Fatalf("line %d: kind %s, record %v", l.Line, l.Kind, l.Record)
			}
			if l.Record != nil {
				l.Record.Summary()
			}
		}
	})
}
