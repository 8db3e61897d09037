package robots

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// GitPrefix starts a robots.txt source kept in git: git:REPO:PATH.
const GitPrefix = "git:"

// gitTimeout bounds each git command.
const gitTimeout = time.Minute

// SplitGit splits "git:REPO:PATH" into the repository and the path of
// robots.txt in it (at the last colon). ok is false for another value.
func SplitGit(v string) (repo, path string, ok bool) {
	rest, found := strings.CutPrefix(v, GitPrefix)
	if !found {
		return "", "", false
	}
	i := strings.LastIndexByte(rest, ':')
	if i <= 0 || i == len(rest)-1 {
		return "", "", false
	}
	return rest[:i], rest[i+1:], true
}

// LoadGit reads the versions of path in the git repository repo: each
// commit of HEAD's first-parent line that changed path, in force from its
// commit time; a commit that removed the file is a version that allows
// everything. git runs as a subprocess with nothing of the user's or the
// system's configuration, no network, no pager, no replacement objects,
// no lazy fetches and no file system monitor; what it reads from the
// repository (commit times, file contents) is checked and bounded.
func LoadGit(ctx context.Context, repo, path string) (*History, error) {
	name := GitPrefix + repo + ":" + path
	fail := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrHistory, name, fmt.Sprintf(format, a...))
	}
	if strings.ContainsAny(path, "\x00\n\r") || strings.HasPrefix(path, "-") || strings.HasPrefix(repo, "-") {
		return nil, fail("not a repository and a path in it")
	}
	path = strings.TrimPrefix(path, "/")
	log, err := runGit(ctx, repo, nil, 16<<20, "log", "--first-parent", "--format=%H %ct", "--no-textconv", "--no-ext-diff", "--end-of-options", "HEAD", "--", path)
	if err != nil {
		return nil, fail("%v", err)
	}
	type commit struct {
		hash string
		at   time.Time
	}
	var commits []commit
	for line := range strings.SplitSeq(strings.TrimSpace(string(log)), "\n") {
		if line == "" {
			continue
		}
		hash, secs, ok := strings.Cut(line, " ")
		n, err := strconv.ParseInt(secs, 10, 64)
		if !ok || err != nil || !isHash(hash) || n < 0 || n > 253402300799 { // up to 9999-12-31
			return nil, fail("git log printed %q, not a commit and its time", clip(line))
		}
		if len(commits) == MaxVersions {
			return nil, fail("more than %d commits changed %s", MaxVersions, path)
		}
		commits = append(commits, commit{hash, time.Unix(n, 0).UTC()})
	}
	if len(commits) == 0 {
		return nil, fail("no commit of HEAD holds %s", path)
	}
	// One git cat-file for every version: first the sizes, then the
	// contents of those that are files.
	var req bytes.Buffer
	for _, c := range commits {
		req.WriteString(c.hash + ":" + path + "\n")
	}
	check, err := runGit(ctx, repo, bytes.NewReader(req.Bytes()), 1<<20, "cat-file", "--batch-check=%(objecttype) %(objectsize)")
	if err != nil {
		return nil, fail("%v", err)
	}
	kinds := strings.Split(strings.TrimSuffix(string(check), "\n"), "\n")
	if len(kinds) != len(commits) {
		return nil, fail("git cat-file answered %d lines for %d versions", len(kinds), len(commits))
	}
	present := make([]bool, len(commits))
	var want bytes.Buffer
	total := int64(0)
	for i, k := range kinds {
		typ, size, _ := strings.Cut(k, " ")
		switch {
		case strings.HasSuffix(k, " missing"):
			// Removed in this commit: no robots.txt.
		case typ == "blob":
			n, err := strconv.ParseInt(size, 10, 64)
			if err != nil || n < 0 {
				return nil, fail("git cat-file answered %q", clip(k))
			}
			if total += min(n, MaxBytes); total > MaxHistoryBytes {
				return nil, fail("more than %d MiB of robots.txt in all", MaxHistoryBytes>>20)
			}
			present[i] = true
			want.WriteString(commits[i].hash + ":" + path + "\n")
		default:
			return nil, fail("%s in commit %s is a %s, not a file", path, commits[i].hash[:12], clip(typ))
		}
	}
	var blobs [][]byte
	if want.Len() > 0 {
		out, err := runGit(ctx, repo, bytes.NewReader(want.Bytes()), MaxHistoryBytes+int64(len(commits))*(MaxBytes+64), "cat-file", "--batch")
		if err != nil {
			return nil, fail("%v", err)
		}
		if blobs, err = splitBatch(out); err != nil {
			return nil, fail("%v", err)
		}
	}
	var versions []Version
	for i, c := range commits {
		v := Version{From: c.at, Name: "commit " + c.hash[:12]}
		if present[i] {
			if len(blobs) == 0 {
				return nil, fail("git cat-file answered fewer versions than asked")
			}
			data := blobs[0]
			blobs = blobs[1:]
			v.Robots = Parse(data[:min(len(data), MaxBytes)])
		} else {
			v.Name += " (robots.txt removed)"
			v.Robots = AllowAll("no robots.txt in " + v.Name)
		}
		versions = append(versions, v)
	}
	return newHistory(name, versions)
}

// splitBatch splits git cat-file --batch output into the blobs' contents.
func splitBatch(out []byte) ([][]byte, error) {
	var blobs [][]byte
	for len(out) > 0 {
		head, rest, ok := bytes.Cut(out, []byte("\n"))
		if !ok {
			return nil, fmt.Errorf("git cat-file output ends early")
		}
		f := strings.Fields(string(head))
		if len(f) != 3 || f[1] != "blob" {
			return nil, fmt.Errorf("git cat-file answered %q", clip(string(head)))
		}
		n, err := strconv.Atoi(f[2])
		if err != nil || n < 0 || n >= len(rest) || rest[n] != '\n' {
			return nil, fmt.Errorf("git cat-file answered %q, and not that many bytes", clip(string(head)))
		}
		blobs = append(blobs, rest[:n:n])
		out = rest[n+1:]
	}
	return blobs, nil
}

func isHash(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// ErrGitMissing means git is not installed.
var ErrGitMissing = errors.New("git is not installed")

// runGit runs git in repo with args, stdin, and a clean environment, and
// returns at most limit bytes of its output (more is an error).
func runGit(ctx context.Context, repo string, stdin io.Reader, limit int64, args ...string) ([]byte, error) {
	bin, err := exec.LookPath("git")
	if err != nil {
		return nil, ErrGitMissing
	}
	ctx, cancel := context.WithTimeout(ctx, gitTimeout)
	defer cancel()
	full := append([]string{
		"--no-pager", "--no-replace-objects", "-C", repo,
		"-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null",
		"-c", "log.showSignature=false", "-c", "core.useReplaceRefs=false",
	}, args...)
	cmd := exec.CommandContext(ctx, bin, full...)
	cmd.Env = gitEnv()
	cmd.Stdin = stdin
	out := &limitedBuffer{limit: limit}
	var stderr limitedBuffer
	stderr.limit = 4 << 10
	cmd.Stdout, cmd.Stderr = out, &stderr
	err = cmd.Run()
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("git %s did not finish: %w", args[0], ctx.Err())
	case out.over:
		return nil, fmt.Errorf("git %s printed more than %d bytes", args[0], limit)
	case err != nil:
		msg := strings.TrimSpace(stderr.String())
		if i := strings.IndexByte(msg, '\n'); i >= 0 {
			msg = msg[:i]
		}
		if msg == "" {
			msg = err.Error()
		}
		return nil, fmt.Errorf("git %s: %s", args[0], clip(strings.TrimPrefix(msg, "fatal: ")))
	}
	return out.Bytes(), nil
}

// gitEnv is the environment git runs in: a PATH to find its helpers, and
// settings that keep the user's and the system's configuration, prompts,
// locks and every network protocol out.
func gitEnv() []string {
	path := os.Getenv("PATH")
	if path == "" {
		path = "/usr/local/bin:/usr/bin:/bin"
	}
	return []string{
		"PATH=" + path,
		"HOME=" + os.DevNull,
		"XDG_CONFIG_HOME=" + os.DevNull,
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=" + os.DevNull,
		"GIT_ATTR_NOSYSTEM=1",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_ASKPASS=/bin/false",
		"GIT_OPTIONAL_LOCKS=0",
		"GIT_ALLOW_PROTOCOL=none",
		"GIT_NO_LAZY_FETCH=1",
		"GIT_NO_REPLACE_OBJECTS=1",
		"LC_ALL=C",
	}
}

// limitedBuffer keeps up to limit bytes and notes when more came.
type limitedBuffer struct {
	bytes.Buffer
	limit int64
	over  bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.limit - int64(b.Len()); int64(len(p)) > room {
		b.over = true
		if room > 0 {
			b.Buffer.Write(p[:room])
		}
		return 0, errors.New("output limit reached")
	}
	return b.Buffer.Write(p)
}

// clip shortens s for a message and escapes control characters.
func clip(s string) string {
	if len(s) > 120 {
		cut := 120
		for cut > 0 && s[cut]&0xc0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return strings.Map(func(r rune) rune {
		if r < ' ' || r == 0x7f {
			return '?'
		}
		return r
	}, s)
}
