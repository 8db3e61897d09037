package parse

import (
	"bufio"
	"bytes"
	"compress/bzip2"
	"compress/gzip"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
	"github.com/ulikunitz/xz"
)

// maxZstdWindow is the largest zstd window decoded, as the zstd program
// decodes by default (128 MiB): a file made with --long=31 needs more, and
// a hostile one cannot make the reader take more memory than that.
const maxZstdWindow = 128 << 20

// decompress looks at the magic bytes of the input and returns a reader of
// its text, and a function to release the decompressor (or nil). It fails
// for compressions it does not decompress, and for a damaged header.
func (r *Reader) decompress() (io.Reader, func(), error) {
	br := bufio.NewReaderSize(r.src, 64<<10)
	magic, _ := br.Peek(8)
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
		if xr, err = xz.NewReader(br); err == nil {
			src = xr
		}
	case "zstd":
		var zr *zstd.Decoder
		if zr, err = zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(maxZstdWindow), zstd.WithDecoderLowmem(true)); err == nil {
			src, closer = zr, zr.Close
		}
	default:
		return nil, nil, &CompressedError{File: r.opts.Name, Kind: kind.name, Command: kind.command}
	}
	if err != nil {
		if r.counted.inputErr() == nil {
			err = fmt.Errorf("%w: %s header: %v", ErrTruncated, kind.name, err)
		}
		return nil, closer, &ReadError{File: r.opts.Name, Offset: r.counted.n.Load(), Err: err}
	}
	r.compression.Store(kind.name)
	return src, closer, nil
}

// decompressError says what a decompressor's error means.
func decompressError(kind string, err error) error {
	if errors.Is(err, zstd.ErrWindowSizeExceeded) || errors.Is(err, zstd.ErrDecoderSizeExceeded) {
		return fmt.Errorf("zstd data needs a window larger than %d MiB (made with --long?): decompress it with zstd -dc --long=31 and pipe it in as -", maxZstdWindow>>20)
	}
	return fmt.Errorf("%w: %s data: %v", ErrTruncated, kind, err)
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
