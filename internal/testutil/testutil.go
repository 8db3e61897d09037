// Package testutil is the one home of the helpers the tests of every
// package share: the real tools a test needs ([NeedTool], [Missing]),
// golden files with one -update flag ([Golden]) and files written for a
// test ([WriteFile], [TempFile]). Only tests import it.
package testutil

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// Update is the -update flag of every package's tests: the golden files
// are rewritten from what the code makes, instead of compared with it.
var Update = flag.Bool("update", false, "rewrite the golden files instead of comparing with them")

// Missing fails the test when the environment variable CI is set (CI
// installs everything the tests need), and skips it otherwise.
func Missing(t testing.TB, format string, a ...any) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf(format, a...)
	}
	t.Skipf(format+" (CI is not set: skipping)", a...)
}

// sbin are the directories a tool may be in that a user's PATH often
// lacks.
var sbin = []string{"/usr/sbin", "/sbin", "/usr/local/sbin", "/usr/bin", "/usr/local/bin"}

// NeedTool returns the path of the first of names that is installed, in
// PATH or the sbin directories; when none is, the test fails in CI and is
// skipped elsewhere, the message saying that install (such as
// ".ci/install-rule-checkers") installs it.
func NeedTool(t testing.TB, install string, names ...string) string {
	t.Helper()
	for _, name := range names {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
		for _, dir := range sbin {
			p := filepath.Join(dir, name)
			if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
				return p
			}
		}
	}
	Missing(t, "%s is not installed (%s installs it)", strings.Join(names, " or "), install)
	return ""
}

// Golden compares got with the golden file at path; with -update it
// writes got there instead. A difference names the first lines that
// differ.
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	if *Update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -run '%s' -update writes it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s (go test -run '%s' -update rewrites it after checking the change):\n%s", path, t.Name(), LineDiff(string(want), string(got)))
	}
}

// LineDiff shows the first five lines where want and got differ, each
// cut at 300 bytes.
func LineDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	shown := 0
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			fmt.Fprintf(&b, "line %d:\n  want %.300q\n  got  %.300q\n", i+1, w, g)
			if shown++; shown == 5 {
				break
			}
		}
	}
	return b.String()
}

// WriteFile writes content to path, failing the test if it cannot.
func WriteFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TempFile writes content to a file called name in a new temporary
// directory and returns its path.
func TempFile(t testing.TB, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	WriteFile(t, p, content)
	return p
}
