package robots

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParse feeds arbitrary robots.txt files and targets to the
// parser and matcher: they must never panic, every decision must carry its
// reason, and a deciding line must exist in the file.
func FuzzParse(f *testing.F) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "robots", "*.txt"))
	if err != nil {
		f.Fatal(err)
	}
	if len(files) == 0 {
		f.Fatal("no seeds in testdata/robots")
	}
	targets := []string{"/", "/private/x", "/a%2Fb?c=d#e", "https://example.com/foo/bar/%e3%83%84", "", "/robots.txt", "/*.gif$"}
	for i, name := range files {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data, targets[i%len(targets)], "LohiSoftBot/1.0")
	}
	f.Fuzz(func(t *testing.T, data []byte, target, token string) {
		r := Parse(data)
		lines := 1 + strings.Count(string(data), "\n") + strings.Count(string(data), "\r")
		for _, tok := range []string{token, testToken, "*"} {
			d := r.Decide(tok, target)
			if d.Line < 0 || d.Line > lines {
				t.Fatalf("Decide(%q, %q) line %d outside the file's %d lines", tok, target, d.Line, lines)
			}
			if d.Line > 0 && (d.Rule == "" || d.Why != "") {
				t.Fatalf("Decide(%q, %q) = %+v: a rule decided but Rule/Why are wrong", tok, target, d)
			}
			if d.Line == 0 && (d.Rule != "" || d.Why == "") {
				t.Fatalf("Decide(%q, %q) = %+v: no rule decided but no reason given", tok, target, d)
			}
			if !d.Allowed && d.Line == 0 {
				t.Fatalf("Decide(%q, %q) = %+v: disallowed without a rule", tok, target, d)
			}
		}
		// Normalising is idempotent, so a target already normalised gets
		// the same answer.
		n := targetPath(target)
		if again := normalize(n); again != n {
			t.Fatalf("normalize not idempotent: %q -> %q", n, again)
		}
		if a, b := r.Decide(testToken, target), r.Decide(testToken, n); a != b {
			t.Fatalf("Decide(%q) = %+v but Decide(%q) = %+v", target, a, n, b)
		}
		for _, w := range r.Warnings() {
			if w == "" {
				t.Fatal("empty warning")
			}
		}
	})
}

// FuzzMatch checks the linear matcher against the dynamic-programming
// reference on short patterns and paths.
func FuzzMatch(f *testing.F) {
	f.Add("/*ab*ab", "/xabab", true)
	f.Add("/a*b*c", "/aXbYc", false)
	f.Add("*", "", true)
	f.Fuzz(func(t *testing.T, pat, path string, anchored bool) {
		if len(pat) > 64 || len(path) > 256 {
			return
		}
		if got, want := match(pat, anchored, path), matchDP(pat, anchored, path); got != want {
			t.Fatalf("match(%q, %v, %q) = %v, want %v", pat, anchored, path, got, want)
		}
	})
}
