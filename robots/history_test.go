package robots

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseVersionName(t *testing.T) {
	for _, tc := range []struct {
		name string
		want string
	}{
		{"2026-11-20.txt", "2026-11-20T00:00:00Z"},
		{"2026-11-20T14:05:00Z.txt", "2026-11-20T14:05:00Z"},
		{"2026-11-20T16:05:00+02:00.txt", "2026-11-20T14:05:00Z"},
		{"2026-11-20", ""},
		{"robots.txt", ""},
		{"2026-13-01.txt", ""},
		{"2026-11-20 14:05.txt", ""},
	} {
		got, ok := ParseVersionName(tc.name)
		if tc.want == "" {
			if ok {
				t.Errorf("%q read as %v", tc.name, got)
			}
			continue
		}
		if !ok || got.Format(time.RFC3339) != tc.want {
			t.Errorf("%q = %v, %v; want %s", tc.name, got, ok, tc.want)
		}
	}
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestLoadDir(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"2026-11-20.txt":           "User-agent: *\nDisallow: /private\n",
		"2026-11-21T14:05:00Z.txt": "User-agent: *\nDisallow: /private\nDisallow: /drafts\n",
		"README.md":                "not a version",
		".draft.txt":               "not a version either",
	})
	h, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.Versions) != 2 || h.Versions[0].Name != "2026-11-20.txt" || h.Versions[1].Name != "2026-11-21T14:05:00Z.txt" {
		t.Fatalf("versions %+v", h.Versions)
	}
	for _, tc := range []struct {
		at   string
		want int
	}{
		{"2026-11-19T23:59:59Z", -1},
		{"2026-11-20T00:00:00Z", 0},
		{"2026-11-21T14:04:59Z", 0},
		{"2026-11-21T14:05:00Z", 1},
		{"2027-01-01T00:00:00Z", 1},
	} {
		at, _ := time.Parse(time.RFC3339, tc.at)
		if got := h.At(at); got != tc.want {
			t.Errorf("At(%s) = %d, want %d", tc.at, got, tc.want)
		}
	}
	if d := h.Versions[0].Robots.Decide("LohiSoftBot", "/drafts/x"); !d.Allowed {
		t.Errorf("the first version disallows /drafts: %+v", d)
	}
	if d := h.Latest().Robots.Decide("LohiSoftBot", "/drafts/x"); d.Allowed || d.Line != 3 {
		t.Errorf("the latest version: %+v", d)
	}
	if got := h.Versions[1].Label(); got != "2026-11-21T14:05:00Z.txt, in force from 2026-11-21T14:05:00Z" {
		t.Errorf("label %q", got)
	}

	for name, files := range map[string]map[string]string{
		"misnamed":  {"2026-11-20.txt": "", "robots.txt": ""},
		"same time": {"2026-11-20.txt": "", "2026-11-20T00:00:00Z.txt": ""},
		"empty":     {"notes.md": ""},
	} {
		d := t.TempDir()
		writeFiles(t, d, files)
		if _, err := LoadDir(d); !errors.Is(err, ErrHistory) {
			t.Errorf("%s: %v, want ErrHistory", name, err)
		}
	}
	if _, err := LoadDir(filepath.Join(dir, "missing")); !errors.Is(err, ErrHistory) {
		t.Errorf("missing dir: %v", err)
	}
}

// needGit returns git's path; without it the test fails in CI, where git
// is installed, and is skipped elsewhere.
func needGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("git is not installed, and CI needs this test")
		}
		t.Skip("git is not installed")
	}
}

// git runs git in dir for the test, with the committer's date set.
func git(t *testing.T, dir, date string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	cmd.Env = append(gitEnv(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@example.com", "GIT_COMMITTER_NAME=t",
		"GIT_COMMITTER_EMAIL=t@example.com", "GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

func TestLoadGit(t *testing.T) {
	needGit(t)
	repo := t.TempDir()
	git(t, repo, "", "init", "-q", "-b", "main")
	path := filepath.Join(repo, "public", "robots.txt")
	commit := func(date, content string) {
		if content == "" {
			git(t, repo, date, "rm", "-q", "public/robots.txt")
		} else {
			os.MkdirAll(filepath.Dir(path), 0o755)
			if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			git(t, repo, date, "add", "-A")
		}
		git(t, repo, date, "commit", "-q", "-m", "change", "--allow-empty")
	}
	commit("2026-11-20T10:00:00Z", "User-agent: *\nDisallow: /private\n")
	commit("2026-11-21T14:05:00Z", "User-agent: *\nDisallow: /private\nDisallow: /drafts\n")
	os.WriteFile(filepath.Join(repo, "other.txt"), []byte("x"), 0o644)
	git(t, repo, "2026-11-22T00:00:00Z", "add", "-A")
	git(t, repo, "2026-11-22T00:00:00Z", "commit", "-q", "-m", "unrelated")
	commit("2026-11-23T09:00:00Z", "")
	// Hostile repository configuration: a "gpg" that signs the last
	// commit and, asked to verify a signature (log.showSignature), runs
	// something; the same for a file system monitor and a pager. It reads
	// all git writes to it first: a gpg that exits before git has written
	// the commit makes git fail with a broken pipe on a busy machine.
	pwned := filepath.Join(t.TempDir(), "pwned")
	script := filepath.Join(t.TempDir(), "evil.sh")
	os.WriteFile(script, []byte("#!/bin/sh\ncat >/dev/null\ncase \"$*\" in *--verify*) touch "+pwned+";; esac\necho '[GNUPG:] SIG_CREATED ' >&2\necho '-----BEGIN PGP SIGNATURE-----'\necho x\necho '-----END PGP SIGNATURE-----'\n"), 0o755)
	for _, kv := range [][2]string{{"core.fsmonitor", script}, {"log.showSignature", "true"}, {"gpg.program", script}, {"core.pager", script}, {"commit.gpgsign", "true"}, {"user.signingkey", "x"}} {
		git(t, repo, "", "config", kv[0], kv[1])
	}
	commit("2026-11-24T09:00:00Z", strings.Repeat("# padding\n", 1000)+"User-agent: LohiSoftBot\nDisallow: /\n")
	// Plain git runs it: the configuration is hostile indeed.
	if out, err := exec.Command("git", "-C", repo, "log", "-1").CombinedOutput(); err != nil {
		t.Fatalf("git log: %v\n%s", err, out)
	}
	if _, err := os.Stat(pwned); err != nil {
		t.Fatal("the hostile configuration does not run its command with plain git log; the test proves nothing")
	}
	os.Remove(pwned)

	h, err := LoadGit(context.Background(), repo, "/public/robots.txt")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Fatal("a command of the repository's configuration ran")
	}
	want := []string{"2026-11-20T10:00:00Z", "2026-11-21T14:05:00Z", "2026-11-23T09:00:00Z", "2026-11-24T09:00:00Z"}
	if len(h.Versions) != len(want) {
		t.Fatalf("%d versions: %+v", len(h.Versions), h.Versions)
	}
	for i, w := range want {
		if got := h.Versions[i].From.Format(time.RFC3339); got != w || !strings.HasPrefix(h.Versions[i].Name, "commit ") {
			t.Errorf("version %d: %s %s, want from %s", i, h.Versions[i].Name, got, w)
		}
	}
	if d := h.Versions[1].Robots.Decide("LohiSoftBot", "/drafts/a"); d.Allowed || d.Line != 3 {
		t.Errorf("second version: %+v", d)
	}
	if v := h.Versions[2]; !strings.Contains(v.Name, "removed") || !v.Robots.Decide("LohiSoftBot", "/private/x").Allowed {
		t.Errorf("the removal: %s allows /private/x: %v", v.Name, v.Robots.Decide("LohiSoftBot", "/private/x").Allowed)
	}
	if d := h.Versions[3].Robots.Decide("LohiSoftBot", "/"); d.Allowed || d.Line != 1002 {
		t.Errorf("fourth version (over 4 KiB): %+v", d)
	}

	for name, args := range map[string][2]string{
		"not a repo":   {t.TempDir(), "robots.txt"},
		"no such file": {repo, "nothere.txt"},
		"option":       {"--upload-pack=x", "robots.txt"},
	} {
		if _, err := LoadGit(context.Background(), args[0], args[1]); !errors.Is(err, ErrHistory) {
			t.Errorf("%s: %v, want ErrHistory", name, err)
		}
	}
}

func TestSplitGit(t *testing.T) {
	for _, tc := range []struct{ in, repo, path string }{
		{"git:/srv/site:public/robots.txt", "/srv/site", "public/robots.txt"},
		{"git:C:\\site:robots.txt", "C:\\site", "robots.txt"},
		{"git:site:", "", ""},
		{"git::robots.txt", "", ""},
		{"/srv/site", "", ""},
	} {
		repo, path, ok := SplitGit(tc.in)
		if repo != tc.repo || path != tc.path || ok != (tc.repo != "") {
			t.Errorf("SplitGit(%q) = %q, %q, %v", tc.in, repo, path, ok)
		}
	}
}

// FuzzSplitBatch reads any bytes as git cat-file --batch output: it never
// panics, and what it returns is exactly the blobs a well-formed output
// carries, each within the output.
func FuzzSplitBatch(f *testing.F) {
	f.Add([]byte("0123456789abcdef0123456789abcdef01234567 blob 3\nabc\n"))
	f.Add([]byte("x blob 99999999999\n\n"))
	f.Add([]byte("x blob 0\n\nx blob 2\nab"))
	f.Fuzz(func(t *testing.T, out []byte) {
		blobs, err := splitBatch(out)
		if err != nil {
			return
		}
		total := 0
		for _, b := range blobs {
			total += len(b)
		}
		if total > len(out) {
			t.Fatalf("%d bytes of blobs from %d bytes", total, len(out))
		}
	})
}

func FuzzParseVersionName(f *testing.F) {
	for _, s := range []string{"2026-11-20.txt", "2026-11-20T14:05:00Z.txt", "2026-11-20T16:05:00+02:00.txt", "x.txt"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		at, ok := ParseVersionName(name)
		if ok && (at.Location() != time.UTC || !strings.HasSuffix(name, ".txt")) {
			t.Fatalf("%q read as %v", name, at)
		}
	})
}
