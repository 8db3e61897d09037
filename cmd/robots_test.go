package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/robots"
	"github.com/lohisoft/lohibot-audit/robots/robotstest"
)

var updateRobotsGolden = flag.Bool("update-robots", false, "rewrite the robots command golden files")

// robotsUpdating reports whether golden files should be rewritten: with
// -update-robots, or with a package-wide -update flag if one is defined.
func robotsUpdating() bool {
	if *updateRobotsGolden {
		return true
	}
	f := flag.Lookup("update")
	return f != nil && f.Value.String() == "true"
}

func robotsFixture(name string) string {
	return filepath.Join("..", "testdata", "robots", name)
}

type robotsRun struct {
	code           int
	stdout, stderr string
}

// runRobotsCmd runs the program in memory with args.
func runRobotsCmd(t *testing.T, client *http.Client, vars map[string]string, stdin string, args ...string) robotsRun {
	t.Helper()
	var out, errb bytes.Buffer
	env := &Env{
		Stdin:      strings.NewReader(stdin),
		Stdout:     &out,
		Stderr:     &errb,
		Getenv:     func(k string) string { return vars[k] },
		HTTPClient: client,
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code := Run(ctx, env, args)
	return robotsRun{code: code, stdout: out.String(), stderr: errb.String()}
}

func TestRobotsTestText(t *testing.T) {
	got := runRobotsCmd(t, nil, nil, "", "robots", "test", robotsFixture("lohisoftbot-partial.txt"),
		"/", "/private/x", "/private/press/a", "https://example.com/files/a.pdf", "/files/a.pdf?x=1",
		"/search?q=1", "/drafts/x", "/drafts/public", "/robots.txt")
	if got.code != fail.ExitOK {
		t.Fatalf("exit %d, want 0; stderr:\n%s", got.code, got.stderr)
	}
	if got.stderr != "" {
		t.Errorf("stderr = %q, want nothing for a clean file", got.stderr)
	}
	golden := robotsFixture("test-text.golden")
	if robotsUpdating() {
		if err := os.WriteFile(golden, []byte(got.stdout), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./cmd -run TestRobotsTestText -update-robots to create it)", err)
	}
	if got.stdout != string(want) {
		t.Errorf("stdout differs from %s:\n--- got\n%s--- want\n%s", golden, got.stdout, want)
	}
}

func TestRobotsTestJSON(t *testing.T) {
	got := runRobotsCmd(t, nil, nil, "", "robots", "test", robotsFixture("lohisoftbot-partial.txt"),
		"/private/x", "/private/press/a", "/", "--format", "json")
	if got.code != fail.ExitOK {
		t.Fatalf("exit %d, want 0; stderr:\n%s", got.code, got.stderr)
	}
	var res []robots.TestResult
	if err := json.Unmarshal([]byte(got.stdout), &res); err != nil {
		t.Fatalf("output is not JSON: %v\n%s", err, got.stdout)
	}
	want := []robots.TestResult{
		{URL: "/private/x", Allowed: false, Line: 5, Rule: "Disallow: /private/", Agent: "LohiSoftBot"},
		{URL: "/private/press/a", Allowed: true, Line: 6, Rule: "Allow: /private/press/", Agent: "LohiSoftBot"},
		{URL: "/", Allowed: true, Line: 0, Rule: "", Why: "no rule in the LohiSoftBot group matches", Agent: "LohiSoftBot"},
	}
	if fmt.Sprint(res) != fmt.Sprint(want) {
		t.Errorf("got  %+v\nwant %+v", res, want)
	}
	// The documented keys are always there, even when empty.
	var raw []map[string]any
	if err := json.Unmarshal([]byte(got.stdout), &raw); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"url", "allowed", "line", "rule"} {
		if _, ok := raw[2][k]; !ok {
			t.Errorf("key %q missing from %v", k, raw[2])
		}
	}
}

func TestRobotsTestOptions(t *testing.T) {
	blocked := robotsFixture("lohisoftbot-blocked.txt")
	tests := []struct {
		name       string
		stdin      string
		args       []string
		code       int
		stdout     string // substring, when non-empty
		stderr     string // substring, when non-empty
		stdoutNone bool
	}{
		{name: "default token", args: []string{blocked, "/x"}, stdout: "disallowed  /x  line 3: Disallow: /"},
		{name: "token with version", args: []string{blocked, "/x", "--user-agent", "LohiSoftBot/1.0"}, stdout: "disallowed  /x  line 3: Disallow: /"},
		{name: "other token gets the star group", args: []string{blocked, "/admin/x", "/admin/help", "--user-agent", "Bingbot"}, stdout: "disallowed  /admin/x     line 6: Disallow: /admin/\nallowed     /admin/help  line 7: Allow: /admin/help\n"},
		{name: "star token asks the star group", args: []string{blocked, "/admin/x", "--user-agent", "*"}, stdout: "disallowed  /admin/x  line 6: Disallow: /admin/"},
		{name: "stdin", stdin: "User-agent: *\nDisallow: /in\n", args: []string{"-", "/in/x"}, stdout: "disallowed  /in/x  line 2: Disallow: /in"},
		{name: "bad format", args: []string{blocked, "/", "--format", "yaml"}, code: fail.ExitUsage, stderr: `lohibot-audit: error: unknown --format "yaml": use text or json`, stdoutNone: true},
		{name: "bad token", args: []string{blocked, "/", "--user-agent", "1.0"}, code: fail.ExitUsage, stderr: "has no product token", stdoutNone: true},
		{name: "no URL", args: []string{blocked}, code: fail.ExitUsage, stderr: "lohibot-audit: error: robots test needs at least one URL or path to test against " + blocked + "\nlohibot-audit: hint: name them after ROBOTS: lohibot-audit robots test robots.txt /private/ https://example.com/blog/\n", stdoutNone: true},
		{name: "no ROBOTS", args: nil, code: fail.ExitUsage, stderr: "lohibot-audit: error: robots test needs a robots.txt (ROBOTS) and at least one URL or path to test\nlohibot-audit: hint: ", stdoutNone: true},
		{name: "missing file", args: []string{robotsFixture("no-such-file.txt"), "/"}, code: fail.ExitUsage, stderr: "no such file or directory\nlohibot-audit: hint: check the path", stdoutNone: true},
		{name: "URL of another scheme", args: []string{"ftp://example.com/robots.txt", "/"}, code: fail.ExitUsage,
			stderr: "lohibot-audit: error: robots.txt \"ftp://example.com/robots.txt\": ftp:// is not a scheme this can fetch: use http:// or https://, or a file\nlohibot-audit: hint: ", stdoutNone: true},
		{name: "warnings on stderr", args: []string{robotsFixture("lenient.txt"), "/typo-one"}, stdout: "disallowed  /typo-one  line 3: Dissallow: /typo-one", stderr: `lohibot-audit: warning: robots.txt ../testdata/robots/lenient.txt: line 3: "Dissallow" is a misspelling of disallow`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := runRobotsCmd(t, nil, nil, tc.stdin, append([]string{"robots", "test"}, tc.args...)...)
			if got.code != tc.code {
				t.Fatalf("exit %d, want %d; stdout:\n%s\nstderr:\n%s", got.code, tc.code, got.stdout, got.stderr)
			}
			if tc.stdout != "" && !strings.Contains(got.stdout, tc.stdout) {
				t.Errorf("stdout = %q, want it to contain %q", got.stdout, tc.stdout)
			}
			if tc.stderr != "" && !strings.Contains(got.stderr, tc.stderr) {
				t.Errorf("stderr = %q, want it to contain %q", got.stderr, tc.stderr)
			}
			if tc.stdoutNone && got.stdout != "" {
				t.Errorf("stdout = %q, want nothing", got.stdout)
			}
		})
	}
}

// TestRobotsCrawler checks that --crawler picks the robots.txt token of a
// built-in or file profile, that --user-agent still wins, and that a
// profile that cannot be had is a usage error naming the file and line.
func TestRobotsCrawler(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "robots.txt")
	robotsTxt := "User-agent: Googlebot\nDisallow: /g/\n\nUser-agent: bingbot\nDisallow: /b/\n\nUser-agent: ExampleBot\nDisallow: /e/\n\nUser-agent: *\nDisallow: /all/\n"
	profile := filepath.Join(dir, "examplebot.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	for name, data := range map[string]string{
		file:    robotsTxt,
		profile: "name: examplebot\ntokens: [ExampleBot-News]\nrobots_token: ExampleBot\nfcrdns: [crawl.example.net]\n",
		bad:     "name: examplebot\ntokens: [ExampleBot]\nipv6: maybe\n",
	} {
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string // exact
		stderr string // prefix
	}{
		{name: "googlebot", args: []string{"test", "--crawler", "googlebot", file, "/g/x", "/b/x"},
			stdout: "disallowed  /g/x  line 2: Disallow: /g/\nallowed     /b/x  no rule in the Googlebot group matches\n"},
		{name: "bingbot", args: []string{"test", file, "/b/x", "--crawler", "bingbot"},
			stdout: "disallowed  /b/x  line 5: Disallow: /b/\n"},
		{name: "default is lohisoftbot", args: []string{"test", file, "/all/x"},
			stdout: "disallowed  /all/x  line 11: Disallow: /all/\n"},
		{name: "profile file", args: []string{"test", "--crawler", profile, file, "/e/x"},
			stdout: "disallowed  /e/x  line 8: Disallow: /e/\n"},
		{name: "user-agent wins over crawler", args: []string{"test", "--crawler", "googlebot", "--user-agent", "bingbot", file, "/g/x"},
			stdout: "allowed  /g/x  no rule in the bingbot group matches\n"},
		{name: "check with googlebot", args: []string{"check", "--crawler", "googlebot", file, "--path", "/g/"},
			stdout: "ok: Googlebot is blocked from /g/ by " + file + " line 2: Disallow: /g/\n"},
		{name: "check with a profile file fails", args: []string{"check", "--crawler", profile, file, "--path", "/g/"}, code: fail.ExitFindings,
			stdout: "FAIL: ExampleBot is allowed /g/ in " + file + ": no rule in the ExampleBot group matches (expected blocked)\n",
			stderr: "lohibot-audit: robots check failed: " + file + " does not block ExampleBot for 1 of 1 path\n"},
		{name: "unknown crawler", args: []string{"test", "--crawler", "yandexbot", file, "/"}, code: fail.ExitUsage,
			stderr: "lohibot-audit: error: unknown crawler \"yandexbot\": not a built-in profile, and no such file or directory\nlohibot-audit: hint: use amazonbot, applebot, bingbot, chatgpt-user, claude-searchbot, claude-user, claudebot, duckduckbot, google-common, google-special, google-user-triggered, googlebot, gptbot, lohisoftbot, oai-searchbot, perplexity-user, perplexitybot, or the path of a profile file\n"},
		{name: "invalid profile", args: []string{"check", "--crawler", bad, file}, code: fail.ExitUsage,
			stderr: "lohibot-audit: error: crawler profile " + bad + ":3: "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := runRobotsCmd(t, nil, nil, "", append([]string{"robots"}, tc.args...)...)
			if got.code != tc.code {
				t.Fatalf("exit %d, want %d; stdout:\n%s\nstderr:\n%s", got.code, tc.code, got.stdout, got.stderr)
			}
			if got.stdout != tc.stdout {
				t.Errorf("stdout = %q, want %q", got.stdout, tc.stdout)
			}
			if !strings.HasPrefix(got.stderr, tc.stderr) || tc.stderr == "" && got.stderr != "" {
				t.Errorf("stderr = %q, want it to start with %q", got.stderr, tc.stderr)
			}
		})
	}
}

func TestRobotsCheckArgs(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		stderr string
	}{
		{nil, "lohibot-audit: error: robots check needs a robots.txt (ROBOTS): a file, - for stdin, or an http(s):// URL\nlohibot-audit: hint: "},
		{[]string{"robots.txt", "/private/"}, "lohibot-audit: error: robots check takes one ROBOTS, not 2 arguments\nlohibot-audit: hint: give each path to check with --path: "},
	} {
		got := runRobotsCmd(t, nil, nil, "", append([]string{"robots", "check"}, tc.args...)...)
		if got.code != fail.ExitUsage || got.stdout != "" || !strings.HasPrefix(got.stderr, tc.stderr) || strings.Count(got.stderr, "\n") != 2 {
			t.Errorf("robots check %q: exit %d, stdout %q, stderr %q; want 2, nothing, and %q with a hint", tc.args, got.code, got.stdout, got.stderr, tc.stderr)
		}
	}
}

func TestRobotsOutputEscaped(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "robots.txt")
	rule := "Disallow: /\x1b[2J\u202egnp.x"
	if err := os.WriteFile(file, []byte("User-agent: *\n"+rule+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := runRobotsCmd(t, nil, nil, "", "robots", "test", file, "/%1b[2J%E2%80%AEgnp.x")
	if got.code != fail.ExitOK {
		t.Fatalf("exit %d; stderr %s", got.code, got.stderr)
	}
	if strings.ContainsAny(got.stdout, "\x1b\u202e") {
		t.Errorf("text output carries control characters: %q", got.stdout)
	}
	if !strings.Contains(got.stdout, `line 2: Disallow: /\x1b[2J\u202egnp.x`) {
		t.Errorf("text output = %q, want the rule with escapes shown", got.stdout)
	}

	got = runRobotsCmd(t, nil, nil, "", "robots", "test", file, "/%1b[2J%E2%80%AEgnp.x", "--format", "json")
	if strings.ContainsAny(got.stdout, "\x1b\u202e") {
		t.Errorf("JSON output carries control characters: %q", got.stdout)
	}
	var res []robots.TestResult
	if err := json.Unmarshal([]byte(got.stdout), &res); err != nil {
		t.Fatalf("JSON output does not parse: %v\n%s", err, got.stdout)
	}
	if len(res) != 1 || res[0].Rule != rule || res[0].Allowed {
		t.Errorf("JSON result = %+v, want the rule exactly as written (%q), disallowed", res, rule)
	}
}

func TestRobotsCheckFile(t *testing.T) {
	blocked := robotsFixture("lohisoftbot-blocked.txt")
	partial := robotsFixture("lohisoftbot-partial.txt")
	tests := []struct {
		name   string
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{name: "blocked as expected", args: []string{blocked}, code: fail.ExitOK,
			stdout: "ok: LohiSoftBot is blocked from / by ../testdata/robots/lohisoftbot-blocked.txt line 3: Disallow: /\n"},
		{name: "blocked, expected allowed", args: []string{blocked, "--expect", "allowed"}, code: fail.ExitFindings,
			stdout: "FAIL: LohiSoftBot is blocked from / by ../testdata/robots/lohisoftbot-blocked.txt line 3: Disallow: / (expected allowed)\n",
			stderr: "lohibot-audit: robots check failed: ../testdata/robots/lohisoftbot-blocked.txt does not allow LohiSoftBot for 1 of 1 path\n"},
		{name: "root allowed, expected blocked", args: []string{partial}, code: fail.ExitFindings,
			stdout: "FAIL: LohiSoftBot is allowed / in ../testdata/robots/lohisoftbot-partial.txt: no rule in the LohiSoftBot group matches (expected blocked)\n",
			stderr: "does not block LohiSoftBot for 1 of 1 path\n"},
		{name: "several paths, one fails", args: []string{partial, "--path", "/private/x", "--path", "/private/press/y", "--path", "/drafts/z"}, code: fail.ExitFindings,
			stdout: "ok: LohiSoftBot is blocked from /private/x by ../testdata/robots/lohisoftbot-partial.txt line 5: Disallow: /private/\n" +
				"FAIL: LohiSoftBot is allowed /private/press/y by ../testdata/robots/lohisoftbot-partial.txt line 6: Allow: /private/press/ (expected blocked)\n" +
				"ok: LohiSoftBot is blocked from /drafts/z by ../testdata/robots/lohisoftbot-partial.txt line 15: Disallow: /drafts\n",
			stderr: "for 1 of 3 paths"},
		{name: "allowed as expected", args: []string{partial, "--expect", "allowed", "--path", "/blog/", "--path", "/drafts/public"}, code: fail.ExitOK},
		{name: "other user agent", args: []string{partial, "--user-agent", "Bingbot"}, code: fail.ExitOK,
			stdout: "ok: Bingbot is blocked from / by ../testdata/robots/lohisoftbot-partial.txt line 12: Disallow: /\n"},
		{name: "bad expect", args: []string{blocked, "--expect", "maybe"}, code: fail.ExitUsage,
			stderr: "lohibot-audit: error: unknown --expect \"maybe\": use blocked or allowed\n"},
		{name: "missing file", args: []string{robotsFixture("missing.txt")}, code: fail.ExitUsage,
			stderr: "lohibot-audit: error: cannot read robots.txt ../testdata/robots/missing.txt: no such file or directory\nlohibot-audit: hint: check the path; ROBOTS is a file, - for stdin, or an http(s):// URL\n"},
		{name: "directory", args: []string{robotsFixture("")}, code: fail.ExitUsage, stderr: "is a directory, read as dated versions"},
		{name: "two files", args: []string{blocked, partial}, code: fail.ExitUsage, stderr: "lohibot-audit: error:"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := runRobotsCmd(t, nil, nil, "", append([]string{"robots", "check"}, tc.args...)...)
			if got.code != tc.code {
				t.Fatalf("exit %d, want %d; stdout:\n%s\nstderr:\n%s", got.code, tc.code, got.stdout, got.stderr)
			}
			if tc.stdout != "" && got.stdout != tc.stdout {
				t.Errorf("stdout =\n%s\nwant\n%s", got.stdout, tc.stdout)
			}
			if tc.stderr != "" && !strings.Contains(got.stderr, tc.stderr) {
				t.Errorf("stderr = %q, want it to contain %q", got.stderr, tc.stderr)
			}
			if tc.code != fail.ExitUsage && strings.Contains(got.stderr, "error") {
				t.Errorf("stderr has an error line: %q", got.stderr)
			}
		})
	}
}

func TestRobotsCheckGitHubActions(t *testing.T) {
	gha := map[string]string{"GITHUB_ACTIONS": "true"}
	partial := robotsFixture("lohisoftbot-partial.txt")
	got := runRobotsCmd(t, nil, gha, "", "robots", "check", partial, "--path", "/private/press/y", "--path", "/private/x")
	if got.code != fail.ExitFindings {
		t.Fatalf("exit %d, want 1; stderr %s", got.code, got.stderr)
	}
	wantErr := "::error file=../testdata/robots/lohisoftbot-partial.txt,line=6,title=robots check::LohiSoftBot is allowed /private/press/y by ../testdata/robots/lohisoftbot-partial.txt line 6: Allow: /private/press/ (expected blocked)\n"
	if !strings.Contains(got.stdout, wantErr) {
		t.Errorf("stdout =\n%s\nwant it to contain\n%s", got.stdout, wantErr)
	}
	if n := strings.Count(got.stdout, "::error"); n != 1 {
		t.Errorf("%d error annotations, want 1 (one failing path)", n)
	}

	got = runRobotsCmd(t, nil, gha, "", "robots", "check", robotsFixture("lohisoftbot-blocked.txt"))
	if got.code != fail.ExitOK {
		t.Fatalf("exit %d, want 0", got.code)
	}
	wantNotice := "::notice file=../testdata/robots/lohisoftbot-blocked.txt,title=robots check::../testdata/robots/lohisoftbot-blocked.txt blocks LohiSoftBot for the 1 path checked\n"
	if !strings.HasSuffix(got.stdout, wantNotice) {
		t.Errorf("stdout =\n%s\nwant it to end with\n%s", got.stdout, wantNotice)
	}

	// Lint warnings become warning annotations on their line.
	got = runRobotsCmd(t, nil, gha, "", "robots", "check", robotsFixture("lenient.txt"), "--path", "/typo-one")
	if got.code != fail.ExitOK {
		t.Fatalf("exit %d, want 0; stderr %s", got.code, got.stderr)
	}
	wantWarn := "::warning file=../testdata/robots/lenient.txt,line=3,title=robots.txt::line 3: \"Dissallow\" is a misspelling of disallow; read as disallow as Google does, but a strict RFC 9309 parser ignores it\n"
	if !strings.Contains(got.stdout, wantWarn) {
		t.Errorf("stdout =\n%s\nwant it to contain\n%s", got.stdout, wantWarn)
	}
	if n := strings.Count(got.stdout, "::warning"); n != 7 {
		t.Errorf("%d warning annotations, want 7 (one per lint warning)", n)
	}

	// Without GITHUB_ACTIONS there are no workflow commands.
	got = runRobotsCmd(t, nil, map[string]string{"GITHUB_ACTIONS": "false"}, "", "robots", "check", partial)
	if strings.Contains(got.stdout, "::") {
		t.Errorf("workflow commands outside GitHub Actions: %q", got.stdout)
	}
}

func newRobotsServer(t *testing.T) *robotstest.Server {
	return robotstest.NewServer(t, robots.MaxBytes)
}

func TestRobotsCheckURL(t *testing.T) {
	srv := newRobotsServer(t)
	closedURL := robotstest.ClosedURL()

	tests := []struct {
		name   string
		url    string
		args   []string
		client *http.Client
		code   int
		stdout string // substring
		stderr string // substring
	}{
		{name: "200 blocked", url: srv.URL + "/ok/robots.txt", code: fail.ExitOK,
			stdout: "ok: LohiSoftBot is blocked from / by " + srv.URL + "/ok/robots.txt line 2: Disallow: /\n"},
		{name: "404 is allow all", url: srv.URL + "/gone/robots.txt", code: fail.ExitFindings,
			stdout: "FAIL: LohiSoftBot is allowed /: " + srv.URL + "/gone/robots.txt answered 404: RFC 9309 §2.3.1.3 says allow all (expected blocked)\n",
			stderr: "lohibot-audit: warning: " + srv.URL + "/gone/robots.txt answered 404: RFC 9309 §2.3.1.3 says allow all\n"},
		{name: "403 is allow all", url: srv.URL + "/forbidden/robots.txt", args: []string{"--expect", "allowed"}, code: fail.ExitOK,
			stdout: "answered 403: RFC 9309 §2.3.1.3 says allow all"},
		{name: "503 could not check", url: srv.URL + "/down/robots.txt", code: fail.ExitIncomplete,
			stderr: "lohibot-audit: error: could not check: robots.txt " + srv.URL + "/down/robots.txt answered 503\nlohibot-audit: hint: a gate checks the file, not the network"},
		{name: "503 with rfc is disallow all", url: srv.URL + "/down/robots.txt", args: []string{"--on-fetch-error", "rfc"}, code: fail.ExitOK,
			stdout: "ok: LohiSoftBot is blocked from /: " + srv.URL + "/down/robots.txt answered 503: RFC 9309 §2.3.1.4 says disallow all\n",
			stderr: "answered 503: RFC 9309 §2.3.1.4 says disallow all"},
		{name: "503 with rfc fails expect allowed", url: srv.URL + "/down/robots.txt", args: []string{"--expect", "allowed", "--on-fetch-error", "rfc"}, code: fail.ExitFindings,
			stdout: "says disallow all (expected allowed)"},
		{name: "unreachable could not check", url: closedURL + "/robots.txt", code: fail.ExitIncomplete,
			stderr: "lohibot-audit: error: could not check: robots.txt " + closedURL + "/robots.txt could not be fetched ("},
		{name: "unreachable with rfc is disallow all", url: closedURL + "/robots.txt", args: []string{"--on-fetch-error", "rfc"}, code: fail.ExitOK,
			stdout: "could not be fetched (", stderr: "RFC 9309 §2.3.1.4 says disallow all"},
		{name: "timeout could not check", url: srv.URL + "/slow/robots.txt", client: srv.ShortClient(50 * time.Millisecond), code: fail.ExitIncomplete,
			stderr: "could not check: robots.txt " + srv.URL + "/slow/robots.txt could not be fetched (timed out)"},
		{name: "timeout with rfc is disallow all", url: srv.URL + "/slow/robots.txt", client: srv.ShortClient(50 * time.Millisecond), args: []string{"--on-fetch-error", "rfc"}, code: fail.ExitOK,
			stdout: "could not be fetched (timed out): RFC 9309 §2.3.1.4 says disallow all"},
		{name: "bad --on-fetch-error", url: srv.URL + "/ok/robots.txt", args: []string{"--on-fetch-error", "ignore"}, code: fail.ExitUsage,
			stderr: `unknown --on-fetch-error "ignore"`},
		{name: "five redirects are followed", url: srv.URL + "/hop/5/robots.txt", code: fail.ExitOK,
			stdout: "line 2: Disallow: /"},
		{name: "six redirects are allow all", url: srv.URL + "/hop/6/robots.txt", code: fail.ExitFindings,
			stdout: "redirected more than 5 times: RFC 9309 §2.3.1.2 lets a crawler treat it as unavailable, so allow all (expected blocked)"},
		{name: "redirect without location is allow all", url: srv.URL + "/nolocation/robots.txt", code: fail.ExitFindings,
			stdout: "answered 302 without a usable redirect"},
		{name: "oversize: rule before the limit", url: srv.URL + "/big/robots.txt", args: []string{"--path", "/early"}, code: fail.ExitOK,
			stdout: "line 2: Disallow: /early", stderr: "robots.txt is larger than 500 KiB: only its first"},
		{name: "oversize: rule after the limit unseen", url: srv.URL + "/big/robots.txt", args: []string{"--path", "/late"}, code: fail.ExitFindings,
			stdout: "no rule in the * group matches (expected blocked)"},
		{name: "bad URL", url: "https://", code: fail.ExitUsage, stderr: "is not a valid http(s) URL"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := tc.client
			if client == nil {
				client = srv.Client()
			}
			got := runRobotsCmd(t, client, nil, "", append([]string{"robots", "check", tc.url}, tc.args...)...)
			if got.code != tc.code {
				t.Fatalf("exit %d, want %d; stdout:\n%s\nstderr:\n%s", got.code, tc.code, got.stdout, got.stderr)
			}
			if !strings.Contains(got.stdout, tc.stdout) {
				t.Errorf("stdout = %q, want it to contain %q", got.stdout, tc.stdout)
			}
			if !strings.Contains(got.stderr, tc.stderr) {
				t.Errorf("stderr = %q, want it to contain %q", got.stderr, tc.stderr)
			}
		})
	}
	if ua := srv.UserAgent(); ua != "lohibot-audit/"+Version {
		t.Errorf("User-Agent sent = %q, want %q", ua, "lohibot-audit/"+Version)
	}
}

func TestRobotsTestURLOtherHost(t *testing.T) {
	srv := newRobotsServer(t)
	got := runRobotsCmd(t, srv.Client(), nil, "", "robots", "test", srv.URL+"/ok/robots.txt", "https://other.example/x", srv.URL+"/y")
	if got.code != fail.ExitOK {
		t.Fatalf("exit %d; stderr %s", got.code, got.stderr)
	}
	if !strings.Contains(got.stderr, "lohibot-audit: warning: https://other.example/x is not on "+srv.URL+": that robots.txt does not apply to it") {
		t.Errorf("stderr = %q, want a warning about the other host", got.stderr)
	}
	if strings.Count(got.stderr, "warning") != 1 {
		t.Errorf("stderr = %q, want exactly one warning", got.stderr)
	}
}
