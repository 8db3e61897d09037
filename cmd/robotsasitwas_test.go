package cmd

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/internal/fail"
)

// asItWasLog is the genuine crawler on three sites around a change of
// robots.txt at 2026-11-21T12:00:00Z that disallows /drafts (see
// robotsVersionsDir, whose second version is in force from 14:05 there:
// the log's times are put around that).
func asItWasLog(change string) string {
	lines := []struct{ site, at, path string }{
		// example.com: fetches before and after the change.
		{"example.com", "21/Nov/2026:10:00:00", "/robots.txt"},
		{"example.com", "21/Nov/2026:10:00:05", "/drafts/a"},   // before the change
		{"example.com", "21/Nov/2026:15:00:00", "/drafts/b"},   // after it, holding the old version: no violation
		{"example.com", "21/Nov/2026:15:00:05", "/private/x"},  // disallowed by both
		{"example.com", "21/Nov/2026:16:00:00", "/robots.txt"}, // fetches the new version
		{"example.com", "21/Nov/2026:16:00:05", "/drafts/c"},   // a violation of the new version
		// other.example: never fetches robots.txt.
		{"other.example", "21/Nov/2026:15:30:00", "/drafts/d"}, // within 24h of the change: not a violation
		{"other.example", "22/Nov/2026:15:30:00", "/drafts/e"}, // past it: a violation
		// third.example: robots.txt answers 404: allow all for a day.
		{"third.example", "21/Nov/2026:15:00:00", "/robots.txt"},
		{"third.example", "21/Nov/2026:15:00:05", "/private/y"},
	}
	var b strings.Builder
	for _, l := range lines {
		status := 200
		if l.site == "third.example" && l.path == "/robots.txt" {
			status = 404
		}
		fmt.Fprintf(&b, "%s:443 79.139.58.98 - - [%s +0000] \"GET %s HTTP/1.1\" %d 100 \"-\" \"LohiSoftBot/1.0 (+https://lohisoft.com/bot)\"\n", l.site, l.at, l.path, status)
	}
	return b.String()
}

func TestLogsRobotsAsItWas(t *testing.T) {
	dir := robotsVersionsDir(t)
	repo := robotsVersionsRepo(t)
	logPath := filepath.Join(t.TempDir(), "access.log")
	if err := os.WriteFile(logPath, []byte(asItWasLog("")), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, src := range []string{dir, "git:" + repo + ":robots.txt"} {
		t.Run(filepath.Base(src), func(t *testing.T) {
			code, out, stderr := runInMemory(t, "", "logs", "--offline", "--format", "json", "--robots", src, logPath)
			if code != fail.ExitOK {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var rep audit.Report
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatal(err)
			}
			type got struct{ site, path, version, detail string }
			var robots []got
			for _, v := range rep.Violations {
				if v.Kind == "robots" {
					robots = append(robots, got{v.Site, v.Path, v.RobotsVersion, v.Detail})
				}
			}
			want := []struct{ site, path, version, how string }{
				{"example.com", "/private/x", "in force from 2026-11-20T00:00:00Z", "which the crawler fetched at 2026-11-21T10:00:00Z (line 1)"},
				{"example.com", "/drafts/c", "in force from 2026-11-21T14:05:00Z", "which the crawler fetched at 2026-11-21T16:00:00Z (line 5)"},
				{"other.example", "/drafts/e", "in force from 2026-11-21T14:05:00Z", "in force at the page's time"},
			}
			if len(robots) != len(want) {
				t.Fatalf("robots violations %+v\nwant %+v", robots, want)
			}
			for i, w := range want {
				g := robots[i]
				if g.site != w.site || g.path != w.path || !strings.Contains(g.version, w.version) || !strings.Contains(g.detail, w.how) || !strings.Contains(g.detail, "line ") {
					t.Errorf("violation %d: %+v\nwant %+v", i, g, w)
				}
			}
			notes := map[string]string{}
			for _, s := range rep.Sites {
				notes[s.Site] = strings.Join(s.RobotsNotes, "; ")
			}
			for site, w := range map[string]string{
				"example.com":   "1 page disallowed by version ",
				"other.example": "1 page disallowed by version ",
				"third.example": "1 page within 24h after /robots.txt answered 4xx",
			} {
				if !strings.Contains(notes[site], w) {
					t.Errorf("%s: robots_notes %q, want %q", site, notes[site], w)
				}
			}
			if !strings.Contains(notes["example.com"], "allowed by the version the crawler fetched before them") ||
				!strings.Contains(notes["other.example"], "allowed by a version in force within the 24h before them") {
				t.Errorf("notes %q", notes)
			}
		})
	}
}

// The tables print the robots notes under the sites.
func TestLogsRobotsNotesInTables(t *testing.T) {
	dir := robotsVersionsDir(t)
	logPath := filepath.Join(t.TempDir(), "access.log")
	if err := os.WriteFile(logPath, []byte(asItWasLog("")), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, stderr := runInMemory(t, "", "logs", "--offline", "--format", "markdown", "--robots", dir, logPath)
	if code != fail.ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"\nrobots.txt notes:\n", "- third.example: 1 page within 24h after /robots.txt answered 4xx", "- other.example: 1 page disallowed by version 2026-11-21T14:05:00Z.txt"} {
		if !strings.Contains(out, want) {
			t.Errorf("markdown lacks %q:\n%s", want, out)
		}
	}
}
