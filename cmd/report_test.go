package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/internal/dnstest"
	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/internal/testutil"
	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/miekg/dns"
)

// mdUnescaped counts the occurrences of c in line that no backslash
// escapes.
func mdUnescaped(line string, c byte) int {
	n := 0
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '\\':
			i++
		case c:
			n++
		}
	}
	return n
}

// mdCheck fails the test when Markdown output lets text from strangers act
// as markup: a table row with more cells than its header, HTML, a link or
// image, a heading that the program did not write.
func mdCheck(t *testing.T, out string, headings []string) {
	t.Helper()
	cols := -1
	for i, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "|"):
			n := mdUnescaped(line, '|')
			if cols < 0 {
				cols = n
			} else if n != cols {
				t.Errorf("line %d has %d cell separators, its table %d: %q", i+1, n, cols, line)
			}
		case line == "":
			cols = -1
		case strings.HasPrefix(line, "#"):
			ok := false
			for _, h := range headings {
				ok = ok || strings.HasPrefix(line, h)
			}
			if !ok {
				t.Errorf("line %d is a heading the program did not write: %q", i+1, line)
			}
		}
		for _, c := range []byte{'<', '>', '[', ']', '`', '*', '_', '!'} {
			if n := mdUnescaped(line, c); n > 0 {
				t.Errorf("line %d has %d unescaped %q: %q", i+1, n, c, line)
			}
		}
	}
}

// TestLogsMarkdownEscaped reads the sample, which holds a crawled path and
// a malformed line full of Markdown and HTML, and checks that the
// Markdown report renders them as text.
func TestLogsMarkdownEscaped(t *testing.T) {
	args := append([]string{"logs", "--format", "markdown", "--cache-dir", t.TempDir()}, sampleArgs...)
	code, out, errOut := runInMemory(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		`| /search/\|\<script\>\[x\](javascript:1)\\x1b\]0;owned\\x07 `,
		`| \\x1b\]0;owned\\x07 \| \<script\>alert(1)\</script\> \[x\](javascript:0) \# \_em\_ \*em\* \` + "`code\\`" + ` \!\[img\](x) \\ `,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %s", want)
		}
	}
	mdCheck(t, out, []string{"# lohibot-audit report", "## Addresses", "## Sites", "## Violations", "### www.example.org: ", "## Malformed", "## Warnings"})
}

// TestVerifyMarkdownEscaped gives verify a PTR name full of Markdown.
func TestVerifyMarkdownEscaped(t *testing.T) {
	hostile := "a|b<script>x</script>[y]`z`*_#!.evil.example."
	resolver := serveDNS(t, dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		if dnstest.AnswerRoot(w, r) {
			return
		}
		m := new(dns.Msg)
		m.SetReply(r)
		if q := r.Question[0]; q.Qtype == dns.TypePTR {
			m.Answer = append(m.Answer, &dns.PTR{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypePTR, Class: dns.ClassINET, Ttl: 60}, Ptr: hostile})
		} else {
			m.Rcode = dns.RcodeNameError
		}
		w.WriteMsg(m)
	}))
	code, out, errOut := identityRun(t, &Env{}, "verify", "--format", "markdown", "--resolver", resolver, "--no-cache",
		"--ip-list", testutil.TempFile(t, "ips.json", `["79.139.58.98"]`), "203.0.113.7")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, `a\|b\<script\>x\</script\>\[y\]\`+"`z\\`"+`\*\_\#\!.evil.example`) {
		t.Errorf("the PTR name is not escaped:\n%s", out)
	}
	mdCheck(t, out, nil)
}

// TestLogsWarningsOnStderr checks that run-level warnings reach stderr
// once each whatever the format, except where a terminal shows them in
// the report.
func TestLogsWarningsOnStderr(t *testing.T) {
	dir := t.TempDir()
	badList := filepath.Join(dir, "ips.json")
	if err := os.WriteFile(badList, []byte("not a list"), 0o644); err != nil {
		t.Fatal(err)
	}
	unreadable := filepath.Join(dir, "rotated.log")
	if err := os.WriteFile(unreadable, []byte("hello\nworld\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	good := filepath.Join("..", "testdata", "logs", "combined.log")
	warnings := []string{"ips.json: ", unreadable + ": cannot detect the log format"}
	tests := []struct {
		format string
		tty    bool
		said   int // how often each warning is on stderr
	}{
		{"csv", false, 1},
		{"json", false, 1},
		{"yaml", false, 1},
		{"table", false, 1},
		{"markdown", false, 1},
		{"json", true, 1},
		{"csv", true, 1},
		{"table", true, 0},
		{"markdown", true, 0},
	}
	for _, tc := range tests {
		name := tc.format
		if tc.tty {
			name += " on a terminal"
		}
		t.Run(name, func(t *testing.T) {
			var out, errb bytes.Buffer
			env := &Env{Stdout: &out, Stderr: &errb, StdoutTTY: tc.tty, Now: func() time.Time { return fixedNow }}
			code := Run(context.Background(), env, []string{"logs", "--offline", "--no-cache", "--format", tc.format, "--ip-list", badList, good, unreadable})
			if code != fail.ExitIncomplete {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, fail.ExitIncomplete, errb.String())
			}
			for _, w := range warnings {
				if n := strings.Count(errb.String(), w); n != tc.said {
					t.Errorf("%q is said %d times on stderr, want %d:\n%s", w, n, tc.said, errb.String())
				}
			}
			for _, line := range strings.Split(strings.TrimSpace(errb.String()), "\n") {
				if line != "" && !strings.HasPrefix(line, "lohibot-audit: warning: ") {
					t.Errorf("stderr line %q is not a warning", line)
				}
			}
		})
	}
}

// failWriter fails every write, as a full disk or a closed pipe does.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("no space left on device") }

// TestWriteFailureExit checks that output that cannot be written is an I/O
// failure (exit 3) said in one line, not a usage error.
func TestWriteFailureExit(t *testing.T) {
	good := filepath.Join("..", "testdata", "logs", "combined.log")
	list := testutil.TempFile(t, "ips.json", `["79.139.58.98"]`)
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"logs json", []string{"logs", "--format", "json", good}, "cannot write the report: no space left on device"},
		{"logs table", []string{"logs", "--format", "table", good}, "cannot write the report: no space left on device"},
		{"verify json", []string{"verify", "--format", "json", "79.139.58.98"}, "cannot write the verdicts: no space left on device"},
		{"verify table", []string{"verify", "--format", "table", "79.139.58.98"}, "cannot write the verdicts: no space left on device"},
		{"emit", []string{"emit", "nftables", good}, "cannot write the rules: no space left on device"},
		{"ips show json", []string{"ips", "show", "--format", "json"}, "cannot write the list: no space left on device"},
		{"ips show table", []string{"ips", "show"}, "cannot write the list: no space left on device"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var errb bytes.Buffer
			env := &Env{Stdout: failWriter{}, Stderr: &errb, Now: func() time.Time { return fixedNow }}
			code := Run(context.Background(), env, append(tc.args, "--offline", "--no-cache", "--ip-list", list))
			if code != fail.ExitIncomplete {
				t.Errorf("exit %d, want %d; stderr:\n%s", code, fail.ExitIncomplete, errb.String())
			}
			if !strings.Contains(errb.String(), "lohibot-audit: error: "+tc.want+"\n") {
				t.Errorf("stderr %q, want the error %q", errb.String(), tc.want)
			}
		})
	}
}

// TestLogsOfflineRobotsURL checks that --offline never fetches a
// robots.txt URL.
func TestLogsOfflineRobotsURL(t *testing.T) {
	var hits atomic.Int64
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Write([]byte("User-agent: *\nDisallow: /\n"))
	}))
	defer srv.Close()
	good := filepath.Join("..", "testdata", "logs", "combined.log")
	for _, v := range []string{srv.URL + "/robots.txt", "www.example.org=" + srv.URL + "/robots.txt"} {
		var errb bytes.Buffer
		env := &Env{Stdout: &bytes.Buffer{}, Stderr: &errb, HTTPClient: srv.Client()}
		code := Run(context.Background(), env, []string{"logs", "--offline", "--no-cache", "--format", "json", "--robots", v, good})
		if code != fail.ExitUsage || !strings.Contains(errb.String(), "--offline forbids fetching --robots URL "+srv.URL+"/robots.txt; give a file") {
			t.Errorf("--robots %s: exit %d, stderr %q", v, code, errb.String())
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("--offline fetched robots.txt %d times", n)
	}
}

// TestWriteYAML checks that YAML keeps the fields' order and that a
// string holding invalid UTF-8 stays a string, its bad bytes U+FFFD as in
// the JSON.
// generatedAt matches the generated_at field of a JSON or YAML report.
var generatedAt = regexp.MustCompile(`(?m)^(  "generated_at": "|generated_at: )([^"\n]*)("?)$`)

// normaliseGeneratedAt checks that a JSON or YAML report says it was made
// at the command's clock (fixedNow), and puts GENERATED_AT in place of the
// time, so that golden files do not lock in a time.
func normaliseGeneratedAt(t *testing.T, format, out string) string {
	t.Helper()
	m := generatedAt.FindAllStringSubmatch(out, -1)
	if format != "json" && format != "yaml" {
		if len(m) != 0 {
			t.Errorf("%s output has generated_at", format)
		}
		return out
	}
	if len(m) != 1 {
		t.Fatalf("%s report has %d generated_at fields, want 1", format, len(m))
	}
	if got, want := m[0][2], fixedNow.UTC().Format(time.RFC3339); got != want {
		t.Errorf("generated_at %q, want the clock's %q", got, want)
	}
	return generatedAt.ReplaceAllString(out, "${1}GENERATED_AT${3}")
}

// TestLogsHostNameClient: a host name in the client field (Apache's
// HostnameLookups On) is reported unverified with the reason
// not-an-address: DNS is never asked about it and no rule blocks it.
func TestLogsHostNameClient(t *testing.T) {
	var mu sync.Mutex
	var asked []string
	resolver := serveDNS(t, dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		if dnstest.AnswerRoot(w, r) {
			return
		}
		mu.Lock()
		// In any letter case: the resolver sends names in random case.
		asked = append(asked, strings.ToLower(r.Question[0].Name))
		mu.Unlock()
		m := new(dns.Msg)
		m.SetRcode(r, dns.RcodeNameError)
		w.WriteMsg(m)
	}))
	log := testutil.TempFile(t, "access.log", strings.Join([]string{
		`crawl-7.bot.lohisoft.com - - [01/Dec/2026:06:03:40 +0100] "GET / HTTP/1.1" 200 5 "-" "LohiSoftBot/1.0"`,
		`evil.example - - [01/Dec/2026:06:03:41 +0100] "GET /a HTTP/1.1" 200 5 "-" "LohiSoftBot/1.0"`,
		`203.0.113.7 - - [01/Dec/2026:06:03:42 +0100] "GET /b HTTP/1.1" 200 5 "-" "LohiSoftBot/1.0"`,
	}, "\n")+"\n")
	args := []string{"--log-format", "combined", "--resolver", resolver, "--no-cache", "--ip-list", testutil.TempFile(t, "ips.json", `["79.139.58.98"]`), log}
	code, out, errOut := runInMemory(t, "", append([]string{"logs", "--format", "json"}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep audit.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, ip := range rep.IPs {
		got[ip.IP] = fmt.Sprintf("%s/%s/%s", ip.Verdict, ip.Method, ip.Reason)
	}
	want := map[string]string{
		"crawl-7.bot.lohisoft.com": "unverified//not-an-address",
		"evil.example":             "unverified//not-an-address",
		"203.0.113.7":              "spoofed/fcrdns/no-ptr",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("verdicts %v, want %v", got, want)
	}
	mu.Lock()
	for _, q := range asked {
		if q != "7.113.0.203.in-addr.arpa." {
			t.Errorf("DNS was asked about %q", q)
		}
	}
	mu.Unlock()
	code, rules, errOut := runInMemory(t, "", append([]string{"emit", "nftables"}, args...)...)
	if code != 0 {
		t.Fatalf("emit: exit %d: %s", code, errOut)
	}
	if !strings.Contains(rules, "203.0.113.7 timeout") || strings.Contains(rules, "evil.example") || strings.Contains(rules, "crawl-7") {
		t.Errorf("rules block other than 203.0.113.7:\n%s", rules)
	}
}

// TestLogsJSONToTerminal: JSON and YAML reports printed to a terminal
// escape the C1 controls, DEL and bidi overrides a log carries; printed to
// a pipe, the JSON keeps them as encoding/json does.
func TestLogsJSONToTerminal(t *testing.T) {
	log := testutil.TempFile(t, "access.log",
		`203.0.113.7 - - [01/Dec/2026:06:03:42 +0100] "GET /\xc2\x9b31m\x7f HTTP/1.1" 200 5 "-" "LohiSoftBot/1.0 \xe2\x80\xaeevil\xc2\x85"`+"\n")
	for _, format := range []string{"json", "yaml"} {
		for _, tty := range []bool{false, true} {
			var out, errb bytes.Buffer
			env := &Env{Stdout: &out, Stderr: &errb, StdoutTTY: tty, Now: func() time.Time { return fixedNow },
				Getenv: func(k string) string {
					if k == "HOME" || k == "XDG_CACHE_HOME" || k == "XDG_CONFIG_HOME" {
						return t.TempDir()
					}
					return ""
				}}
			code := Run(context.Background(), env, []string{"logs", "--offline", "--no-cache", "--format", format, "--log-format", "combined", log})
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			_, unsafe := terminalUnsafe(out.String())
			if unsafe != tty {
				continue
			}
			if tty {
				t.Errorf("%s to a terminal carries terminal controls:\n%s", format, out.String())
			} else if format == "json" {
				t.Errorf("json to a pipe lost the log's runes:\n%s", out.String())
			}
		}
	}
}

// terminalUnsafe reports the first rune of s that a terminal could act
// on, other than the line breaks and indentation of the layout.
func terminalUnsafe(s string) (rune, bool) {
	for _, r := range s {
		if r != '\n' && (r < 0x20 || parse.IsTerminalUnsafe(r)) {
			return r, true
		}
	}
	return 0, false
}
