package cmd

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/robots"
)

// robotsVersionsDir writes dated robots.txt versions: /drafts is
// disallowed from 2026-11-21T14:05:00Z on.
func robotsVersionsDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range map[string]string{
		"2026-11-20.txt":           "User-agent: *\nDisallow: /private\n",
		"2026-11-21T14:05:00Z.txt": "User-agent: *\nDisallow: /private\nDisallow: /drafts\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// robotsVersionsRepo makes a git repository with the same versions as
// robotsVersionsDir, committed at those times.
func robotsVersionsRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("git is not installed, and CI needs this test")
		}
		t.Skip("git is not installed")
	}
	repo := t.TempDir()
	run := func(date string, args ...string) {
		cmd := exec.Command("git", append([]string{"-C", repo}, args...)...)
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + repo, "GIT_CONFIG_NOSYSTEM=1", "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com",
			"GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@example.com", "GIT_AUTHOR_DATE=" + date, "GIT_COMMITTER_DATE=" + date}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	run("", "init", "-q")
	for _, v := range []struct{ date, content string }{
		{"2026-11-20T00:00:00Z", "User-agent: *\nDisallow: /private\n"},
		{"2026-11-21T14:05:00Z", "User-agent: *\nDisallow: /private\nDisallow: /drafts\n"},
	} {
		os.WriteFile(filepath.Join(repo, "robots.txt"), []byte(v.content), 0o644)
		run(v.date, "add", "robots.txt")
		run(v.date, "commit", "-q", "-m", "robots.txt")
	}
	return repo
}

func TestRobotsTestAt(t *testing.T) {
	dir := robotsVersionsDir(t)
	repo := robotsVersionsRepo(t)
	for _, src := range []string{dir, "git:" + repo + ":robots.txt"} {
		for _, tc := range []struct {
			at      string
			allowed bool
			line    int
			version string
		}{
			{"2026-11-21T14:04:59Z", true, 0, "in force from 2026-11-20T00:00:00Z"},
			{"2026-11-21T14:05:00Z", false, 3, "in force from 2026-11-21T14:05:00Z"},
			{"2026-12-01", false, 3, "in force from 2026-11-21T14:05:00Z"},
		} {
			got := runRobotsCmd(t, nil, nil, "", "robots", "test", "--at", tc.at, "--format", "json", src, "/drafts/a")
			if got.code != fail.ExitOK {
				t.Fatalf("%s at %s: exit %d: %s", src, tc.at, got.code, got.stderr)
			}
			var res []robots.TestResult
			if err := json.Unmarshal([]byte(got.stdout), &res); err != nil {
				t.Fatal(err)
			}
			if len(res) != 1 || res[0].Allowed != tc.allowed || res[0].Line != tc.line || !strings.Contains(res[0].Version, tc.version) {
				t.Errorf("%s at %s: %+v; want allowed %v, line %d, version %q", src, tc.at, res, tc.allowed, tc.line, tc.version)
			}
			if !strings.Contains(got.stderr, tc.version) {
				t.Errorf("%s at %s: stderr %q does not name the version", src, tc.at, got.stderr)
			}
		}
		// Before the first version there is nothing to test.
		got := runRobotsCmd(t, nil, nil, "", "robots", "test", "--at", "2026-11-19T23:00:00Z", src, "/")
		if got.code != fail.ExitUsage || !strings.Contains(got.stderr, "no version in force at 2026-11-19T23:00:00Z") {
			t.Errorf("%s before its first version: exit %d, %q", src, got.code, got.stderr)
		}
		// robots check gates on the latest version.
		got = runRobotsCmd(t, nil, nil, "", "robots", "check", src, "--path", "/drafts/x")
		if got.code != fail.ExitOK {
			t.Errorf("%s: robots check of the latest version: exit %d: %s%s", src, got.code, got.stdout, got.stderr)
		}
	}
	got := runRobotsCmd(t, nil, nil, "", "robots", "test", "git:"+t.TempDir()+":robots.txt", "/")
	if got.code != fail.ExitUsage || !strings.Contains(got.stderr, "cannot read robots.txt versions") {
		t.Errorf("not a repository: exit %d, %q", got.code, got.stderr)
	}
}
