package testutil

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLineDiff(t *testing.T) {
	got := LineDiff("a\nb\nc\n", "a\nB\nc\nd")
	if !strings.Contains(got, "line 2:") || !strings.Contains(got, `want "b"`) || !strings.Contains(got, `got  "B"`) || !strings.Contains(got, "line 4:") || strings.Contains(got, "line 1:") {
		t.Errorf("LineDiff = %q", got)
	}
	var many strings.Builder
	for range 10 {
		many.WriteString("x\n")
	}
	if n := strings.Count(LineDiff(many.String(), ""), "line "); n != 5 {
		t.Errorf("LineDiff names %d lines, want the first 5", n)
	}
}

// TestGoldenUpdate: with -update the file is written, and then compared
// equal; TempFile writes what it is given.
func TestGoldenUpdate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "golden", "out.txt")
	old := *Update
	*Update = true
	Golden(t, path, []byte("hello\n"))
	*Update = old
	if data, err := os.ReadFile(path); err != nil || string(data) != "hello\n" {
		t.Fatalf("golden file %q, %v", data, err)
	}
	Golden(t, path, []byte("hello\n"))
	p := TempFile(t, "x.conf", "a: b\n")
	if data, err := os.ReadFile(p); err != nil || string(data) != "a: b\n" || filepath.Base(p) != "x.conf" {
		t.Errorf("TempFile wrote %q to %s: %v", data, p, err)
	}
}
