package robots

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/fail"
)

// Limits on the versions of one robots.txt: a directory or a repository
// is the operator's, but what it holds may have been written by anyone
// with access to the site.
const (
	// MaxVersions is the most versions one history holds.
	MaxVersions = 4096
	// MaxHistoryBytes is the most robots.txt text one history reads in
	// all; each version is read up to MaxBytes.
	MaxHistoryBytes = 64 << 20
)

// ErrHistory is matched by every error loading a history.
var ErrHistory = errors.New("cannot read robots.txt versions")

// Version is one robots.txt as it was from a time on.
type Version struct {
	// From is when it came into force.
	From time.Time
	// Name names it for people: the file ("2026-11-20.txt") or the commit
	// ("commit 1a2b3c4d").
	Name string
	// Robots are its rules; a version that removed the file has
	// AllowAll's (RFC 9309 §2.3.1.3: no robots.txt allows everything).
	Robots *Robots
}

// Label is the version as a violation names it: its name and time
// ("2026-11-20.txt, in force from 2026-11-20T00:00:00Z").
func (v *Version) Label() string {
	return v.Name + ", in force from " + v.From.UTC().Format(time.RFC3339)
}

// History is the versions of a site's robots.txt, each in force from its
// From until the next one's. Build it with [LoadDir] or [LoadGit].
type History struct {
	// Versions are sorted by From, at least one, no two at one time.
	Versions []Version
	// Name says where they came from: the directory or git:REPO:PATH.
	Name string
}

// At returns the index of the version in force at t, or -1 when t is
// before the first.
func (h *History) At(t time.Time) int {
	i, _ := slices.BinarySearchFunc(h.Versions, t, func(v Version, t time.Time) int {
		if v.From.After(t) {
			return 1
		}
		return -1
	})
	return i - 1
}

// Latest is the version in force last.
func (h *History) Latest() *Version { return &h.Versions[len(h.Versions)-1] }

// newHistory sorts versions and checks them: some, not too many, no two
// in force from one time.
func newHistory(name string, versions []Version) (*History, error) {
	if len(versions) == 0 {
		return nil, fmt.Errorf("%w: %s holds no version", ErrHistory, name)
	}
	slices.SortStableFunc(versions, func(a, b Version) int { return a.From.Compare(b.From) })
	for i := 1; i < len(versions); i++ {
		if versions[i].From.Equal(versions[i-1].From) {
			return nil, fmt.Errorf("%w: %s: %s and %s both come into force at %s", ErrHistory, name, versions[i-1].Name, versions[i].Name, versions[i].From.UTC().Format(time.RFC3339))
		}
	}
	return &History{Versions: versions, Name: name}, nil
}

// ParseVersionName reads the time a version file is named by: a date
// ("2026-11-20.txt", from midnight UTC) or an RFC 3339 time
// ("2026-11-20T14:05:00Z.txt", "2026-11-20T16:05:00+02:00.txt"). ok is
// false for any other name.
func ParseVersionName(name string) (t time.Time, ok bool) {
	stem, found := strings.CutSuffix(name, ".txt")
	if !found {
		return time.Time{}, false
	}
	if t, err := time.Parse(time.DateOnly, stem); err == nil {
		return t, true
	}
	if t, err := time.Parse(time.RFC3339, stem); err == nil {
		return t.UTC(), true
	}
	return time.Time{}, false
}

// LoadDir reads the versions in dir: every file named by the time it came
// into force (see [ParseVersionName]). Other files ending in .txt are an
// error (a version misnamed is a version lost); files of other names,
// directories and dot files are left alone.
func LoadDir(dir string) (*History, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrHistory, dir, fail.PathCause(err))
	}
	var versions []Version
	total := 0
	for _, e := range entries {
		name := e.Name()
		if strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".txt") || e.IsDir() {
			continue
		}
		from, ok := ParseVersionName(name)
		if !ok {
			return nil, fmt.Errorf("%w: %s: %q is not named by the time it came into force, such as 2026-11-20.txt or 2026-11-20T14:05:00Z.txt", ErrHistory, dir, name)
		}
		if len(versions) == MaxVersions {
			return nil, fmt.Errorf("%w: %s: more than %d versions", ErrHistory, dir, MaxVersions)
		}
		data, err := readVersion(filepath.Join(dir, name))
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %w", ErrHistory, dir, err)
		}
		if total += len(data); total > MaxHistoryBytes {
			return nil, fmt.Errorf("%w: %s: more than %d MiB of robots.txt in all", ErrHistory, dir, MaxHistoryBytes>>20)
		}
		versions = append(versions, Version{From: from, Name: name, Robots: Parse(data)})
	}
	return newHistory(dir, versions)
}

// readVersion reads a regular file, up to MaxBytes.
func readVersion(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", filepath.Base(path))
	}
	return io.ReadAll(io.LimitReader(f, MaxBytes))
}
