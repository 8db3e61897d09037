// Package atomicfile replaces a file whole: a reader sees the old content
// or the new, never a part, and a failed write leaves the old file as it
// was. The rules emit writes and the caches verify keeps are written
// through it.
package atomicfile

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// Write writes data to path unless same reports that the file there
// already holds the same content (nil same: always write); then it leaves
// the file untouched and returns changed false. Otherwise it writes a
// temporary file in the same directory, gives it the old file's
// permission bits (mode for a new file), syncs it and renames it over
// path, then syncs the directory. A symbolic link at path is followed: the
// file it points to is replaced. A device or named pipe at path
// (/dev/stdout) is written directly. On error, or when ctx is cancelled
// before the rename, the temporary file is removed and path is as it was.
// The error is the one of the step that failed (an *fs.PathError, or
// ctx's error), without more words: the caller says what it was writing.
func Write(ctx context.Context, path string, data []byte, mode fs.FileMode, same func(old, cur []byte) bool) (changed bool, err error) {
	if path == "" {
		return false, errors.New("no file name")
	}
	if err := ctx.Err(); err != nil {
		return false, err
	}
	target := resolve(path)
	if fi, err := os.Stat(target); err == nil {
		switch {
		case fi.IsDir():
			return false, &fs.PathError{Op: "write", Path: path, Err: syscall.EISDIR}
		case !fi.Mode().IsRegular():
			if err := writeSpecial(ctx, target, data); err != nil {
				return false, err
			}
			return true, nil
		}
		mode = fi.Mode().Perm()
		if same != nil {
			old, err := os.ReadFile(target)
			if err != nil {
				return false, err
			}
			if same(old, data) {
				return false, nil
			}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}

	dir, base := split(target)
	tmp, err := os.CreateTemp(dir, tempPrefix(base)+"*")
	if err != nil {
		return false, err
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
		return false, err
	}
	if err = step(func() error { return tmp.Chmod(mode) }); err != nil {
		return false, err
	}
	if err = step(tmp.Sync); err != nil {
		return false, err
	}
	if err = step(tmp.Close); err != nil {
		return false, err
	}
	if err = step(func() error { return os.Rename(tmp.Name(), target) }); err != nil {
		return false, err
	}
	if d, derr := os.Open(dir); derr == nil {
		d.Sync() // make the rename durable; not all file systems support it
		d.Close()
	}
	return true, nil
}

// RemoveTemp removes the temporary files this process's Write left for
// path: for a program that must end at once while a write is under way
// (after it, a rename cannot be half done, so path is the old file or the
// new one).
func RemoveTemp(path string) {
	dir, base := split(resolve(path))
	matches, _ := filepath.Glob(filepath.Join(dir, globEscape(tempPrefix(base))+"*"))
	for _, m := range matches {
		os.Remove(m)
	}
}

// resolve follows symbolic links at path, if it can.
func resolve(path string) string {
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		return resolved
	}
	return path
}

// split is filepath.Split with "." for a name without a directory.
func split(path string) (dir, base string) {
	dir, base = filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	return dir, base
}

// tempPrefix is the name of this process's temporary files for a file
// named base, up to the random part.
func tempPrefix(base string) string {
	return "." + base + ".tmp-" + strconv.Itoa(os.Getpid()) + "-"
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

// Pending is a file being written to replace path whole, for content
// too large to hold in memory: written as it is made into a temporary
// file in path's directory, it takes path's place only on Commit. Abort
// (or a run that ends before Commit, see RemoveTemp) leaves path as it
// was.
type Pending struct {
	tmp    *os.File
	target string
	dir    string
	mode   fs.FileMode
	done   bool
}

// Create begins replacing path (symbolic links followed) by a file of
// mode (the old file's permission bits when there is one). A directory
// at path is an error, as is any path that is not a regular file or
// absent: a pending file is renamed into place.
func Create(path string, mode fs.FileMode) (*Pending, error) {
	if path == "" {
		return nil, errors.New("no file name")
	}
	target := resolve(path)
	if fi, err := os.Stat(target); err == nil {
		switch {
		case fi.IsDir():
			return nil, &fs.PathError{Op: "write", Path: path, Err: syscall.EISDIR}
		case !fi.Mode().IsRegular():
			return nil, &fs.PathError{Op: "write", Path: path, Err: errors.New("not a regular file")}
		}
		mode = fi.Mode().Perm()
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	dir, base := split(target)
	tmp, err := os.CreateTemp(dir, tempPrefix(base)+"*")
	if err != nil {
		return nil, err
	}
	return &Pending{tmp: tmp, target: target, dir: dir, mode: mode}, nil
}

// Write writes to the temporary file.
func (p *Pending) Write(b []byte) (int, error) { return p.tmp.Write(b) }

// Commit makes the file written take path's place: it syncs it, gives it
// its mode and renames it over path, then syncs the directory. On error,
// or when ctx is cancelled first, the temporary file is removed and path
// is as it was.
func (p *Pending) Commit(ctx context.Context) (err error) {
	if p.done {
		return errors.New("already committed or aborted")
	}
	p.done = true
	defer func() {
		if err != nil {
			p.tmp.Close()
			os.Remove(p.tmp.Name())
		}
	}()
	for _, step := range []func() error{
		func() error { return p.tmp.Chmod(p.mode) },
		p.tmp.Sync,
		p.tmp.Close,
		func() error { return os.Rename(p.tmp.Name(), p.target) },
	} {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := step(); err != nil {
			return err
		}
	}
	if d, derr := os.Open(p.dir); derr == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// Abort removes the temporary file: path is as it was. It does nothing
// after Commit.
func (p *Pending) Abort() {
	if p.done {
		return
	}
	p.done = true
	p.tmp.Close()
	os.Remove(p.tmp.Name())
}
