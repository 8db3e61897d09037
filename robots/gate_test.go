package robots

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/fail"
)

func TestGateTestAndCheck(t *testing.T) {
	src := ParseSource("robots.txt", "robots.txt", []byte("User-agent: *\nDisallow: /private/\n"))
	res := src.Robots.Test("ExampleBot", []string{"/private/x", "/blog/"}, "")
	if len(res) != 2 || res[0].Allowed || res[0].Line != 2 || res[0].Rule != "Disallow: /private/" || !res[1].Allowed {
		t.Fatalf("Test = %+v", res)
	}
	if res[0].Reason() == "" {
		t.Error("a deciding rule gives no reason")
	}
	g := src.Check("ExampleBot", []string{"/private/", "/"}, false)
	checks := g.Checks
	if g.Failed != 1 || len(checks) != 2 || !checks[0].OK || checks[1].OK || !strings.HasSuffix(checks[1].Message, " (expected blocked)") || strings.Contains(checks[0].Message, "expected") {
		t.Errorf("Check = %+v, %d failed", checks, g.Failed)
	}
	if got, want := g.Failure(), "robots.txt does not block ExampleBot for 1 of 2 paths"; got != want {
		t.Errorf("Failure = %q, want %q", got, want)
	}
	if got, want := g.Annotation(checks[1]), "::error file=robots.txt,title=robots check::"+checks[1].Message; got != want {
		t.Errorf("Annotation = %q, want %q (no line: no rule decided)", got, want)
	}
	if got, want := g.Annotation(checks[0]), "::error file=robots.txt,line=2,title=robots check::"; !strings.HasPrefix(got, want) {
		t.Errorf("Annotation = %q, want it to start %q", got, want)
	}

	// No path checks /; allowed is wanted.
	g = src.Check("ExampleBot", nil, true)
	if len(g.Checks) != 1 || g.Checks[0].Path != "/" || g.Failed != 0 || strings.Contains(g.Checks[0].Message, "expected") {
		t.Errorf("Check of no path = %+v", g)
	}
	if got, want := g.Notice(), "::notice file=robots.txt,title=robots check::robots.txt allows ExampleBot for the 1 path checked"; got != want {
		t.Errorf("Notice = %q, want %q", got, want)
	}
	g = src.Check("ExampleBot", []string{"/private/a", "/private/b"}, false)
	if got, want := g.Notice(), "::notice file=robots.txt,title=robots check::robots.txt blocks ExampleBot for all 2 paths checked"; got != want {
		t.Errorf("Notice = %q, want %q", got, want)
	}
	g = src.Check("ExampleBot", []string{"/private/a"}, true)
	if got, want := g.Failure(), "robots.txt does not allow ExampleBot for 1 of 1 path"; got != want || !strings.HasSuffix(g.Checks[0].Message, " (expected allowed)") {
		t.Errorf("Failure = %q, want %q; %+v", got, want, g.Checks)
	}
}

func TestParseExpect(t *testing.T) {
	if w, err := ParseExpect("blocked"); w || err != nil {
		t.Errorf("blocked: %v, %v", w, err)
	}
	if w, err := ParseExpect("allowed"); !w || err != nil {
		t.Errorf("allowed: %v, %v", w, err)
	}
	if _, err := ParseExpect("Blocked"); err == nil || err.Error() != `unknown --expect "Blocked": use blocked or allowed` || fail.KindOf(err) != fail.Usage {
		t.Errorf("Blocked: %v", err)
	}
}

// TestWarningAnnotations: each parser warning is a GitHub Actions
// warning, on its line when it names one.
func TestWarningAnnotations(t *testing.T) {
	src := ParseSource("site/robots.txt", "site/robots.txt", []byte("User-agent: *\nDissallow: /x/\nCrawl-delay: 5\n"))
	got := src.WarningAnnotations()
	if len(got) == 0 || len(got) != len(src.Robots.Warnings()) {
		t.Fatalf("annotations %q for warnings %q", got, src.Robots.Warnings())
	}
	if !strings.HasPrefix(got[0], "::warning file=site/robots.txt,line=2,title=robots.txt::line 2: ") {
		t.Errorf("first annotation %q", got[0])
	}
	if clean := ParseSource("r", "r", []byte("User-agent: *\nDisallow: /\n")); clean.WarningAnnotations() != nil {
		t.Errorf("a clean file has annotations: %q", clean.WarningAnnotations())
	}
}

// datedSource is a directory of two dated versions: /a/ disallowed from
// 20 November 2026, /b/ from 22 November.
func datedSource(t *testing.T) *Source {
	t.Helper()
	dir := t.TempDir()
	for name, text := range map[string]string{"2026-11-20.txt": "User-agent: *\nDisallow: /a/\n", "2026-11-22.txt": "User-agent: *\nDisallow: /b/\n"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return HistorySource(h)
}

func TestInForce(t *testing.T) {
	single := ParseSource("robots.txt", "robots.txt", []byte("User-agent: *\nDisallow: /\n"))
	if rb, v, err := single.InForce(time.Time{}); rb != single.Robots || v != nil || err != nil {
		t.Errorf("a single robots.txt: %v, %v, %v", rb, v, err)
	}
	src := datedSource(t)
	rb, v, err := src.InForce(time.Date(2026, 11, 21, 0, 0, 0, 0, time.UTC))
	if err != nil || v == nil || v.Name != "2026-11-20.txt" || rb.Decide("X", "/a/").Allowed {
		t.Errorf("on 21 November: %v, %v", v, err)
	}
	_, _, err = src.InForce(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC))
	if fail.KindOf(err) != fail.Usage || !strings.Contains(err.Error(), "has no version in force at 2026-11-01T00:00:00Z") || !strings.Contains(fail.HintOf(err), "2026-11-20T00:00:00Z") {
		t.Errorf("before the first version: %v (hint %q)", err, fail.HintOf(err))
	}
}

func TestDecidingAt(t *testing.T) {
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	single := ParseSource("robots.txt", "robots.txt", []byte("User-agent: *\nDisallow: /\n"))
	if d, err := single.DecidingAt(time.Time{}, false, now); err != nil || d.Robots != single.Robots || d.Version != "" || d.Note != "" || d.Warning != "" {
		t.Errorf("a single robots.txt, no --at: %+v, %v", d, err)
	}
	if d, err := single.DecidingAt(now.Add(-time.Hour), true, now); err != nil || d.Robots != single.Robots || d.Warning != "robots.txt robots.txt is a single version: --at changes nothing" {
		t.Errorf("a single robots.txt given --at: %+v, %v", d, err)
	}
	src := datedSource(t)
	d, err := src.DecidingAt(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC), true, now)
	if err != nil || d.Warning != "" || d.Robots.Decide("X", "/a/").Allowed || d.Version == "" ||
		d.Note != "robots.txt "+src.Name+": "+d.Version+" decides at 2026-11-21T12:00:00Z" {
		t.Errorf("dated versions at 21 November: %+v, %v", d, err)
	}
	if d, err := src.DecidingAt(time.Time{}, false, now); err != nil || d.Robots.Decide("X", "/a/").Allowed == false || !strings.HasSuffix(d.Note, " decides at 2026-12-01T00:00:00Z") {
		t.Errorf("dated versions, no --at: now decides: %+v, %v", d, err)
	}
	if _, err := src.DecidingAt(time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), true, now); fail.KindOf(err) != fail.Usage {
		t.Errorf("before the first version: %v, want a usage error", err)
	}
}

func TestGateWrite(t *testing.T) {
	src := ParseSource("robots.txt", "robots.txt", []byte("User-agent: *\nDissallow: /private/\n"))
	for _, tc := range []struct {
		name  string
		paths []string
		gha   bool
		want  string
	}{
		{"one fails", []string{"/private/x", "/blog/"}, false,
			"ok: ExampleBot is blocked from /private/x by robots.txt line 2: Dissallow: /private/\n" +
				"FAIL: ExampleBot is allowed /blog/ in robots.txt: no rule in the * group matches (expected blocked)\n"},
		{"one fails, in GitHub Actions", []string{"/blog/"}, true,
			"::warning file=robots.txt,line=2,title=robots.txt::line 2: \"Dissallow\" is a misspelling of disallow; read as disallow as Google does, but a strict RFC 9309 parser ignores it\n" +
				"FAIL: ExampleBot is allowed /blog/ in robots.txt: no rule in the * group matches (expected blocked)\n" +
				"::error file=robots.txt,title=robots check::ExampleBot is allowed /blog/ in robots.txt: no rule in the * group matches (expected blocked)\n"},
		{"passes, in GitHub Actions", []string{"/private/\x1b"}, true,
			"::warning file=robots.txt,line=2,title=robots.txt::line 2: \"Dissallow\" is a misspelling of disallow; read as disallow as Google does, but a strict RFC 9309 parser ignores it\n" +
				"ok: ExampleBot is blocked from /private/\\x1b by robots.txt line 2: Dissallow: /private/\n" +
				"::notice file=robots.txt,title=robots check::robots.txt blocks ExampleBot for the 1 path checked\n"},
	} {
		var b strings.Builder
		if err := src.Check("ExampleBot", tc.paths, false).Write(&b, tc.gha); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if b.String() != tc.want {
			t.Errorf("%s:\n%s\nwant\n%s", tc.name, b.String(), tc.want)
		}
	}
	if err := src.Check("ExampleBot", nil, false).Write(failingWriter{}, false); err == nil {
		t.Error("a write that fails: no error")
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

func TestGateWarnings(t *testing.T) {
	src := ParseSource("https://example.com/robots.txt", "", []byte("User-agent: *\nDissallow: /x/\n"))
	got := src.Check("ExampleBot", []string{"/x/", "https://other.example/x/", "https://example.com/y"}, false).Warnings()
	if len(got) != 2 || !strings.HasPrefix(got[0], "robots.txt https://example.com/robots.txt: line 2: ") ||
		got[1] != "https://other.example/x/ is not on https://example.com: that robots.txt does not apply to it (RFC 9309 §2.3)" {
		t.Errorf("Warnings = %q, want the parser's, then the path on another host", got)
	}
}
