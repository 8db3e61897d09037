package follow

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkFromStart reads a 40 MB log of combined-format lines through a
// Follower from its start.
func BenchmarkFromStart(b *testing.B) {
	line := []byte(`203.0.113.9 - - [02/Dec/2026:10:00:00 +0000] "GET /some/page?x=1 HTTP/1.1" 200 5120 "-" "Mozilla/5.0 (compatible; LohiSoftBot/1.0; +https://lohisoft.com/bot)"` + "\n")
	const n = 200_000
	p := filepath.Join(b.TempDir(), "access.log")
	if err := os.WriteFile(p, bytes.Repeat(line, n), 0o644); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(n * len(line)))
	b.ReportAllocs()
	for b.Loop() {
		ctx, cancel := context.WithCancel(context.Background())
		f, err := New(ctx, []string{p}, Options{FromStart: true})
		if err != nil {
			b.Fatal(err)
		}
		got := 0
		for got < n && f.Next() {
			got++
		}
		cancel()
		f.Close()
		if got != n {
			b.Fatalf("%d lines, want %d", got, n)
		}
	}
}
