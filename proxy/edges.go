package proxy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/atomicfile"
	"github.com/lohisoft/lohibot-audit/internal/httpsget"
)

// Edges are the CDNs' edge ranges in force: for each published list, the
// copy fetched by `ips update` and cached, else the built-in snapshot. The
// zero Edges holds nothing; BuiltinEdges holds the snapshot.
type Edges struct {
	// Lists has one entry per published list, CDN by CDN, in the order
	// of CDNs().
	Lists []*EdgeList
	set   *ranges
}

// EdgeList is one published list as it stands in a run.
type EdgeList struct {
	CDN    *CDN
	Source *Source
	// Prefixes are the list's ranges in force (none when neither a copy
	// nor a snapshot could be had).
	Prefixes []netip.Prefix
	// Snapshot says the built-in snapshot is in force, AsOf being its
	// date; otherwise Fetched is when the cached copy was fetched (or
	// found unchanged).
	Snapshot bool
	AsOf     time.Time
	Fetched  time.Time
	// Of an update (Loader.Update): Status is the HTTP status of the
	// fetch (200 or 304), Err why it failed or was rejected (the copy
	// in force is then the cached one or the snapshot), Saved that the
	// fetched list was cached.
	Status int
	Err    error
	Saved  bool
}

// Since is the date of the ranges in force: when the cached copy was
// fetched, or the snapshot's date.
func (l *EdgeList) Since() time.Time {
	if l.Snapshot {
		return l.AsOf
	}
	return l.Fetched
}

var (
	builtinOnce  sync.Once
	builtinEdges *Edges
)

// BuiltinEdges returns the edges of the built-in snapshot (shared; do not
// change it).
func BuiltinEdges() *Edges {
	builtinOnce.Do(func() {
		e := &Edges{}
		for _, c := range cdns {
			for _, s := range c.Sources {
				snap := snapshotOf(s)
				e.Lists = append(e.Lists, &EdgeList{CDN: c, Source: s, Prefixes: snap.prefixes, Snapshot: true, AsOf: snap.asOf})
			}
		}
		e.index()
		builtinEdges = e
	})
	return builtinEdges
}

// index builds the lookup set of e's lists.
func (e *Edges) index() {
	var ps []named
	for _, l := range e.Lists {
		for _, p := range l.Prefixes {
			ps = append(ps, named{p, l.CDN.Name})
		}
	}
	e.set = newRanges(ps)
}

// CDN returns the CDN whose edge a is, or nil.
func (e *Edges) CDN(a netip.Addr) *CDN {
	if e == nil {
		return nil
	}
	name, ok := e.set.name(a)
	if !ok {
		return nil
	}
	for _, l := range e.Lists {
		if l.CDN.Name == name {
			return l.CDN
		}
	}
	return nil
}

// Of returns the lists of the CDN named name.
func (e *Edges) Of(name string) []*EdgeList {
	var out []*EdgeList
	for _, l := range e.Lists {
		if l.CDN.Name == name {
			out = append(out, l)
		}
	}
	return out
}

// prefixesOf returns the ranges in force of the CDN named name.
func (e *Edges) prefixesOf(name string) []netip.Prefix {
	var out []netip.Prefix
	for _, l := range e.Of(name) {
		out = append(out, l.Prefixes...)
	}
	return out
}

// Loader gets the edge lists: Load takes the cached copies (else the
// snapshot) without the network; Update fetches every list that is
// published to fetch, by the rules every list is fetched by (HTTPS only,
// no redirects, at most MaxListBytes, one time limit, revalidated with
// the cached copy's validators), and caches what it gets.
type Loader struct {
	// CacheDir keeps fetched lists; "" keeps nothing.
	CacheDir string
	// Client sends the requests (nil: a default one); UserAgent is sent
	// with them.
	Client    *http.Client
	UserAgent string
	// Timeout bounds one fetch (zero: DefaultTimeout).
	Timeout time.Duration
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// URL, when set, rewrites a list's URL before it is fetched (tests).
	URL func(string) string

	after func(d time.Duration, f func()) (stop func() bool)
}

// DefaultTimeout is the time one fetch of a list may take.
const DefaultTimeout = 20 * time.Second

// Errors of a fetch, wrapped by EdgeList.Err.
var (
	ErrNotHTTPS   = errors.New("cdn list url is not https")
	ErrRedirect   = errors.New("cdn list server redirects")
	ErrTooLarge   = errors.New("cdn list is too large")
	ErrHTTPStatus = errors.New("cdn list server answered with an error status")
)

// Load returns the edges in force: each list's cached copy, else its
// snapshot. warnings say which cached copies were unusable.
func (l *Loader) Load() (*Edges, []string) {
	e := &Edges{}
	var warnings []string
	for _, c := range cdns {
		for _, s := range c.Sources {
			el := l.inForce(c, s)
			if s.Fetch && l.CacheDir != "" {
				if ce, err := l.cached(s); err == nil {
					el.Prefixes, el.Snapshot, el.Fetched = ce.prefixes, false, ce.Fetched
				} else if !errors.Is(err, fs.ErrNotExist) {
					warnings = append(warnings, fmt.Sprintf("cdn ranges: %v; the built-in snapshot of %s stays in force", err, el.AsOf.Format(time.DateOnly)))
				}
			}
			e.Lists = append(e.Lists, el)
		}
	}
	e.index()
	return e, warnings
}

// Set is the proxies of a run: the edges in force (Load) and what trusted
// and all trust (NewSet), with Load's warnings.
func (l *Loader) Set(trusted []string, all bool) (*Set, []string, error) {
	edges, warnings := l.Load()
	set, err := NewSet(edges, trusted, all)
	return set, warnings, err
}

// inForce is s's snapshot as the list in force.
func (l *Loader) inForce(c *CDN, s *Source) *EdgeList {
	snap := snapshotOf(s)
	return &EdgeList{CDN: c, Source: s, Prefixes: snap.prefixes, Snapshot: true, AsOf: snap.asOf}
}

// Update fetches every list now, revalidating its cached copy, and
// returns the edges in force after it: a list that could not be had or
// was rejected (EdgeList.Err) leaves its cached copy, else its snapshot,
// in force.
func (l *Loader) Update(ctx context.Context) *Edges {
	now := time.Now
	if l.Now != nil {
		now = l.Now
	}
	timeout := l.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	f := &httpsget.Fetcher{Client: l.Client, Timeout: timeout, UserAgent: l.UserAgent, MaxBytes: MaxListBytes, After: l.after,
		Errors: httpsget.Errors{Noun: "cdn list", NotHTTPS: ErrNotHTTPS, Redirect: ErrRedirect, TooLarge: ErrTooLarge, Status: ErrHTTPStatus}}
	e := &Edges{}
	for _, c := range cdns {
		for _, s := range c.Sources {
			el := l.inForce(c, s)
			e.Lists = append(e.Lists, el)
			if !s.Fetch {
				continue
			}
			var cached *cacheEntry
			if l.CacheDir != "" {
				if ce, err := l.cached(s); err == nil {
					cached = ce
					el.Prefixes, el.Snapshot, el.Fetched = ce.prefixes, false, ce.Fetched
				}
			}
			u := s.URL
			if l.URL != nil {
				u = l.URL(u)
			}
			var etag, lastMod string
			if cached != nil {
				etag, lastMod = cached.ETag, cached.LastModified
			}
			resp, err := f.Get(ctx, u, etag, lastMod)
			if err == nil && resp.NotModified && cached == nil {
				err = fmt.Errorf("cdn list %s: the server answered 304 Not Modified to an unconditional request", u)
			}
			var prefixes []netip.Prefix
			if err == nil && !resp.NotModified {
				if prefixes, err = ParseList(s.Layout, resp.Body); err != nil {
					err = fmt.Errorf("cdn list %s: %w", u, err)
				}
			}
			if err != nil {
				el.Err = err
				continue
			}
			el.Status = resp.Status
			entry := cached
			if resp.NotModified {
				entry.Fetched = now()
				if resp.ETag != "" {
					entry.ETag = resp.ETag
				}
				if resp.LastModified != "" {
					entry.LastModified = resp.LastModified
				}
			} else {
				entry = &cacheEntry{Source: s.URL, ETag: resp.ETag, LastModified: resp.LastModified, Fetched: now(), prefixes: prefixes}
			}
			el.Prefixes, el.Snapshot, el.Fetched = entry.prefixes, false, entry.Fetched
			if l.CacheDir != "" {
				if err := l.save(entry); err != nil {
					el.Err = err
				} else {
					el.Saved = true
				}
			}
		}
	}
	e.index()
	return e
}

// cacheEntry is a fetched list as kept in the cache directory.
type cacheEntry struct {
	// Source is the list's URL (as published, before any rewrite).
	Source       string    `json:"source"`
	ETag         string    `json:"etag,omitempty"`
	LastModified string    `json:"last_modified,omitempty"`
	Fetched      time.Time `json:"fetched"`
	// Prefixes are the list's ranges (for AWS's ip-ranges.json, only
	// CloudFront's: the whole file is 2.6 MB).
	Prefixes []string `json:"prefixes"`

	prefixes []netip.Prefix
}

// ErrCacheCorrupt means a cached list is not usable; it is ignored.
var ErrCacheCorrupt = errors.New("cached cdn list is not usable")

// cachePath is the file that keeps the list of s.
func (l *Loader) cachePath(source string) string {
	sum := sha256.Sum256([]byte(source))
	return filepath.Join(l.CacheDir, "cdn-"+hex.EncodeToString(sum[:8])+".json")
}

// cached reads the cached copy of s's list: fs.ErrNotExist when there is
// none, an error wrapping ErrCacheCorrupt when it is unusable.
func (l *Loader) cached(s *Source) (*cacheEntry, error) {
	path := l.cachePath(s.URL)
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxListBytes+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCacheCorrupt, path, err)
	}
	var e cacheEntry
	if len(data) > MaxListBytes || json.Unmarshal(data, &e) != nil || e.Source != s.URL {
		return nil, fmt.Errorf("%w: %s is not a cached list of %s; it is ignored", ErrCacheCorrupt, path, s.URL)
	}
	if len(e.Prefixes) == 0 {
		return nil, fmt.Errorf("%w: %s names no range; it is ignored", ErrCacheCorrupt, path)
	}
	for _, t := range e.Prefixes {
		p, err := parseEntry(t)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrCacheCorrupt, path, err)
		}
		e.prefixes = append(e.prefixes, p)
	}
	return &e, nil
}

// save writes e into the cache directory atomically, readable by its
// owner only.
func (l *Loader) save(e *cacheEntry) error {
	e.Prefixes = make([]string, len(e.prefixes))
	for i, p := range e.prefixes {
		e.Prefixes[i] = p.String()
	}
	data, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("cannot encode the cached cdn list: %w", err)
	}
	path := l.cachePath(e.Source)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("cannot create cache directory: %w", err)
	}
	if _, err := atomicfile.Write(context.Background(), path, data, 0o600, nil); err != nil {
		return fmt.Errorf("cannot write cache file %s: %w", path, err)
	}
	return nil
}
