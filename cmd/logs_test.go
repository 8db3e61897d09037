package cmd

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/internal/testutil"
)

// fixedNow is the clock of command tests.
var fixedNow = time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC)

// runInMemory runs a command line in memory and returns its exit code and
// streams.
func runInMemory(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &Env{
		Stdin:  strings.NewReader(stdin),
		Stdout: &out,
		Stderr: &errb,
		Getenv: func(k string) string {
			if k == "HOME" || k == "XDG_CACHE_HOME" || k == "XDG_CONFIG_HOME" {
				return t.TempDir()
			}
			return ""
		},
		Now: func() time.Time { return fixedNow },
	}
	code = Run(context.Background(), env, args)
	return code, out.String(), errb.String()
}

// golden compares got with the golden file, or rewrites it with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	testutil.Golden(t, filepath.Join("..", "testdata", "golden", name), []byte(got))
}

var sampleArgs = []string{"--offline", "--robots", "../testdata/sample/robots.txt",
	"../testdata/sample/access.log", "../testdata/sample/access.log.1.gz"}

func TestLogsSampleGolden(t *testing.T) {
	for _, format := range []string{"json", "table", "markdown", "yaml", "csv"} {
		t.Run(format, func(t *testing.T) {
			args := append([]string{"logs", "--format", format, "--cache-dir", t.TempDir()}, sampleArgs...)
			code, out, errOut := runInMemory(t, "", args...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			golden(t, "sample."+format, normaliseGeneratedAt(t, format, out))
			if strings.ContainsAny(out, "\x1b\x07") {
				t.Errorf("%s output carries control characters from the log", format)
			}
		})
	}
}

// TestLogsReportFields checks that the JSON report has the field names of
// SPEC §5, at every level.
func TestLogsReportFields(t *testing.T) {
	args := append([]string{"logs", "--format", "json", "--cache-dir", t.TempDir()}, sampleArgs...)
	code, out, errOut := runInMemory(t, "", args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	spec := map[string][]string{
		"":                   {"tool", "version", "summary", "ips", "sites", "violations", "malformed_examples", "warnings"},
		"summary":            {"files", "lines", "malformed", "claimed_hits", "genuine_hits", "spoofed_hits", "unverified_hits", "violations", "log_format", "ip_list_source"},
		"ips":                {"ip", "verdict", "method", "reason", "ptr", "forward", "in_ip_list", "hits", "first_seen", "last_seen", "user_agents"},
		"sites":              {"site", "pages", "robots_fetches", "checks_skipped"},
		"violations":         {"kind", "site", "ip", "time", "file", "line", "path", "detail"},
		"malformed_examples": {"file", "line", "text"},
	}
	for part, keys := range spec {
		var obj map[string]any
		switch v := rep[part].(type) {
		case nil:
			obj = rep
		case map[string]any:
			obj = v
		case []any:
			if len(v) == 0 {
				t.Fatalf("%s is empty in the sample report", part)
			}
			obj = v[0].(map[string]any)
		}
		for _, k := range keys {
			if _, ok := obj[k]; !ok {
				t.Errorf("%s: no field %q", part, k)
			}
		}
	}
	for _, ip := range rep["ips"].([]any) {
		m := ip.(map[string]any)
		v := m["verdict"].(string)
		if v != "genuine" && v != "spoofed" && v != "unverified" {
			t.Errorf("verdict %q", v)
		}
		if _, err := time.Parse(time.RFC3339, m["first_seen"].(string)); err != nil {
			t.Errorf("first_seen: %v", err)
		}
	}
}

// TestLogsClaimedHitsMatchGrep compares the claimed-hit count of each test
// log with a plain count of the lines whose User-Agent carries the token,
// worked out here independently with strings and a per-format field rule.
func TestLogsClaimedHitsMatchGrep(t *testing.T) {
	tests := []struct {
		file      string
		format    string
		malformed int64
	}{
		{"combined.log", "combined", 1},
		{"common.log", "common", 1},
		{"vhost_combined.log", "vhost_combined", 1},
		{"nginx_main.log", "nginx_main", 0},
		{"nginx_json.log", "json", 1},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			path := filepath.Join("..", "testdata", "logs", tt.file)
			code, out, errOut := runInMemory(t, "", "logs", "--offline", "--format", "json", "--cache-dir", t.TempDir(), path)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			var rep audit.Report
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var want int64
			for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
				if userAgentClaims(tt.format, line) {
					want++
				}
			}
			if rep.Summary.ClaimedHits != want || rep.Summary.Malformed != tt.malformed || rep.Summary.LogFormat != tt.format {
				t.Errorf("claimed %d (want %d), malformed %d (want %d), format %q (want %q)",
					rep.Summary.ClaimedHits, want, rep.Summary.Malformed, tt.malformed, rep.Summary.LogFormat, tt.format)
			}
		})
	}
}

// userAgentClaims finds the User-Agent of a well-formed line the simple
// way and says whether it carries the token.
func userAgentClaims(format, line string) bool {
	switch format {
	case "common":
		return false
	case "json":
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) != nil {
			return false
		}
		ua, _ := m["http_user_agent"].(string)
		return strings.Contains(strings.ToLower(ua), "lohisoftbot")
	}
	// the User-Agent is the last quoted field (nginx_main: the one before)
	if !strings.HasSuffix(line, `"`) || !strings.Contains(line, "] \"") {
		return false
	}
	parts := strings.Split(line, `" "`)
	if format == "nginx_main" {
		parts = parts[:len(parts)-1]
	}
	if len(parts) < 2 {
		return false
	}
	ua := strings.ToLower(strings.TrimSuffix(parts[len(parts)-1], `"`))
	return strings.Contains(ua, "lohisoftbot")
}

func TestLogsExitCodes(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join("..", "testdata", "logs", "combined.log")
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	var gzb bytes.Buffer
	zw := gzip.NewWriter(&gzb)
	zw.Write(bytes.Repeat(data, 50))
	zw.Close()
	truncated := filepath.Join(dir, "access.log.2.gz")
	if err := os.WriteFile(truncated, gzb.Bytes()[:gzb.Len()/2], 0o644); err != nil {
		t.Fatal(err)
	}
	errorLog := filepath.Join(dir, "error.log")
	if err := os.WriteFile(errorLog, []byte("[Tue Dec 01 06:25:14.123456 2026] [core:error] [pid 1234] AH00037: Symbolic link not allowed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	junk := filepath.Join(dir, "access.log.3")
	if err := os.WriteFile(junk, bytes.Repeat([]byte("\x00\x04\xe6\xd6\xb4F\x02\x00!\x01\x16\x00\x00\x00t/\xe5\xa3\n"), 20), 0o644); err != nil {
		t.Fatal(err)
	}
	badXZ := filepath.Join(dir, "access.log.3.xz")
	if err := os.WriteFile(badXZ, bytes.Repeat([]byte("\xfd7zXZ\x00\x00\x04\xe6\xd6\xb4F\x02\x00!\x01\x16\x00\x00\x00t/\xe5\xa3\n"), 20), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		args   []string
		stdin  string
		code   int
		stderr string
	}{
		{"ok", []string{good}, "", 0, ""},
		{"fail on spoofed", []string{"--fail-on", "spoofed", good}, "", 1, "lohibot-audit: --fail-on spoofed matched: 3 spoofed hits\n"},
		{"fail on any", []string{"--fail-on", "any", "--budget", "1", good}, "", 1, "lohibot-audit: --fail-on any matched: 3 spoofed hits and 1 conduct violation\n"},
		{"fail on violations without any", []string{"--fail-on", "violations", good}, "", 0, ""},
		{"bad fail-on", []string{"--fail-on", "sometimes", good}, "", 2, "unknown --fail-on"},
		{"bad format", []string{"--format", "xml", good}, "", 2, "unknown --format"},
		{"bad log format", []string{"--log-format", "apache:%h %Q", good}, "", 2, "unknown directive %Q"},
		{"bad since", []string{"--since", "yesterday", good}, "", 2, "--since"},
		{"unknown flag", []string{"--frobnicate", good}, "", 2, "unknown flag"},
		{"missing file", []string{filepath.Join(dir, "nope.log"), good}, "", 2, "cannot read " + filepath.Join(dir, "nope.log") + ": no such file or directory\nlohibot-audit: hint: check the path"},
		{"directory", []string{good, dir}, "", 2, "cannot read " + dir + ": it is a directory"},
		{"truncated gzip", []string{truncated}, "", 3, "truncated"},
		{"stdin", []string{"-"}, string(data), 0, ""},
		{"undetectable", []string{"-"}, "hello\nworld\n", 3, "cannot detect the log format"},
		{"good and error.log", []string{good, errorLog}, "", 3, "error.log: cannot detect the log format"},
		{"good and binary junk", []string{junk, good}, "", 3, "access.log.3: cannot detect the log format"},
		{"damaged xz", []string{badXZ, good}, "", 3, "access.log.3.xz: input is truncated or damaged: xz data"},
		{"offline robots url", []string{"--robots", "http://127.0.0.1:9/robots.txt", good}, "", 2, "--offline forbids fetching --robots URL http://127.0.0.1:9/robots.txt; give a file"},
		{"offline robots url for a site", []string{"--robots", "www.example.org=https://127.0.0.1:9/robots.txt", good}, "", 2, "--offline forbids fetching --robots URL https://127.0.0.1:9/robots.txt"},
		{"bad budget", []string{"--budget", "0", good}, "", 2, "--budget 0: give a number of pages of 1 or more"},
		{"bad budget window", []string{"--budget-window", "0s", good}, "", 2, "--budget-window 0s: give a duration above 0"},
		{"bad min-pause", []string{"--min-pause", "-1s", good}, "", 2, "--min-pause -1s: give a duration of 0 or more"},
		{"bad min-backoff", []string{"--min-backoff", "-30s", good}, "", 2, "--min-backoff -30s: give a duration of 0 or more"},
		{"bad max-violations", []string{"--max-violations", "-1", good}, "", 2, "--max-violations -1: give a number of 0 (list all) or more"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"logs", "--offline", "--format", "json", "--cache-dir", t.TempDir()}, tt.args...)
			code, out, errOut := runInMemory(t, tt.stdin, args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tt.code, errOut)
			}
			if tt.stderr != "" && !strings.Contains(errOut, tt.stderr) {
				t.Errorf("stderr %q, want it to contain %q", errOut, tt.stderr)
			}
			if code == 2 {
				if out != "" {
					t.Errorf("usage error printed a report: %q", out)
				}
				if lines := strings.Count(strings.TrimSpace(errOut), "\n") + 1; lines > 2 {
					t.Errorf("usage error is %d lines: %q", lines, errOut)
				}
			}
			if code == 3 {
				var rep audit.Report
				if err := json.Unmarshal([]byte(out), &rep); err != nil {
					t.Fatalf("no report after a partial read: %v", err)
				}
				if !rep.Summary.Incomplete || len(rep.Warnings) == 0 {
					t.Errorf("partial read not said in the report: %+v", rep.Summary)
				}
				if tt.name == "truncated gzip" && rep.Summary.ClaimedHits == 0 {
					t.Errorf("nothing kept from before the damage")
				}
				if strings.HasPrefix(tt.name, "good and") {
					if rep.Summary.ClaimedHits == 0 || rep.Summary.Files != 2 {
						t.Errorf("the readable log was not reported: %+v", rep.Summary)
					}
					failed := 0
					for _, in := range rep.Inputs {
						if strings.Contains(in.Error, "cannot detect the log format") {
							failed++
						}
					}
					if failed != 1 {
						t.Errorf("want one input with the error, got %+v", rep.Inputs)
					}
				}
			}
		})
	}
}

func TestLogsSinceUntil(t *testing.T) {
	path := filepath.Join("..", "testdata", "sample", "access.log")
	count := func(args ...string) (int64, int64) {
		code, out, errOut := runInMemory(t, "", append([]string{"logs", "--offline", "--format", "json", "--cache-dir", t.TempDir()}, append(args, path)...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var rep audit.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		return rep.Summary.ClaimedHits, rep.Summary.FilteredOut
	}
	all, _ := count()
	before, out1 := count("--until", "2026-12-01T10:00:00Z")
	after, out2 := count("--since", "2026-12-01T10:00:00Z")
	if before+after != all || before == 0 || after == 0 || out1 != after || out2 != before {
		t.Errorf("all %d, before %d (+%d left out), after %d (+%d left out)", all, before, out1, after, out2)
	}
	// a duration counts back from the command's clock (2026-12-02T12:00Z)
	recent, _ := count("--since", "28h")
	if recent != after {
		t.Errorf("--since 28h gave %d hits, want %d", recent, after)
	}
}

func TestLogsConfigFile(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfg, []byte("format: csv\nfail-on: spoofed\noffline: true\nrobots:\n  - ../testdata/sample/robots.txt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("..", "testdata", "logs", "combined.log")
	code, out, _ := runInMemory(t, "", "logs", "--config", cfg, "--cache-dir", dir, path)
	if code != 1 || !strings.HasPrefix(out, "ip,verdict,") {
		t.Errorf("config not applied: exit %d, output %q", code, out)
	}
	// flags win over the file
	code, out, _ = runInMemory(t, "", "logs", "--config", cfg, "--fail-on", "violations", "--format", "json", "--cache-dir", dir, path)
	if code != 0 || !strings.HasPrefix(out, "{") {
		t.Errorf("flags did not win: exit %d, output %.20q", code, out)
	}
	if err := os.WriteFile(cfg, []byte("fail-onn: spoofed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, errOut := runInMemory(t, "", "logs", "--config", cfg, path)
	if code != 2 || !strings.Contains(errOut, `unknown key "fail-onn"`) {
		t.Errorf("typo in config: exit %d, stderr %q", code, errOut)
	}
}

// TestLogsSameCrawlAcrossFormats writes one crawl as Apache
// vhost_combined with %D, as nginx with $request_time, and as JSON lines,
// and expects the same findings where the data allows.
func TestLogsSameCrawlAcrossFormats(t *testing.T) {
	type req struct {
		offset time.Duration // start, from the crawl's beginning
		dur    time.Duration
		path   string
		status int
		retry  string
		user   string
	}
	crawl := []req{
		{0, 100 * time.Millisecond, "/robots.txt", 200, "", ""},
		{5 * time.Second, 200 * time.Millisecond, "/", 200, "", ""},
		{10 * time.Second, 5 * time.Second, "/slow", 200, "", ""},
		// concurrency, provable even with whole-second times
		{12 * time.Second, 500 * time.Millisecond, "/overlaps-slow", 200, "", ""},
		{20 * time.Second, 100 * time.Millisecond, "/private/x", 200, "", ""}, // robots
		{30 * time.Second, 100 * time.Millisecond, "/busy", 429, "60", ""},
		{40 * time.Second, 100 * time.Millisecond, "/too-soon", 200, "", ""}, // backoff
		{120 * time.Second, 100 * time.Millisecond, "/account", 200, "", "bob"},
	}
	base := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	var apache, js strings.Builder
	type ended struct {
		end  time.Time
		line string
	}
	var nginxLines []ended
	for _, r := range crawl {
		start, end := base.Add(r.offset), base.Add(r.offset+r.dur)
		user := r.user
		if user == "" {
			user = "-"
		}
		retry := r.retry
		if retry == "" {
			retry = "-"
		}
		apache.WriteString("www.example.org 79.139.58.98 - " + user + " [" + start.Format("02/Jan/2006:15:04:05 -0700") + `] "GET ` + r.path + ` HTTP/1.1" ` +
			itoa(r.status) + ` 100 "-" "LohiSoftBot/1.0 (+https://lohisoft.com/bot)" ` + itoa(int(r.dur/time.Microsecond)) + ` "` + retry + "\"\n")
		nginxLines = append(nginxLines, ended{end, "79.139.58.98 - " + user + " [" + end.Format("02/Jan/2006:15:04:05 -0700") + `] "GET ` + r.path + ` HTTP/1.1" ` +
			itoa(r.status) + ` 100 "-" "LohiSoftBot/1.0 (+https://lohisoft.com/bot)" www.example.org ` + secs(r.dur) + ` "` + retry + "\"\n"})
		m := map[string]string{"msec": msec(end), "remote_addr": "79.139.58.98", "remote_user": r.user, "request": "GET " + r.path + " HTTP/1.1",
			"status": itoa(r.status), "body_bytes_sent": "100", "http_user_agent": "LohiSoftBot/1.0 (+https://lohisoft.com/bot)",
			"host": "www.example.org", "request_time": secs(r.dur), "sent_http_retry_after": r.retry}
		b, _ := json.Marshal(m)
		js.Write(b)
		js.WriteByte('\n')
	}
	// nginx writes a line when its request ends
	sort.SliceStable(nginxLines, func(i, j int) bool { return nginxLines[i].end.Before(nginxLines[j].end) })
	var nginx strings.Builder
	for _, l := range nginxLines {
		nginx.WriteString(l.line)
	}
	write := func(name, s string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	robots := write("robots.txt", "User-agent: LohiSoftBot\nDisallow: /private/\n")
	runs := []struct {
		name, file, format string
	}{
		{"apache", write("apache.log", apache.String()), `apache:%v %h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i" %D "%{Retry-After}o"`},
		{"nginx", write("nginx.log", nginx.String()), `nginx:$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $host $request_time "$sent_http_retry_after"`},
		{"json", write("nginx.json", js.String()), "json"},
	}
	for _, r := range runs {
		code, out, errOut := runInMemory(t, "", "logs", "--offline", "--format", "json", "--cache-dir", t.TempDir(), "--robots", robots, "--log-format", r.format, r.file)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", r.name, code, errOut)
		}
		var rep audit.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, v := range rep.Violations {
			got = append(got, v.Kind+" "+v.Path)
		}
		sort.Strings(got)
		want := []string{"auth /account", "backoff /too-soon", "concurrency /overlaps-slow", "robots /private/x"}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: violations %q, want %q", r.name, got, want)
		}
		if rep.Summary.Malformed != 0 || rep.Summary.GenuineHits != int64(len(crawl)) {
			t.Errorf("%s: %+v", r.name, rep.Summary)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func secs(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) }

func msec(t time.Time) string {
	ms := t.UnixMilli()
	return fmt.Sprintf("%d.%03d", ms/1000, ms%1000)
}

// --max-violations lists the first violations of each site and kind and
// counts the others, in the site's row and the summary.
func TestLogsMaxViolations(t *testing.T) {
	var b strings.Builder
	for i := range 6 { // in one second: 5 pause violations
		fmt.Fprintf(&b, "79.139.58.98 - - [02/Dec/2026:10:00:00 +0000] \"GET /p%d HTTP/1.1\" 200 512 \"-\" \"LohiSoftBot/1.0 (+https://lohisoft.com/bot)\"\n", i)
	}
	run := func(args ...string) audit.Report {
		t.Helper()
		code, out, errOut := runInMemory(t, b.String(), append([]string{"logs", "--offline", "--format", "json", "--site", "www.example.org", "--cache-dir", t.TempDir()}, args...)...)
		if code != 0 {
			t.Fatalf("exit %d: %s", code, errOut)
		}
		var rep audit.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		return rep
	}
	rep := run("--max-violations", "2", "-")
	if len(rep.Violations) != 2 || rep.Violations[0].Line != 2 || rep.Violations[1].Line != 3 {
		t.Errorf("listed %+v, want the pauses of lines 2 and 3", rep.Violations)
	}
	if rep.Summary.Violations != 5 || rep.Summary.ViolationsLeftOut != 3 {
		t.Errorf("summary counts %d violations, %d left out; want 5 and 3", rep.Summary.Violations, rep.Summary.ViolationsLeftOut)
	}
	if s := rep.Sites[0]; s.Violations != 5 || !reflect.DeepEqual(s.ViolationsLeftOut, map[string]int{"pause": 3}) {
		t.Errorf("site row %+v", s)
	}
	for _, args := range [][]string{{"-"}, {"--max-violations", "0", "-"}} {
		if rep := run(args...); len(rep.Violations) != 5 || rep.Summary.ViolationsLeftOut != 0 || rep.Sites[0].ViolationsLeftOut != nil {
			t.Errorf("%v: %d listed, %d left out", args, len(rep.Violations), rep.Summary.ViolationsLeftOut)
		}
	}
}
