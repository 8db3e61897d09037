package conduct

import (
	"testing"
	"unsafe"
)

// TestHitFitsItsSizeClass: the checks make and let go of a hit per
// request by the million, sized for the allocator's 256-byte class, with
// what orders it in its first cache line. A field added to either shows
// here rather than as a slower, larger merge.
func TestHitFitsItsSizeClass(t *testing.T) {
	if unsafe.Sizeof(uintptr(0)) != 8 {
		t.Log("sizes are checked on 64-bit platforms")
		return
	}
	if got := unsafe.Sizeof(hit{}); got > 256 {
		t.Errorf("hit is %d bytes, more than the 256 of its allocation class", got)
	}
	if got := unsafe.Sizeof(order{}); got > 64 {
		t.Errorf("order is %d bytes, more than one cache line", got)
	}
	if off := unsafe.Offsetof(hit{}.order); off != 0 {
		t.Errorf("order is at offset %d of hit, want it first", off)
	}
}
