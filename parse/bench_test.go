package parse

import (
	"bytes"
	"io"
	"net/netip"
	"os"
	"testing"

	"github.com/lohisoft/lohibot-audit/internal/addrset"
)

// BenchmarkReader reads a generated combined log (BENCH_LOG, or a small
// built-in one) and reports throughput. Compare with scripts/bench.
func BenchmarkReader(b *testing.B) {
	data := benchData(b)
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r := NewReader(bytes.NewReader(data), Options{Claims: testClaims, Name: "bench", Format: Combined})
		for r.Scan() {
		}
		if r.Err() != nil {
			b.Fatal(r.Err())
		}
	}
}

// BenchmarkReaderProfiles reads a log with the tokens of one crawler
// (LohiSoftBot, the default) and of three (LohiSoftBot, Googlebot,
// bingbot), as `logs --crawler` does. With BENCH_LOG it reads that file
// from disk on every iteration, as the command does (scripts/bench runs it
// on its generated log); else a small built-in log from memory.
func BenchmarkReaderProfiles(b *testing.B) {
	for _, bc := range []struct {
		name   string
		claims *TokenSet
	}{
		{"1", testClaims},
		{"3", NewTokenSet([][]string{{"LohiSoftBot"}, {"Googlebot"}, {"bingbot"}})},
	} {
		b.Run(bc.name, func(b *testing.B) {
			path := os.Getenv("BENCH_LOG")
			var data []byte
			size := int64(0)
			if path == "" {
				data = benchData(b)
				size = int64(len(data))
			} else if fi, err := os.Stat(path); err != nil {
				b.Fatal(err)
			} else {
				size = fi.Size()
			}
			b.SetBytes(size)
			var kept int
			for i := 0; i < b.N; i++ {
				var in io.Reader = bytes.NewReader(data)
				if path != "" {
					f, err := os.Open(path)
					if err != nil {
						b.Fatal(err)
					}
					defer f.Close()
					in = f
				}
				r := NewReader(in, Options{Name: "bench", Claims: bc.claims})
				kept = 0
				for r.Scan() {
					kept++
				}
				if r.Err() != nil {
					b.Fatal(r.Err())
				}
			}
			b.ReportMetric(float64(kept), "kept")
		})
	}
}

// BenchmarkLine parses one typical line that is not a claimed hit.
func BenchmarkLine(b *testing.B) {
	line := []byte(`203.0.113.10 - - [01/Dec/2026:06:25:01 +0100] "GET /blog/2026/11/some-post HTTP/1.1" 200 5120 "https://example.com/" "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"`)
	lp := newLineParser(Combined, testClaims, nil, "s", false)
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

// BenchmarkLineBehindProxy parses one line of nginx's main format that
// came through a Cloudflare edge and is not a claimed hit, with the
// crawler's listed addresses to look for: without --trusted-proxy (the
// edge is looked up) and with --trusted-proxy cloudflare (the client in
// X-Forwarded-For is).
func BenchmarkLineBehindProxy(b *testing.B) {
	line := []byte(`162.158.106.126 - - [01/Dec/2026:06:25:01 +0100] "GET /blog/2026/11/some-post HTTP/1.1" 200 5120 "https://example.com/" "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36" "198.51.100.7, 203.0.113.10"`)
	listed := addrset.New([]netip.Prefix{netip.MustParsePrefix("79.139.58.98/32"), netip.MustParsePrefix("79.139.58.121/32")})
	for _, bc := range []struct {
		name  string
		specs []string
	}{{"untrusted", nil}, {"trusted", []string{"cloudflare"}}} {
		b.Run(bc.name, func(b *testing.B) {
			lp := newLineParser(NginxMain, testClaims, listed, "s", false)
			if bc.specs != nil {
				lp.trust = mustSet(b, false, bc.specs...)
			}
			var rec Record
			b.SetBytes(int64(len(line)))
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, reason := lp.parse(line, &rec); reason != "" {
					b.Fatal(reason)
				}
			}
		})
	}
}
