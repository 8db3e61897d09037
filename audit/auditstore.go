package audit

import (
	"hash/maphash"
	"strings"
	"unsafe"
)

// The compact stores an Audit keeps its addresses and names in (its hits
// are in internal/hitstore). A log with a million claimants must not cost
// a million of everything: these hold values end to end in large blocks,
// without pointers for the garbage collector to follow, and grow without
// copying what they hold.

// chunkBits sets the number of elements in one block of a chunked slice.
const chunkBits = 12

// chunked is an append-only sequence kept in blocks of 1<<chunkBits
// elements, so that growing it never holds an old and a new array at
// once, as a doubling slice does. The zero value is empty.
type chunked[T any] struct {
	blocks [][]T
	n      int
}

// push appends v and returns its index.
func (c *chunked[T]) push(v T) int {
	if c.n>>chunkBits == len(c.blocks) {
		c.blocks = append(c.blocks, make([]T, 0, 1<<chunkBits))
	}
	b := &c.blocks[c.n>>chunkBits]
	*b = append(*b, v)
	c.n++
	return c.n - 1
}

// at returns the element at index i, which must be below len.
func (c *chunked[T]) at(i int) *T { return &c.blocks[i>>chunkBits][i&(1<<chunkBits-1)] }

func (c *chunked[T]) len() int { return c.n }

// table numbers distinct values from 1; 0 names no value and reads as
// the zero value. The zero table is empty.
type table[T comparable] struct {
	ids    map[T]uint32
	values []T
}

// id returns the number of v, giving it one when it is new.
func (t *table[T]) id(v T) uint32 {
	if id, ok := t.ids[v]; ok {
		return id
	}
	if t.ids == nil {
		t.ids = map[T]uint32{}
	}
	t.values = append(t.values, v)
	id := uint32(len(t.values))
	t.ids[v] = id
	return id
}

// name returns the value numbered id.
func (t *table[T]) name(id uint32) T {
	if id == 0 {
		var zero T
		return zero
	}
	return t.values[id-1]
}

// interner numbers distinct strings from 1 (the empty string too); 0
// names no string, and reads as "". The zero value is empty.
type interner struct {
	ids   map[string]uint32
	names []string
	last  uint32 // the number last given, 0 before any
	// seen maps where a string given lay in memory to its number: a
	// snapshot's strings are decoded once and then given again and again
	// from the same memory, found here without hashing them. Only a hint:
	// the memory of a log line is reused, so the string is compared. The
	// address is kept as a number, so as not to keep alive the memory it
	// was in (a reader's buffers).
	seen *[internSeen]internSeenEntry
}

const internSeen = 512

type internSeenEntry struct {
	p  uintptr
	id uint32
}

// id returns the number of s, giving it one when it is new.
func (in *interner) id(s string) uint32 {
	// The same string as the last time is common (one log's file, one
	// crawler's user agent): no need to hash it.
	if in.last != 0 && in.names[in.last-1] == s {
		return in.last
	}
	p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	slot := p >> 4 % internSeen
	if in.seen != nil {
		if e := in.seen[slot]; e.p == p && e.id != 0 && in.names[e.id-1] == s {
			in.last = e.id
			return e.id
		}
	}
	if id, ok := in.ids[s]; ok {
		in.last = id
		in.remember(slot, p, id)
		return id
	}
	if in.ids == nil {
		in.ids = map[string]uint32{}
	}
	s = strings.Clone(s) // not the record's memory
	in.names = append(in.names, s)
	id := uint32(len(in.names))
	in.ids[s] = id
	in.last = id
	in.remember(slot, p, id)
	return id
}

// remember notes that the string at p is numbered id.
func (in *interner) remember(slot, p uintptr, id uint32) {
	if p == 0 {
		return
	}
	if in.seen == nil {
		in.seen = new([internSeen]internSeenEntry)
	}
	in.seen[slot] = internSeenEntry{p: p, id: id}
}

// name returns the string numbered id.
func (in *interner) name(id uint32) string {
	if id == 0 {
		return ""
	}
	return in.names[id-1]
}

// count returns how many strings have a number.
func (in *interner) count() int { return len(in.names) }

// addrIndex finds the entry of an address: open addressing over entry
// numbers, from a quarter to a half full, so about ten bytes an address
// where a map would take forty. The hash is seeded per index, so that
// addresses chosen by an attacker cannot all land in one place. The zero
// value is empty.
type addrIndex struct {
	slots []uint32 // 1 + entry number; 0 when free
	n     int
	seed  maphash.Seed
}

// lookup returns the entry number of k, or false with the slot where it
// would go.
func (x *addrIndex) lookup(k addrKey, entries *chunked[addrEntry]) (idx uint32, slot int, ok bool) {
	if len(x.slots) == 0 {
		return 0, -1, false
	}
	mask := len(x.slots) - 1
	for s := int(maphash.Comparable(x.seed, k)) & mask; ; s = (s + 1) & mask {
		v := x.slots[s]
		if v == 0 {
			return 0, s, false
		}
		if e := entries.at(int(v - 1)); e.ip == k.ip && (e.kind == clientV4) == k.v4 {
			return v - 1, s, true
		}
	}
}

// insert notes that k is entry idx; k must not be in the index. slot is
// where lookup found it would go, or -1.
func (x *addrIndex) insert(k addrKey, idx uint32, slot int, entries *chunked[addrEntry]) {
	if 2*(x.n+1) > len(x.slots) {
		x.grow(entries)
		slot = -1
	}
	if slot < 0 {
		_, slot, _ = x.lookup(k, entries)
	}
	x.slots[slot] = idx + 1
	x.n++
}

// grow doubles the table and puts every entry back in.
func (x *addrIndex) grow(entries *chunked[addrEntry]) {
	old := x.slots
	if len(old) == 0 {
		x.seed = maphash.MakeSeed()
	}
	x.slots = make([]uint32, max(64, 2*len(old)))
	mask := len(x.slots) - 1
	for _, v := range old {
		if v == 0 {
			continue
		}
		e := entries.at(int(v - 1))
		k := addrKey{ip: e.ip, v4: e.kind == clientV4}
		s := int(maphash.Comparable(x.seed, k)) & mask
		for x.slots[s] != 0 {
			s = (s + 1) & mask
		}
		x.slots[s] = v
	}
}
