package audit

import (
	"strings"
	"testing"
	"unsafe"
)

// TestInternerReusedMemory: the interner's memory of where a string lay
// is a hint only. The same text from the same memory, from other memory,
// and other text written over memory given before, each get the number
// of their text.
func TestInternerReusedMemory(t *testing.T) {
	var in interner
	buf := []byte("alpha.example")
	s := unsafe.String(&buf[0], len(buf))
	a := in.id(s)
	if b := in.id("beta.example"); b == a {
		t.Fatalf("two texts, one number %d", a)
	}
	if got := in.id(s); got != a {
		t.Fatalf("the same memory again: %d, want %d", got, a)
	}
	copy(buf, "gamma.example")
	g := in.id(s)
	if g == a || in.name(g) != "gamma.example" {
		t.Fatalf("other text in the same memory: %d %q (alpha is %d)", g, in.name(g), a)
	}
	copy(buf, "alpha.example")
	in.id("beta.example")
	if got := in.id(s); got != a {
		t.Fatalf("alpha written back: %d, want %d", got, a)
	}
	if got := in.id(strings.Clone("gamma.example")); got != g {
		t.Fatalf("gamma from other memory: %d, want %d", got, g)
	}
	if in.name(a) != "alpha.example" || in.count() != 3 {
		t.Fatalf("names: %q, %d strings", in.name(a), in.count())
	}
}
