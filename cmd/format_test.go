package cmd

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// TestLogsHostileArchive: an xz file whose block asks for a 1.5 GiB
// dictionary (made by xz --lzma2=dict=1MiB, its header then set to
// 1536MiB as xz --lzma2=dict=1536MiB writes it) and a zstd file made with
// zstd --long=31 from a pipe (a 2 GiB window) are refused with exit 3,
// saying why and which --max-dict reads them; the other inputs are read.
func TestLogsHostileArchive(t *testing.T) {
	for _, tc := range []struct{ file, says string }{
		{"dict-1536MiB.log.xz", "xz data needs a dictionary of 1536MiB, more than the 128MiB the decompressor may allocate"},
		{"window-2GiB.log.zst", "zstd data needs a window of 2048MiB, more than the 128MiB"},
	} {
		t.Run(tc.file, func(t *testing.T) {
			code, out, errOut := runInMemory(t, "", "logs", "--offline", "--no-cache", "--format", "json",
				"../testdata/hostile/"+tc.file, "../testdata/sample/access.log")
			if code != 3 {
				t.Fatalf("exit %d, want 3: %s", code, errOut)
			}
			if !strings.Contains(errOut, tc.says) || !strings.Contains(out, tc.says) {
				t.Errorf("stderr %q / report do not say %q", errOut, tc.says)
			}
			if !strings.Contains(errOut, "--max-dict") {
				t.Errorf("stderr %q does not name --max-dict", errOut)
			}
			if !strings.Contains(out, `"file": "../testdata/sample/access.log"`) {
				t.Errorf("the other input is not in the report:\n%s", out)
			}
		})
	}
}

func TestReadFlagsChecked(t *testing.T) {
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"--max-dict", "1KiB"}, "bad --max-dict"},
		{[]string{"--max-dict", "lots"}, "bad --max-dict"},
		{[]string{"--timezone", "Mars/Olympus"}, `unknown --timezone "Mars/Olympus"`},
	} {
		args := append([]string{"logs", "--offline", "--no-cache"}, tc.args...)
		code, _, errOut := runInMemory(t, "", append(args, "../testdata/sample/access.log")...)
		if code != 2 || !strings.Contains(errOut, tc.says) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errOut, tc.says)
		}
	}
}

// TestFormatTest runs format test as a user would: auto on a log with
// extra fields, a given format that does not fit, a strftime format read
// in a --timezone, stdin with control characters, and bad input.
func TestFormatTest(t *testing.T) {
	timed := "../testdata/servers/nginx_timed.log"
	for _, tc := range []struct {
		name  string
		stdin string
		args  []string
		code  int
		want  []string
		never []string
	}{
		{name: "auto", args: []string{timed}, want: []string{
			"candidates (the first 3 lines that are neither blank nor comments):\n",
			"  combined                       0 of 3 fit; line 1 does not: unexpected text after the last field at byte 132\n",
			"* combined+sec+sec               3 of 3 fit\n",
			"format: combined+sec+sec (detected)\n",
			"line 1: fits\n  client address     203.0.113.10\n",
			"  request time       0.026  → 26ms\n  ignored            0.025\n",
			"  = client 203.0.113.10, site -, time 2026-12-01T05:25:01Z (from 2026-12-01T05:25:00.974Z to 2026-12-01T05:25:01Z), GET /index.html, status 200, user agent \"LohiSoftBot/1.0 (+https://lohisoft.com/bot)\", a claimed hit\n",
		}},
		{name: "a format that does not fit", args: []string{"--log-format", "combined", "--lines", "1", timed}, want: []string{
			"format: combined\nauto-detection reads 3 of these 3 lines as combined+sec+sec (try --log-format auto)\n",
			"line 1: does not fit: unexpected text after the last field at byte 132\n",
			"  read before it left the format:\n  client address     203.0.113.10\n",
		}, never: []string{"line 2"}},
		{name: "strftime in a zone", args: []string{"--timezone", "Asia/Tokyo", "--log-format",
			`apache:%h %l %u %{%Y-%m-%d %H:%M:%S}t.%{usec_frac}t "%r" %>s %b "%{Referer}i" "%{User-Agent}i"`, "../testdata/servers/apache_strftime.log"}, want: []string{
			"times without a UTC offset are read in Asia/Tokyo (--timezone)\n",
			"  time               2026-12-01 06:25:01  → 2026-11-30T21:25:01Z (+09:00 JST)\n  microseconds       123456\n",
			"time 2026-11-30T21:25:01.123456Z",
		}},
		{name: "stdin, escaped", stdin: "\x1b[31mhello\n\n# a comment\n", args: []string{"--log-format", "combined", "-"}, want: []string{
			"line 1: does not fit: no \" \" after the client address field\n  \\x1b[31mhello\n",
			"line 2: blank\n", "line 3: comment: # a comment\n",
		}, never: []string{"\x1b"}},
		{name: "a bad format", args: []string{"--log-format", "apache:%h %{%Q}t", timed}, code: 2},
		{name: "no such file", args: []string{"/nonexistent/access.log"}, code: 2},
		{name: "a hostile archive", args: []string{"../testdata/hostile/dict-1536MiB.log.xz"}, code: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runInMemory(t, tc.stdin, append([]string{"format", "test"}, tc.args...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d: %s\n%s", code, tc.code, errOut, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tc.never {
				if strings.Contains(out, w) {
					t.Errorf("output holds %q:\n%s", w, out)
				}
			}
		})
	}
}

// TestLogsTimeZone: a log whose times carry no UTC offset (HAProxy's
// accept date) is read in --timezone, or the machine's zone, said once in
// the report however many inputs need it, and per input.
func TestLogsTimeZone(t *testing.T) {
	log := "../testdata/servers/haproxy_httplog.log"
	code, out, errOut := runInMemory(t, "", "logs", "--offline", "--no-cache", "--format", "json", "--timezone", "Europe/Berlin", log, log, "../testdata/sample/access.log")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep struct {
		Warnings []string
		Inputs   []struct {
			File      string    `json:"file"`
			TimeZone  string    `json:"time_zone"`
			FirstTime time.Time `json:"first_time"`
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	const said = "times logged without a UTC offset are read in Europe/Berlin; give --timezone if the server logged in another zone"
	n := 0
	for _, w := range rep.Warnings {
		if w == said {
			n++
		}
	}
	if n != 1 || strings.Count(errOut, said) != 1 {
		t.Errorf("said %d times in the report, %d on stderr; want once: %q", n, strings.Count(errOut, said), rep.Warnings)
	}
	if len(rep.Inputs) != 3 || rep.Inputs[0].TimeZone != "Europe/Berlin" || rep.Inputs[2].TimeZone != "" {
		t.Fatalf("inputs %+v", rep.Inputs)
	}
	// 06:25:01.655 in Berlin in December is 05:25:01.655 UTC.
	if want := time.Date(2026, 12, 1, 5, 25, 1, 655000000, time.UTC); !rep.Inputs[0].FirstTime.Equal(want) {
		t.Errorf("first time %v, want %v", rep.Inputs[0].FirstTime, want)
	}
	// Without --timezone, the machine's zone (TZ here), named as such.
	var outb, errb strings.Builder
	env := &Env{Stdin: strings.NewReader(""), Stdout: &outb, Stderr: &errb, Now: func() time.Time { return fixedNow },
		Getenv: func(k string) string {
			switch k {
			case "TZ":
				return "America/New_York"
			case "HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME":
				return t.TempDir()
			}
			return ""
		}}
	Run(context.Background(), env, []string{"logs", "--offline", "--no-cache", "--format", "json", log})
	if !strings.Contains(errb.String(), "read in America/New_York, this machine's zone") {
		t.Errorf("stderr %q does not name the machine's zone", errb.String())
	}
}
