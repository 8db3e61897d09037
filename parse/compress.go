package parse

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// DefaultMaxDict is the most memory a decompressor may take for its
// dictionary (xz) or window (zstd) unless Options.MaxDict says otherwise:
// 128 MiB, what the zstd program decodes without --memory, twice what
// xz -9 uses. A file that asks for more (made with xz --lzma2=dict=1536MiB
// or zstd --long=31, or forged to) is refused with a *DictError before the
// decompressor allocates anything for it. gzip's window is 32 KiB and
// bzip2's blocks at most 900 kB (a "BZh9" stream; compress/bzip2 takes
// about 4 bytes per block byte): neither can be made to take more.
const DefaultMaxDict = 128 << 20

// decompress looks at the magic bytes of the input and returns a reader of
// its text, and a function to release the decompressor (or nil). It fails
// for compressions it does not decompress, and for a damaged header.
func (r *Reader) decompress() (io.Reader, func(), error) {
	br := bufio.NewReaderSize(r.src, 64<<10)
	magic, _ := br.Peek(18)
	kind := compressionOf(magic)
	var src io.Reader
	var closer func()
	var err error
	switch kind.name {
	case "":
		return br, nil, nil
	case "gzip":
		var zr *gzip.Reader
		if zr, err = gzip.NewReader(br); err == nil {
			src = zr
		}
	case "bzip2":
		src = bzip2.NewReader(br)
	case "xz":
		var xr *xz.Reader
		r.xzCap = newXZCap(br, r.maxDict())
		if xr, err = xz.NewReader(r.xzCap); err == nil {
			src = xr
		}
	case "zstd":
		if need := zstdWindow(magic); need > r.maxDict() {
			return nil, nil, &ReadError{File: r.opts.Name, Offset: 0, Err: &DictError{Kind: "zstd", Need: need, Cap: r.maxDict()}}
		}
		var zr *zstd.Decoder
		if zr, err = zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(uint64(r.maxDict())), zstd.WithDecoderMaxMemory(uint64(r.maxDict())), zstd.WithDecoderLowmem(true)); err == nil {
			src, closer = zr, zr.Close
		}
	default:
		return nil, nil, &CompressedError{File: r.opts.Name, Kind: kind.name, Command: kind.command}
	}
	if err != nil {
		if r.xzCap != nil && r.xzCap.err != nil {
			err = r.decompressError(kind.name, r.xzCap.err)
		} else if r.counted.inputErr() == nil {
			err = fmt.Errorf("%w: %s header: %v", ErrTruncated, kind.name, err)
		}
		return nil, closer, &ReadError{File: r.opts.Name, Offset: r.counted.n.Load(), Err: err}
	}
	r.compression.Store(kind.name)
	return src, closer, nil
}

// maxDict is the cap on a decompressor's dictionary or window.
func (r *Reader) maxDict() int64 {
	if r.opts.MaxDict > 0 {
		return r.opts.MaxDict
	}
	return DefaultMaxDict
}

// decompressError says what a decompressor's error means.
func (r *Reader) decompressError(kind string, err error) error {
	if r.xzCap != nil && r.xzCap.err != nil {
		// The container walk stopped the file: its reason, not what
		// the decompressor made of the missing bytes.
		err = r.xzCap.err
	}
	var de *DictError
	switch {
	case errors.As(err, &de):
		return de
	case errors.Is(err, zstd.ErrWindowSizeExceeded) || errors.Is(err, zstd.ErrDecoderSizeExceeded):
		return &DictError{Kind: "zstd", Cap: r.maxDict()}
	}
	return fmt.Errorf("%w: %s data: %v", ErrTruncated, kind, err)
}

// zstdWindow returns the window the first zstd frame at the start of b
// declares (its content size for a single-segment frame), or 0 when b
// does not start with a frame header (or it is cut short).
func zstdWindow(b []byte) int64 {
	if len(b) < 6 || string(b[:4]) != "\x28\xb5\x2f\xfd" {
		return 0
	}
	fhd := b[4]
	if fhd&0x20 == 0 { // a window descriptor
		wd := b[5]
		log := 10 + int64(wd>>3)
		base := int64(1) << log
		return base + base/8*int64(wd&7)
	}
	// Single segment: the window is the frame content size, after the
	// dictionary ID.
	i := 5 + [4]int{0, 1, 2, 4}[fhd&3]
	switch fhd >> 6 {
	case 0:
		if i < len(b) {
			return int64(b[i])
		}
	case 1:
		if i+2 <= len(b) {
			return int64(binary.LittleEndian.Uint16(b[i:])) + 256
		}
	case 2:
		if i+4 <= len(b) {
			return int64(binary.LittleEndian.Uint32(b[i:]))
		}
	case 3:
		if i+8 <= len(b) {
			v := binary.LittleEndian.Uint64(b[i:])
			if v > 1<<62 {
				v = 1 << 62
			}
			return int64(v)
		}
	}
	return 0
}

// compression is a kind of compressed file and how to decompress one to
// standard output.
type compression struct{ name, command string }

// compressionOf tells the compression from the first bytes of an input:
// gzip, bzip2, xz and zstd are read; lz4, zip, 7z, rar, lzip, lzma and
// compress are named so that the user can decompress them. Text (a log
// line starts with an address, a host name, a '{' or a syslog header)
// never starts with one of these.
func compressionOf(b []byte) compression {
	has := func(p string) bool { return bytes.HasPrefix(b, []byte(p)) }
	switch {
	case has("\x1f\x8b"):
		return compression{"gzip", "gzip -dc"}
	case len(b) >= 4 && has("BZh") && b[3] >= '1' && b[3] <= '9':
		return compression{"bzip2", "bzip2 -dc"}
	case has("\xfd7zXZ\x00"):
		return compression{"xz", "xz -dc"}
	case has("\x28\xb5\x2f\xfd"),
		len(b) >= 4 && b[0]&0xf0 == 0x50 && b[1] == 0x2a && b[2] == 0x4d && b[3] == 0x18: // a skippable frame first (pzstd)
		return compression{"zstd", "zstd -dc"}
	case has("\x04\x22\x4d\x18"), has("\x02\x21\x4c\x18"):
		return compression{"lz4", "lz4 -dc"}
	case has("PK\x03\x04"), has("PK\x05\x06"), has("PK\x07\x08"):
		return compression{"zip", "unzip -p"}
	case has("7z\xbc\xaf\x27\x1c"):
		return compression{"7z", "7z x -so"}
	case has("Rar!\x1a\x07"):
		return compression{"rar", "unrar p -inul"}
	case has("LZIP"):
		return compression{"lzip", "lzip -dc"}
	case has("\x5d\x00\x00"):
		return compression{"lzma", "xz -dc"}
	case has("\x1f\x9d"):
		return compression{"compress (.Z)", "gzip -dc"}
	}
	return compression{}
}

// ParseByteSize reads a size in bytes with an optional binary unit: 512,
// 64KiB, 128MiB, 1GiB (K, M, G and KB, MB, GB mean the same), as --max-dict takes it.
func ParseByteSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := len(t)
	for i > 0 && (t[i-1] < '0' || t[i-1] > '9') {
		i--
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	var shift uint
	switch strings.TrimSuffix(strings.TrimSuffix(unit, "b"), "i") {
	case "":
		if unit == "b" || unit == "" {
			shift = 0
		} else {
			return 0, fmt.Errorf("unknown unit %q", unit)
		}
	case "k":
		shift = 10
	case "m":
		shift = 20
	case "g":
		shift = 30
	default:
		return 0, fmt.Errorf("unknown unit %q", unit)
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 || n > (1<<62)>>shift {
		return 0, fmt.Errorf("bad size %q", s)
	}
	return n << shift, nil
}
