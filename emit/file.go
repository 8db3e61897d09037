package emit

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
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

// WriteFileAtomic writes data to path unless the file there already holds
// the same content as same judges it (nil same means byte for byte): then
// it leaves the file untouched and returns changed false. Otherwise it
// writes a temporary file in the same directory, syncs it, gives it the old
// file's permission bits (0644 for a new file) and renames it over path, so
// a reader sees the old file or the new one, never a part. A symbolic link
// at path is followed: the file it points to is replaced. On error the
// temporary file is removed and path is as it was.
func WriteFileAtomic(path string, data []byte, same func(old, cur []byte) bool) (changed bool, err error) {
	if path == "" {
		return false, errors.New("write rules: no file name")
	}
	target := path
	if resolved, err := filepath.EvalSymlinks(path); err == nil {
		target = resolved
	}
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(target); err == nil {
		if !fi.Mode().IsRegular() {
			return false, fmt.Errorf("write rules to %s: not a regular file", path)
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
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return false, fmt.Errorf("write rules to %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return false, fmt.Errorf("write rules to %s: %w", path, err)
	}
	if err = tmp.Chmod(mode); err != nil {
		return false, fmt.Errorf("write rules to %s: %w", path, err)
	}
	if err = tmp.Sync(); err != nil {
		return false, fmt.Errorf("write rules to %s: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return false, fmt.Errorf("write rules to %s: %w", path, err)
	}
	if err = os.Rename(tmp.Name(), target); err != nil {
		return false, fmt.Errorf("write rules to %s: %w", path, err)
	}
	if d, derr := os.Open(dir); derr == nil {
		d.Sync() // make the rename durable; not all file systems support it
		d.Close()
	}
	return true, nil
}
