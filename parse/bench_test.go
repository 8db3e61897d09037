package parse

import (
	"bytes"
	"os"
	"testing"
)

// BenchmarkReader reads a generated combined log (BENCH_LOG, or a small
// built-in one) and reports throughput. Compare with scripts/bench.
func BenchmarkReader(b *testing.B) {
	data := benchData(b)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := NewReader(bytes.NewReader(data), Options{Name: "bench", Format: Combined})
		for r.Scan() {
		}
		if r.Err() != nil {
			b.Fatal(r.Err())
		}
	}
}

// BenchmarkLine parses one typical line that is not a claimed hit.
func BenchmarkLine(b *testing.B) {
	line := []byte(`203.0.113.10 - - [01/Dec/2026:06:25:01 +0100] "GET /blog/2026/11/some-post HTTP/1.1" 200 5120 "https://example.com/" "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"`)
	lp := newLineParser(Combined, nil, "s", false)
	var rec Record
	b.SetBytes(int64(len(line)))
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, reason := lp.parse(line, &rec); reason != "" {
			b.Fatal(reason)
		}
	}
}

func benchData(b *testing.B) []byte {
	if p := os.Getenv("BENCH_LOG"); p != "" {
		data, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		return data
	}
	line := `203.0.113.10 - - [01/Dec/2026:06:25:01 +0100] "GET /blog/2026/11/some-post HTTP/1.1" 200 5120 "https://example.com/" "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"` + "\n"
	return bytes.Repeat([]byte(line), 100000)
}
