package emit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
)

// generatedRE finds the "generated <time>" marker every output carries.
var generatedRE = regexp.MustCompile(`generated (?:unknown|[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?(?:Z|[+-][0-9]{2}:[0-9]{2}))`)

// SameIgnoringGenerated reports whether two outputs are the same but for
// their "generated <time>" markers: then the rules did not change and a
// file holding old need not be replaced by cur.
func SameIgnoringGenerated(old, cur []byte) bool {
	if bytes.Equal(old, cur) {
		return true
	}
	strip := func(b []byte) []byte { return generatedRE.ReplaceAllLiteral(b, []byte("generated")) }
	return bytes.Equal(strip(old), strip(cur))
}

// WriteFileAtomic is WriteFileAtomicContext without cancellation.
func WriteFileAtomic(path string, data []byte, same func(old, cur []byte) bool) (changed bool, err error) {
	return WriteFileAtomicContext(context.Background(), path, data, same)
}

// WriteFileAtomicContext writes data to path unless the file there already
// holds the same content as same judges it (nil same means byte for
// byte): then it leaves the file untouched and returns changed false.
// Otherwise it writes a temporary file in the same directory, syncs it,
// gives it the old file's permission bits (0644 for a new file) and
// renames it over path, so a reader sees the old file or the new one,
// never a part. A symbolic link at path is followed: the file it points to
// is replaced. A device or named pipe at path (/dev/stdout) is written
// directly. On error, or when ctx is cancelled before the rename, the
// temporary file is removed and path is as it was; the error wraps the
// *fs.PathError that says what failed.
func WriteFileAtomicContext(ctx context.Context, path string, data []byte, same func(old, cur []byte) bool) (changed bool, err error) {
	if path == "" {
		return false, errors.New("write rules: no file name")
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	target := path
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		target = resolved
	}
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(target); err == nil {
		switch {
		case fi.IsDir():
			return false, fmt.Errorf("write rules to %s: %w", path, &fs.PathError{Op: "write", Path: path, Err: syscall.EISDIR})
		case !fi.Mode().IsRegular():
			if err := writeSpecial(ctx, target, data); err != nil {
				return false, fmt.Errorf("write rules to %s: %w", path, err)
			}
			return true, nil
		}
		mode = fi.Mode().Perm()
		old, err := os.ReadFile(target)
		if err != nil {
			return false, fmt.Errorf("write rules: read the current %s: %w", path, err)
		}
		if same == nil {
			same = bytes.Equal
		}
		if same(old, data) {
			return false, nil
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("write rules to %s: %w", path, err)
	}

	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, tempPrefix(base)+"*")
	if err != nil {
		return false, fmt.Errorf("write rules to %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	// step runs one step of the write unless ctx was cancelled.
	step := func(f func() error) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		return f()
	}
	if err = step(func() error { _, err := tmp.Write(data); return err }); err != nil {
		return false, fmt.Errorf("write rules to %s: %w", path, err)
	}
	if err = step(func() error { return tmp.Chmod(mode) }); err != nil {
		return false, fmt.Errorf("write rules to %s: %w", path, err)
	}
	if err = step(tmp.Sync); err != nil {
		return false, fmt.Errorf("write rules to %s: %w", path, err)
	}
	if err = step(tmp.Close); err != nil {
		return false, fmt.Errorf("write rules to %s: %w", path, err)
	}
	if err = step(func() error { return os.Rename(tmp.Name(), target) }); err != nil {
		return false, fmt.Errorf("write rules to %s: %w", path, err)
	}
	if d, derr := os.Open(dir); derr == nil {
		d.Sync() // make the rename durable; not all file systems support it
		d.Close()
	}
	return true, nil
}

// tempPrefix is the name of this process's temporary files for a file
// named base, up to the random part.
func tempPrefix(base string) string {
	return "." + base + ".tmp-" + strconv.Itoa(os.Getpid()) + "-"
}

// RemoveTempFiles removes the temporary files this process's
// WriteFileAtomicContext left for path: for a program that must end at
// once while a write is under way (after it, a rename cannot be half
// done, so path is the old file or the new one).
func RemoveTempFiles(path string) {
	target := path
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		target = resolved
	}
	dir, base := filepath.Split(target)
	if dir == "" {
		dir = "."
	}
	matches, _ := filepath.Glob(filepath.Join(dir, globEscape(tempPrefix(base))+"*"))
	for _, m := range matches {
		os.Remove(m)
	}
}

// globEscape escapes the characters filepath.Match treats specially.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// writeSpecial writes data to a device or named pipe. Opening a pipe waits
// for a reader, so it is done aside and given up when ctx is cancelled.
func writeSpecial(ctx context.Context, path string, data []byte) error {
	type opened struct {
		f   *os.File
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		ch <- opened{f, err}
	}()
	var f *os.File
	select {
	case o := <-ch:
		if o.err != nil {
			return o.err
		}
		f = o.f
	case <-ctx.Done():
		go func() {
			if o := <-ch; o.f != nil {
				o.f.Close()
			}
		}()
		return ctx.Err()
	}
	_, err := f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
