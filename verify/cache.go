package verify

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/netip"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/atomicfile"
	"github.com/miekg/dns"
)

// ErrCacheCorrupt means a cache file could not be read as a cache: it is
// ignored (and replaced on the next write), never trusted.
var ErrCacheCorrupt = errors.New("cache file is corrupt")

// Cache limits. DNS answers are written by strangers: none is kept longer
// than its TTL, nor longer than a day.
const (
	dnsMaxTTL         = 24 * time.Hour
	dnsMaxNegativeTTL = time.Hour
	// dnsNoSOANegativeTTL is how long a negative answer (NXDOMAIN, or no
	// data) that carries no SOA, and so no TTL, is kept. Many resolvers
	// answer so for reverse zones; without a floor every spoofer would be
	// asked about again on every run.
	dnsNoSOANegativeTTL = 15 * time.Minute
	// cacheMaxEntries bounds the DNS cache file; the entries that expire
	// soonest go first.
	cacheMaxEntries = 100000
	// cacheMaxFileBytes is the largest cache file read.
	cacheMaxFileBytes = 32 << 20
	cacheDNSFileName  = "dns.json"
	cacheFormat       = 1
)

// DNSCache keeps DNS answers between runs, each until its TTL (at most 24
// hours) runs out. A nil *DNSCache caches nothing. It is safe for
// concurrent use.
type DNSCache struct {
	path    string
	now     func() time.Time
	mu      sync.Mutex
	entries map[string]cacheDNSEntry
	dirty   bool
}

// cacheDNSEntry is one lookup outcome: the response code, the records and
// when they expire.
type cacheDNSEntry struct {
	Rcode   int      `json:"rcode"`
	Values  []string `json:"values,omitempty"`
	Expires int64    `json:"expires"` // Unix seconds
	// Server is the resolver that answered, and Asked when (Unix
	// seconds): the answer's evidence. Entries written before they were
	// kept have neither.
	Server string `json:"server,omitempty"`
	Asked  int64  `json:"asked,omitempty"`
}

type cacheDNSFile struct {
	Format  int                      `json:"format"`
	Entries map[string]cacheDNSEntry `json:"entries"`
}

// OpenDNSCache reads the DNS cache in dir (the file need not exist). now
// gives the time entries are judged against (nil: time.Now). A file that
// cannot be read as a cache is ignored: the cache returned is then empty
// and usable, and the error (wrapping ErrCacheCorrupt when the content is
// at fault) says why, for a warning.
func OpenDNSCache(dir string, now func() time.Time) (*DNSCache, error) {
	if now == nil {
		now = time.Now
	}
	c := &DNSCache{path: filepath.Join(dir, cacheDNSFileName), now: now, entries: map[string]cacheDNSEntry{}}
	entries, err := c.read()
	if err != nil {
		return c, err
	}
	c.entries = entries
	return c, nil
}

// Path is the cache file's path.
func (c *DNSCache) Path() string {
	if c == nil {
		return ""
	}
	return c.path
}

// Len is the number of entries in force.
func (c *DNSCache) Len() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// read loads the file, dropping expired and unusable entries.
func (c *DNSCache) read() (map[string]cacheDNSEntry, error) {
	data, err := cacheReadFile(c.path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]cacheDNSEntry{}, nil
	}
	if err != nil {
		return map[string]cacheDNSEntry{}, err
	}
	var f cacheDNSFile
	if err := json.Unmarshal(data, &f); err != nil || f.Format != cacheFormat {
		return map[string]cacheDNSEntry{}, fmt.Errorf("%w: %s is not a dns cache of format %d; it is ignored and will be rewritten", ErrCacheCorrupt, c.path, cacheFormat)
	}
	now := c.now()
	out := make(map[string]cacheDNSEntry, len(f.Entries))
	for k, e := range f.Entries {
		if cacheValidEntry(k, e, now) {
			out[k] = e
		}
	}
	return out, nil
}

// cacheValidEntry reports whether e is usable at now: not expired, not
// promising more than dnsMaxTTL, and well formed for its key.
func cacheValidEntry(key string, e cacheDNSEntry, now time.Time) bool {
	exp := time.Unix(e.Expires, 0)
	if !exp.After(now) || exp.After(now.Add(dnsMaxTTL)) {
		return false
	}
	if e.Rcode != dns.RcodeSuccess && e.Rcode != dns.RcodeNameError {
		return false
	}
	if e.Rcode == dns.RcodeNameError && len(e.Values) > 0 || len(e.Values) > dnsMaxValues {
		return false
	}
	qtype, name, ok := strings.Cut(key, " ")
	if !ok || name == "" || len(name) > 255 {
		return false
	}
	for _, v := range e.Values {
		switch qtype {
		case "PTR":
			if _, ok := dns.IsDomainName(v); !ok {
				return false
			}
		case "A", "AAAA":
			a, err := netip.ParseAddr(v)
			if err != nil || a.Is4() != (qtype == "A") && !a.Is4In6() {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// get returns the cached outcome for key, if it has not expired, with
// its evidence: the resolver that answered and when it was asked, with
// the TTL the answer was kept for (for an entry that does not say when
// it was asked, the time left).
func (c *DNSCache) get(key string) (dnsLookup, *DNSAnswer, bool) {
	if c == nil {
		return dnsLookup{}, nil, false
	}
	c.mu.Lock()
	e, ok := c.entries[key]
	c.mu.Unlock()
	if !ok {
		return dnsLookup{}, nil, false
	}
	expires := time.Unix(e.Expires, 0)
	left := expires.Sub(c.now())
	if left <= 0 {
		return dnsLookup{}, nil, false
	}
	l := dnsLookup{Rcode: e.Rcode, Values: e.Values, TTL: uint32(left / time.Second), Server: e.Server}
	qtype, name, _ := strings.Cut(key, " ")
	ans := &DNSAnswer{Name: name, Type: qtype, Rcode: dnsRcodeName(e.Rcode), Answer: e.Values, Resolver: e.Server, Cached: true, TTL: l.TTL}
	if ans.Answer == nil {
		ans.Answer = []string{}
	}
	if e.Asked > 0 && e.Asked <= e.Expires {
		ans.Asked = time.Unix(e.Asked, 0).UTC()
		ans.TTL = uint32(e.Expires - e.Asked)
	}
	return l, ans, true
}

// put keeps an answered lookup, asked at asked, for its TTL, capped at
// dnsMaxTTL (or dnsMaxNegativeTTL for an answer without data). A TTL of
// zero keeps nothing.
func (c *DNSCache) put(key string, l dnsLookup, asked time.Time) {
	if c == nil || l.Err != nil || l.TTL == 0 {
		return
	}
	ttl := time.Duration(l.TTL) * time.Second
	limit := dnsMaxTTL
	if len(l.Values) == 0 {
		limit = dnsMaxNegativeTTL
	}
	ttl = min(ttl, limit)
	e := cacheDNSEntry{Rcode: l.Rcode, Values: l.Values, Expires: asked.Add(ttl).Unix(), Server: l.Server, Asked: asked.Unix()}
	c.mu.Lock()
	c.entries[key] = e
	c.dirty = true
	c.mu.Unlock()
}

// Save writes the cache if it changed, merged with what other runs wrote
// meanwhile, atomically (a temporary file, then a rename), dropping
// expired entries. A corrupt file on disk is replaced.
func (c *DNSCache) Save() error {
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.dirty {
		return nil
	}
	merged, _ := c.read()
	for k, e := range c.entries {
		if old, ok := merged[k]; !ok || old.Expires < e.Expires {
			merged[k] = e
		}
	}
	if len(merged) > cacheMaxEntries {
		keys := make([]string, 0, len(merged))
		for k := range merged {
			keys = append(keys, k)
		}
		sort.Slice(keys, func(i, j int) bool { return merged[keys[i]].Expires > merged[keys[j]].Expires })
		for _, k := range keys[cacheMaxEntries:] {
			delete(merged, k)
		}
	}
	data, err := json.Marshal(cacheDNSFile{Format: cacheFormat, Entries: merged})
	if err != nil {
		return fmt.Errorf("cannot encode the dns cache: %w", err)
	}
	if err := cacheWriteFile(c.path, data); err != nil {
		return err
	}
	c.entries = merged
	c.dirty = false
	return nil
}

// IPListCacheEntry is a fetched IP list as kept in the cache directory.
type IPListCacheEntry struct {
	// Source is the URL the list was fetched from.
	Source string `json:"source"`
	// ETag and LastModified are the validators the server sent, for
	// revalidation.
	ETag         string `json:"etag,omitempty"`
	LastModified string `json:"last_modified,omitempty"`
	// Fetched is when the list was last fetched or confirmed unchanged.
	Fetched time.Time `json:"fetched"`
	// Body is the list as the server sent it.
	Body json.RawMessage `json:"body"`
	// SHA256 is the hex SHA-256 of the body as the server sent it (the
	// file keeps Body re-indented).
	SHA256 string `json:"sha256,omitempty"`
}

// List parses the entry's body into an IPList with its Source and Fetched.
func (e *IPListCacheEntry) List() (*IPList, error) {
	l, err := ParseIPList(e.Body)
	if err != nil {
		return nil, err
	}
	l.Source = e.Source
	l.Fetched = e.Fetched
	// The digest of the body as served; an entry written without one
	// does not know it (the body is kept re-indented).
	l.SHA256 = e.SHA256
	return l, nil
}

// cacheIPListPath is the file that keeps the list fetched from source.
func cacheIPListPath(dir, source string) string {
	sum := sha256.Sum256([]byte(source))
	return filepath.Join(dir, "iplist-"+hex.EncodeToString(sum[:8])+".json")
}

// LoadCachedIPList reads the cached copy of the list fetched from source.
// It returns fs.ErrNotExist when there is none, and an error wrapping
// ErrCacheCorrupt when the file is not a usable cached list (it is then
// to be ignored).
func LoadCachedIPList(dir, source string) (*IPListCacheEntry, error) {
	path := cacheIPListPath(dir, source)
	data, err := cacheReadFile(path)
	if err != nil {
		return nil, err
	}
	var e IPListCacheEntry
	if err := json.Unmarshal(data, &e); err != nil || e.Source != source || len(e.Body) == 0 {
		return nil, fmt.Errorf("%w: %s is not a cached ip list for %s; it is ignored", ErrCacheCorrupt, path, source)
	}
	if _, err := e.List(); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrCacheCorrupt, path, err)
	}
	return &e, nil
}

// SaveCachedIPList writes e into dir atomically.
func SaveCachedIPList(dir string, e *IPListCacheEntry) error {
	data, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return fmt.Errorf("cannot encode the cached ip list: %w", err)
	}
	return cacheWriteFile(cacheIPListPath(dir, e.Source), data)
}

// cacheReadFile reads a cache file of at most cacheMaxFileBytes.
func cacheReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, cacheMaxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("cannot read cache file %s: %w", path, err)
	}
	if len(data) > cacheMaxFileBytes {
		return nil, fmt.Errorf("%w: %s is larger than %d bytes; it is ignored", ErrCacheCorrupt, path, cacheMaxFileBytes)
	}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%w: %s is empty; it is ignored", ErrCacheCorrupt, path)
	}
	return data, nil
}

// cacheWriteFile writes data to path atomically, as a file only its owner
// can read (the cache tells which addresses were looked up).
func cacheWriteFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("cannot create cache directory: %w", err)
	}
	if _, err := atomicfile.Write(context.Background(), path, data, 0o600, nil); err != nil {
		return fmt.Errorf("cannot write cache file %s: %w", path, err)
	}
	return nil
}
