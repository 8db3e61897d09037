package cmd

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/internal/testutil"
)

// TestLogsInputWarnings runs what a new user runs first: a log read with
// the wrong --log-format, an HAProxy tcplog (a kind of log that is not read), an IIS log, an empty
// file. Each says so on
// stderr, with the exit code of SPEC §8, and the report's text says an
// unread input was not read instead of an empty header.
func TestLogsInputWarnings(t *testing.T) {
	vhost := testutil.TempFile(t, "vhost.log", strings.Repeat(
		`fenix.example.com.ar:443 71.6.232.7 - - [01/Dec/2020:06:41:10 +0000] "GET / HTTP/1.1" 200 4875 "-" "Mozilla/5.0"`+"\n", 25))
	iis := filepath.Join("..", "testdata", "servers", "haproxy_tcplog.log")
	empty := testutil.TempFile(t, "empty.log", "")
	good := filepath.Join("..", "testdata", "logs", "combined.log")
	iisSays := iis + ": cannot detect the log format: it looks like an HAProxy tcplog: no request line (log the frontend with option httplog); none of it was read"
	for _, tc := range []struct {
		name   string
		args   []string
		code   int
		stderr []string
		stdout []string
	}{
		{name: "wrong log format", args: []string{"--log-format", "combined", "--format", "json", vhost}, code: fail.ExitOK,
			stderr: []string{"lohibot-audit: warning: " + vhost + ": 25 of 25 lines do not match --log-format combined; auto-detection reads them as vhost_combined (try --log-format auto)\n"},
			stdout: []string{`"reason": "client address \"fenix.example.com.ar:443\" has a port; no log format writes one there (a virtual host before the client?)"`}},
		{name: "iis log", args: []string{"--format", "table", iis}, code: fail.ExitIncomplete,
			stderr: []string{"lohibot-audit: warning: " + iisSays + "\n"},
			stdout: []string{"1 file, none read: " + iis + " (see the warnings)\n"}},
		{name: "iis log beside a good one", args: []string{"--format", "table", good, iis}, code: fail.ExitIncomplete,
			stdout: []string{"2 files (not read: " + iis + "), 13 lines (1 malformed), log format combined\n"}},
		{name: "iis log read as combined", args: []string{"--log-format", "combined", "--format", "json", iis}, code: fail.ExitOK,
			stderr: []string{": 3 of 3 lines do not match --log-format combined; it looks like an HAProxy tcplog: no request line (log the frontend with option httplog)\n"}},
		{name: "w3c log of IIS", args: []string{"--format", "json", filepath.Join("..", "testdata", "logs", "iis_w3c.log")}, code: fail.ExitOK,
			stdout: []string{`"log_format": "w3c"`, `"comments": 4`, `"user_agents": [
        "LohiSoftBot/1.0 (+https://lohisoft.com/bot)"`}},
		{name: "empty file", args: []string{"--format", "json", empty}, code: fail.ExitOK,
			stderr: []string{"lohibot-audit: warning: " + empty + " is empty\n"}},
		{name: "empty stdin", args: []string{"--format", "json", "-"}, code: fail.ExitOK,
			stderr: []string{"lohibot-audit: warning: - is empty\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runInMemory(t, "", append([]string{"logs", "--offline", "--no-cache"}, tc.args...)...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tc.code, errOut)
			}
			for _, want := range tc.stderr {
				if !strings.Contains(errOut, want) {
					t.Errorf("stderr lacks %q:\n%s", want, errOut)
				}
			}
			for _, want := range tc.stdout {
				if !strings.Contains(out, want) {
					t.Errorf("report lacks %q:\n%s", want, out)
				}
			}
			if strings.Contains(out, "log format -") {
				t.Errorf("the report's header says nothing of the input:\n%s", out)
			}
			if strings.HasPrefix(out, "{") {
				var rep struct{ Warnings []string }
				if err := json.Unmarshal([]byte(out), &rep); err != nil {
					t.Fatal(err)
				}
				for _, want := range tc.stderr {
					w := strings.TrimSuffix(strings.TrimPrefix(want, "lohibot-audit: warning: "), "\n")
					if !strings.Contains(strings.Join(rep.Warnings, "\n"), w) {
						t.Errorf("report warnings %q lack %q", rep.Warnings, w)
					}
				}
			}
		})
	}
}

// TestLogsTableNamesCrawlers checks that the report for people names the
// crawlers --crawler audited, not LohiSoftBot.
func TestLogsTableNamesCrawlers(t *testing.T) {
	log := testutil.TempFile(t, "g.log",
		`66.249.66.1 - - [01/Dec/2026:06:25:01 +0000] "GET / HTTP/1.1" 200 5 "-" "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"`+"\n")
	for _, tc := range []struct {
		crawlers []string
		want     []string
	}{
		{nil, []string{"0 claimed LohiSoftBot hits:"}},
		{[]string{"googlebot"}, []string{"1 claimed crawler hit:", "\nCRAWLERS\n", "│ googlebot ", "\nADDRESSES CLAIMING TO BE A CRAWLER\n"}},
		{[]string{"googlebot", "bingbot"}, []string{"1 claimed crawler hit:", "│ googlebot ", "│ bingbot "}},
	} {
		args := []string{"logs", "--offline", "--no-cache", "--format", "table"}
		for _, c := range tc.crawlers {
			args = append(args, "--crawler", c)
		}
		code, out, errOut := runInMemory(t, "", append(args, log)...)
		if code != fail.ExitOK {
			t.Fatalf("%q: exit %d; stderr:\n%s", tc.crawlers, code, errOut)
		}
		for _, w := range tc.want {
			if !strings.Contains(out, w) {
				t.Errorf("%q: report lacks %q:\n%s", tc.crawlers, w, out)
			}
		}
		if tc.crawlers != nil && strings.Contains(out, "LohiSoftBot") {
			t.Errorf("%q: report names LohiSoftBot:\n%s", tc.crawlers, out)
		}
	}
}
