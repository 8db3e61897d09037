package proxy

import (
	"embed"
	"fmt"
	"net/netip"
	"strings"
	"sync"
	"time"
)

// The built-in snapshot: one file per published list, each headed by
// "# cdn:", "# source:" (the list's URL), "# as-of:" (the date the list
// was published or read, YYYY-MM-DD) and "# from:" (where the copy came
// from), then one prefix or address per line.
//
//go:embed snapshot/*.txt
var snapshotFS embed.FS

// snapshotList is a source's built-in copy.
type snapshotList struct {
	prefixes []netip.Prefix
	asOf     time.Time
}

var (
	snapshotOnce sync.Once
	snapshots    map[*Source]snapshotList
)

// snapshotOf returns src's built-in copy. The files are read once; a bad
// file is a bug of the build, caught by the package's tests.
func snapshotOf(src *Source) snapshotList {
	snapshotOnce.Do(func() {
		snapshots = map[*Source]snapshotList{}
		for _, c := range cdns {
			for _, s := range c.Sources {
				l, err := readSnapshot(c, s)
				if err != nil {
					panic(err.Error())
				}
				snapshots[s] = l
			}
		}
	})
	return snapshots[src]
}

// readSnapshot reads and checks one snapshot file.
func readSnapshot(c *CDN, s *Source) (snapshotList, error) {
	data, err := snapshotFS.ReadFile("snapshot/" + s.snapshot)
	if err != nil {
		return snapshotList{}, fmt.Errorf("proxy: snapshot of %s: %v", s.URL, err)
	}
	var l snapshotList
	head := map[string]string{}
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if k, v, ok := strings.Cut(strings.TrimPrefix(line, "#"), ":"); ok && strings.HasPrefix(line, "#") {
			head[strings.TrimSpace(k)] = strings.TrimSpace(v)
			continue
		}
		if line == "" {
			continue
		}
		p, err := parseEntry(line)
		if err != nil {
			return l, fmt.Errorf("proxy: snapshot %s: %v", s.snapshot, err)
		}
		l.prefixes = append(l.prefixes, p)
	}
	if head["cdn"] != c.Name || head["source"] != s.URL || len(l.prefixes) == 0 {
		return l, fmt.Errorf("proxy: snapshot %s is not %s's list at %s", s.snapshot, c.Name, s.URL)
	}
	if l.asOf, err = time.Parse(time.DateOnly, head["as-of"]); err != nil {
		return l, fmt.Errorf("proxy: snapshot %s: as-of: %v", s.snapshot, err)
	}
	return l, nil
}
