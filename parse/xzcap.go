package parse

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
)

// xzCap walks the container of an xz file as its bytes pass to the
// decompressor, and stops the file before a block whose LZMA2 dictionary
// is larger than the cap: the decompressor allocates a block's whole
// dictionary when it starts the block, whatever the block holds, so a
// small hostile file can ask for gigabytes (github.com/ulikunitz/xz takes
// ReaderConfig.DictCap as a least size, not a limit).
//
// It follows the xz file format 1.2.1: stream header, blocks (header,
// LZMA2 chunks, padding, check), index, stream footer and stream padding,
// for any number of streams. LZMA2 chunks carry their sizes, so the walk
// skips the compressed data without decoding it. A byte that breaks the
// structure ends reading as damage: the walk never loses its place and
// lets a later block header pass unread.
type xzCap struct {
	r   io.Reader
	cap int64
	err error // the first error found: a *DictError or damage

	state    xzState
	need     int    // bytes still to collect in buf, or to skip
	buf      []byte // a stream header, block header or footer being read
	check    int    // bytes of the check after each block
	blockLen int64  // bytes of the current block so far (header and data)
	// index: how many VLIs are left, and the VLI being read
	vlis     int64
	vliBytes int
	vliVal   uint64
	indexLen int64
	first    bool // expecting the stream padding or a new stream
}

type xzState uint8

const (
	xzStreamHeader xzState = iota // collecting 12 bytes
	xzBlockStart                  // a block header size byte, or 0 for the index
	xzBlockHeader                 // collecting the rest of a block header
	xzChunk                       // an LZMA2 control byte
	xzChunkHead                   // collecting a chunk's size bytes
	xzSkip                        // skipping need bytes of chunk data
	xzBlockPad                    // block padding up to a multiple of 4
	xzCheck                       // skipping the check
	xzIndexCount                  // the index's number of records
	xzIndexRecords                // the records' VLIs
	xzIndexPad                    // index padding and CRC32
	xzFooter                      // collecting 12 bytes
	xzStreamPad                   // zero bytes, then a new stream header or the end
)

var xzMagic = []byte("\xfd7zXZ\x00")

// DictError is a compressed input that needs a larger dictionary (or
// window) than the reader may allocate: it wraps ErrDictTooLarge.
type DictError struct {
	Kind      string // "xz", "zstd"
	Need, Cap int64  // bytes; Need is 0 when the decompressor does not say
}

// ErrDictTooLarge is wrapped by a *DictError.
var ErrDictTooLarge = errors.New("compressed input needs more memory than the decompressor may take")

func (e *DictError) Error() string {
	flag := "--max-dict " + mib(e.Need)
	need := "a dictionary of " + mib(e.Need)
	if e.Kind == "zstd" {
		need = "a window of " + mib(e.Need)
	}
	if e.Need == 0 {
		flag, need = "a larger --max-dict", "a window"
	}
	return fmt.Sprintf("%s data needs %s, more than the %s the decompressor may allocate: a hostile or unusual archive; if you trust it, give %s", e.Kind, need, mib(e.Cap), flag)
}

func (e *DictError) Unwrap() error { return ErrDictTooLarge }

// mib writes a size in MiB (rounded up), or in KiB below a MiB.
func mib(n int64) string {
	if n < 1<<20 {
		return fmt.Sprintf("%dKiB", (n+1023)>>10)
	}
	return fmt.Sprintf("%dMiB", (n+(1<<20)-1)>>20)
}

func newXZCap(r io.Reader, cap int64) *xzCap {
	return &xzCap{r: r, cap: cap, state: xzStreamHeader, need: 12}
}

func (x *xzCap) Read(p []byte) (int, error) {
	if x.err != nil {
		return 0, x.err
	}
	n, err := x.r.Read(p)
	if k, werr := x.walk(p[:n]); werr != nil {
		x.err = werr
		// The bytes up to the one that broke the rule pass; the
		// decompressor never sees a whole hostile block header.
		return k, werr
	}
	return n, err
}

var errXZStructure = errors.New("not a well-formed xz container")

func xzDamage(what string) error { return fmt.Errorf("%w: %s", errXZStructure, what) }

// walk follows the container over b. It returns how many bytes of b may
// pass, and an error when the file must stop there.
func (x *xzCap) walk(b []byte) (int, error) {
	i := 0
	for i < len(b) {
		switch x.state {
		case xzStreamHeader, xzBlockHeader, xzChunkHead, xzFooter:
			k := min(x.need, len(b)-i)
			x.buf = append(x.buf, b[i:i+k]...)
			x.need -= k
			i += k
			if x.need > 0 {
				continue
			}
			if err := x.collected(); err != nil {
				return i - 1, err
			}
		case xzSkip, xzCheck:
			k := min(x.need, len(b)-i)
			x.need -= k
			i += k
			if x.state == xzSkip {
				x.blockLen += int64(k)
			}
			if x.need == 0 {
				if x.state == xzSkip {
					x.state = xzChunk
				} else {
					x.state = xzBlockStart
				}
			}
		case xzBlockStart:
			c := b[i]
			i++
			if c == 0 {
				x.state, x.vliBytes, x.vliVal, x.indexLen = xzIndexCount, 0, 0, 1
				continue
			}
			x.state, x.need = xzBlockHeader, int(c)*4+3
			x.buf = append(x.buf[:0], c)
		case xzChunk:
			c := b[i]
			i++
			x.blockLen++
			switch {
			case c == 0:
				x.state = xzBlockPad
				x.need = int((4 - x.blockLen%4) % 4)
				if x.need == 0 {
					x.state, x.need = xzCheck, x.check
					if x.need == 0 {
						x.state = xzBlockStart
					}
				}
			case c == 1 || c == 2:
				x.state, x.need, x.buf = xzChunkHead, 2, append(x.buf[:0], c)
			case c >= 0x80:
				n := 4
				if c >= 0xc0 {
					n = 5 // a properties byte follows
				}
				x.state, x.need, x.buf = xzChunkHead, n, append(x.buf[:0], c)
			default:
				return i - 1, xzDamage(fmt.Sprintf("LZMA2 control byte %#x", c))
			}
		case xzBlockPad:
			if b[i] != 0 {
				return i, xzDamage("block padding is not zero")
			}
			i++
			x.need--
			if x.need == 0 {
				x.state, x.need = xzCheck, x.check
				if x.need == 0 {
					x.state = xzBlockStart
				}
			}
		case xzIndexCount, xzIndexRecords:
			c := b[i]
			i++
			x.indexLen++
			if x.vliBytes == 9 || x.vliBytes > 0 && c == 0 {
				return i - 1, xzDamage("bad number in the index")
			}
			x.vliVal |= uint64(c&0x7f) << (7 * x.vliBytes)
			x.vliBytes++
			if c&0x80 != 0 {
				continue
			}
			v := x.vliVal
			x.vliBytes, x.vliVal = 0, 0
			if x.state == xzIndexCount {
				if v > 1<<40 {
					return i - 1, xzDamage("index too long")
				}
				x.vlis = int64(v) * 2
				x.state = xzIndexRecords
			} else {
				x.vlis--
			}
			if x.vlis == 0 {
				x.state = xzIndexPad
				x.need = int((4-x.indexLen%4)%4) + 4
			}
		case xzIndexPad:
			k := min(x.need, len(b)-i)
			x.need -= k
			i += k
			if x.need == 0 {
				x.state, x.need, x.buf = xzFooter, 12, x.buf[:0]
			}
		case xzStreamPad:
			c := b[i]
			if c == 0 {
				i++
				continue
			}
			x.state, x.need, x.buf = xzStreamHeader, 12, x.buf[:0]
		}
	}
	return len(b), nil
}

// collected handles a header, footer or chunk head that is now whole in
// buf.
func (x *xzCap) collected() error {
	b := x.buf
	switch x.state {
	case xzStreamHeader:
		if string(b[:6]) != string(xzMagic) {
			return xzDamage("no stream header")
		}
		x.check = xzCheckSize(b[7] & 0x0f)
		x.state = xzBlockStart
	case xzBlockHeader:
		if crc32.ChecksumIEEE(b[:len(b)-4]) != binary.LittleEndian.Uint32(b[len(b)-4:]) {
			return xzDamage("block header checksum")
		}
		if err := x.blockHeader(b[1 : len(b)-4]); err != nil {
			return err
		}
		x.blockLen = int64(len(b))
		x.state = xzChunk
	case xzChunkHead:
		c := b[0]
		size := int(binary.BigEndian.Uint16(b[1:3])) + 1 // an uncompressed chunk's size
		if c >= 0x80 {
			size = int(binary.BigEndian.Uint16(b[3:5])) + 1 // the packed size
		}
		x.blockLen += int64(len(b) - 1)
		x.state, x.need = xzSkip, size
	case xzFooter:
		if string(b[10:12]) != "YZ" {
			return xzDamage("no stream footer")
		}
		x.state = xzStreamPad
	}
	x.buf = x.buf[:0]
	return nil
}

// blockHeader reads a block header's flags and filters (without its size
// byte and CRC32) and checks the LZMA2 dictionary size.
func (x *xzCap) blockHeader(h []byte) error {
	if len(h) == 0 {
		return xzDamage("empty block header")
	}
	flags := h[0]
	if flags&0x3c != 0 {
		return xzDamage("reserved block flags")
	}
	i := 1
	vli := func() (uint64, bool) {
		var v uint64
		for n := 0; n < 9 && i < len(h); n++ {
			c := h[i]
			i++
			v |= uint64(c&0x7f) << (7 * n)
			if c&0x80 == 0 {
				return v, true
			}
		}
		return 0, false
	}
	if flags&0x40 != 0 {
		if _, ok := vli(); !ok {
			return xzDamage("block header")
		}
	}
	if flags&0x80 != 0 {
		if _, ok := vli(); !ok {
			return xzDamage("block header")
		}
	}
	for f := 0; f <= int(flags&3); f++ {
		id, ok1 := vli()
		size, ok2 := vli()
		if !ok1 || !ok2 || size > uint64(len(h)-i) {
			return xzDamage("block header filters")
		}
		props := h[i : i+int(size)]
		i += int(size)
		if id == 0x21 { // LZMA2
			if len(props) != 1 || props[0] > 40 {
				return xzDamage("LZMA2 properties")
			}
			if d := lzma2Dict(props[0]); d > x.cap {
				return &DictError{Kind: "xz", Need: d, Cap: x.cap}
			}
		}
	}
	return nil
}

// lzma2Dict decodes an LZMA2 dictionary size byte (0 to 40).
func lzma2Dict(b byte) int64 {
	if b == 40 {
		return 0xffffffff
	}
	return int64(2|b&1) << (b/2 + 11)
}

// xzCheckSize is the size of a block's check for a check type.
func xzCheckSize(t byte) int {
	if t == 0 {
		return 0
	}
	return 4 << ((t - 1) / 3)
}
