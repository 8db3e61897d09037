package proxy

import (
	"net/netip"
	"testing"
)

// BenchmarkLookups looks addresses up as the reader and the verifier do:
// a connecting address as log text against --trusted-proxy cloudflare
// (in, and out), and an address's proxy name among every CDN's edges.
func BenchmarkLookups(b *testing.B) {
	s, err := NewSet(nil, []string{"cloudflare"}, false)
	if err != nil {
		b.Fatal(err)
	}
	in, out := []byte("162.158.106.126"), []byte("203.0.113.10")
	edge, v6 := netip.MustParseAddr("13.32.1.2"), netip.MustParseAddr("2001:db8::1")
	b.Run("TrustsText-in", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if !s.TrustsText(in) {
				b.Fatal("not trusted")
			}
		}
	})
	b.Run("TrustsText-out", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if s.TrustsText(out) {
				b.Fatal("trusted")
			}
		}
	})
	b.Run("Proxy-edge", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, ok := s.Proxy(edge); !ok {
				b.Fatal("no proxy")
			}
		}
	})
	b.Run("Proxy-none6", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			if _, ok := s.Proxy(v6); ok {
				b.Fatal("a proxy")
			}
		}
	})
}
