package verify

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/internal/urlarg"
)

// DefaultListFresh is how long a fetched IP list is used without asking its
// server again (ListAuto).
const DefaultListFresh = 6 * time.Hour

// ListMode says when a ListLoader may use the network.
type ListMode int

const (
	// ListAuto fetches a list when its cached copy is missing or older
	// than ListLoader.Fresh.
	ListAuto ListMode = iota
	// ListNoFetch uses the cached copy or the built-in list only (for
	// --offline, and to show the list in force).
	ListNoFetch
	// ListFetchNow fetches (revalidates) every list now.
	ListFetchNow
)

// ErrListFile means an IP list file could not be read; the error is a
// *ListFileError.
var ErrListFile = errors.New("cannot read ip list file")

// ListFileError is an IP list file that could not be read. Partial says
// the file was opened but not read whole.
type ListFileError struct {
	Path    string
	Partial bool
	Err     error
}

func (e *ListFileError) Error() string {
	if e.Partial {
		return fmt.Sprintf("cannot read ip list %s whole: %v", e.Path, e.Err)
	}
	return fmt.Sprintf("cannot read ip list %s: %v", e.Path, e.Err)
}

func (e *ListFileError) Unwrap() error { return ErrListFile }

// ListLoader gets the IP lists of crawlers as SPEC §3 says: each list is
// fetched over HTTPS (Fetcher's rules) when its cached copy is stale,
// revalidated with its validators, and kept in CacheDir under its URL; a
// list that cannot be had or is rejected leaves its cached copy in force,
// else the crawler's built-in list, with a warning. The zero value fetches
// with a default client, keeps nothing and uses the wall clock.
type ListLoader struct {
	// Fetcher fetches lists; nil means a zero IPListFetcher.
	Fetcher *IPListFetcher
	// CacheDir keeps fetched lists and the times warnings were said; ""
	// keeps nothing.
	CacheDir string
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Fresh is how long a fetched list is used without asking again;
	// zero means DefaultListFresh.
	Fresh time.Duration
	// Mode says when to fetch.
	Mode ListMode
	// Offline says the run uses no network (Mode is then ListNoFetch):
	// a list without a cached copy is warned about, once per Fresh
	// period.
	Offline bool
}

// ListLoad is what became of one list source (a URL or a file).
type ListLoad struct {
	Source string
	// List is the list had from Source (fetched, cached or read), nil
	// when none could be had.
	List *IPList
	// Status is the HTTP status of a fetch made now (200 or 304), else 0.
	Status int
	// FetchErr is why a fetch made now failed or its list was rejected;
	// FetchWarning is the warning about it (also in Lists.Warnings).
	FetchErr     error
	FetchWarning string
	// Cached says List came from the cache directory; Saved that a
	// fetched list was written there; Stale that the cached copy is older
	// than Fresh.
	Cached, Saved, Stale bool
	// Snapshot says List is the built-in snapshot of Source: none was
	// fetched or cached (List.Snapshot dates it).
	Snapshot bool
}

// Lists is the IP list in force for one crawler and how it came to be.
type Lists struct {
	// List is the union of the lists had from the sources, with the
	// built-in list added when a source gave none (or the built-in list
	// alone). With one source its Source, Fetched and CreationTime are
	// that list's; with several, Source names them all, Fetched is the
	// oldest and CreationTime the newest.
	List *IPList
	// Loads has one entry per source, in order.
	Loads []*ListLoad
	// Warnings are for the user, in the order they arose.
	Warnings []string
	// Repeated are the warnings of Warnings that were already said
	// within the last Fresh period (remembered in the cache directory):
	// a report carries them, since it must explain itself, but stderr
	// need not say them again.
	Repeated []string

	// uncached are the URLs an offline run has no cached copy of, nor a
	// snapshot.
	uncached []string
	// snapshots are the loads a built-in snapshot stands in for because
	// the run is offline or does not fetch.
	snapshots []*ListLoad
}

// FetchErrs returns the fetch errors of the sources, in order.
func (l *Lists) FetchErrs() []error {
	var out []error
	for _, ld := range l.Loads {
		if ld.FetchErr != nil {
			out = append(out, ld.FetchErr)
		}
	}
	return out
}

func (ld *ListLoader) now() time.Time {
	if ld.Now == nil {
		return time.Now()
	}
	return ld.Now()
}

func (ld *ListLoader) fresh() time.Duration {
	if ld.Fresh <= 0 {
		return DefaultListFresh
	}
	return ld.Fresh
}

// Load gets the list in force for p: p's IP list URLs, or override (a URL
// or a file) instead when it is not "". Only a file
// that cannot be read is an error (*ListFileError); every other trouble is
// a warning, with a fallback in force.
func (ld *ListLoader) Load(ctx context.Context, p *crawler.Profile, override string) (*Lists, error) {
	out := &Lists{}
	sources := p.IPLists
	if o := strings.TrimSpace(override); o != "" {
		sources = []string{o}
	}
	needBuiltin := len(sources) == 0
	for _, src := range sources {
		var l *ListLoad
		if urlarg.IsURL(src) {
			l = ld.loadURL(ctx, p, src, out)
		} else {
			var err error
			if l, err = ld.loadFile(p, src, out); err != nil {
				return nil, err
			}
		}
		out.Loads = append(out.Loads, l)
		if l.List == nil {
			needBuiltin = true
		}
	}
	var lists []*IPList
	for _, l := range out.Loads {
		if l.List != nil {
			lists = append(lists, l.List)
		}
	}
	builtin := BuiltinList(p)
	if needBuiltin && (len(builtin.Prefixes) > 0 || len(lists) == 0) {
		lists = append(lists, builtin)
	}
	out.List = unionLists(lists)
	if w := fetchWarning(p, out.Loads, out.List, ld.now()); w != "" {
		out.Warnings = append(out.Warnings, w)
	}
	if len(out.uncached) > 0 {
		w := offlineWarning(p, out.uncached, len(out.snapshots) > 0)
		out.Warnings = append(out.Warnings, w)
		if !ld.sayOnce(w, ld.now()) {
			out.Repeated = append(out.Repeated, w)
		}
	}
	if len(out.snapshots) > 0 {
		w := snapshotWarning(p, out.snapshots, ld.Offline, ld.now())
		out.Warnings = append(out.Warnings, w)
		if !ld.sayOnce(w, ld.now()) {
			out.Repeated = append(out.Repeated, w)
		}
	}
	if out.List.Source == IPListSourceNone {
		switch {
		case len(out.uncached) > 0:
			out.List.Missing = fmt.Sprintf("offline and never fetched; run 'lohibot-audit ips update --crawler %s'", crawlerArg(p))
		case len(sources) > 0:
			out.List.Missing = "not fetched, and no copy cached"
		default:
			out.List.Missing = p.Name + " names no ip list and has no built-in one"
		}
	}
	return out, nil
}

// IPListSourceNone is the Source of the list in force when a crawler has
// none at all: nothing fetched, cached or built in (IPList.Missing says
// why).
const IPListSourceNone = "none"

// crawlerArg is the --crawler value that names p: its name, or its file.
func crawlerArg(p *crawler.Profile) string {
	if p.Source != "" && p.Source != crawler.SourceBuiltin {
		return p.Source
	}
	return p.Name
}

// listName names an IP list URL briefly: the last element of its path
// ("common-crawlers.json"), else the URL.
func listName(src string) string {
	u := strings.TrimRight(src, "/")
	if i := strings.LastIndexByte(u, '/'); i >= 0 && i+1 < len(u) && !strings.HasSuffix(u[:i], ":/") {
		return u[i+1:]
	}
	return src
}

// fetchWarning says, in one warning for p, which of its lists a fetch
// made now could not get or rejected, why, and what is in force instead;
// "" when none failed. One failure keeps its own full warning.
func fetchWarning(p *crawler.Profile, loads []*ListLoad, inForce *IPList, now time.Time) string {
	var failed []*ListLoad
	for _, l := range loads {
		if l.FetchErr != nil && urlarg.IsURL(l.Source) {
			failed = append(failed, l)
		}
	}
	switch len(failed) {
	case 0:
		return ""
	case 1:
		return failed[0].FetchWarning
	}
	// The cause without the URL, once when every list failed alike.
	cause := func(l *ListLoad) string {
		return strings.ReplaceAll(strings.TrimPrefix(l.FetchErr.Error(), "ip list "+l.Source+": "), l.Source+" ", "")
	}
	same := true
	for _, l := range failed[1:] {
		same = same && cause(l) == cause(failed[0])
	}
	var cached, uncached, snapshots []string
	for _, l := range failed {
		n := listName(l.Source)
		if !same {
			n += " (" + cause(l) + ")"
		}
		switch {
		case l.Cached:
			cached = append(cached, n)
		case l.Snapshot:
			snapshots = append(snapshots, listName(l.Source)+" ("+snapshotAge(l.List.Snapshot, now)+")")
			uncached = append(uncached, n)
		default:
			uncached = append(uncached, n)
		}
	}
	w := fmt.Sprintf("ip list: %s: %d lists not fetched", p.Name, len(failed))
	if same {
		w += " (" + cause(failed[0]) + ")"
	}
	if len(uncached) > 0 {
		w += fmt.Sprintf("; none cached of %s", strings.Join(uncached, ", "))
	}
	if len(cached) > 0 {
		w += fmt.Sprintf("; the cached copies of %s stay in force", strings.Join(cached, ", "))
	}
	switch len(snapshots) {
	case 0:
	case 1:
		w += "; the built-in snapshot of " + snapshots[0] + " stands in"
	default:
		w += "; the built-in snapshots of " + strings.Join(snapshots, ", ") + " stand in"
	}
	switch {
	case len(uncached) == 0:
	case inForce.Source == IPListSourceNone:
		w += fmt.Sprintf("; %s has no list in force: FCrDNS alone decides, and claims it cannot settle stay unverified (no-ip-list)", p.Name)
	case len(BuiltinList(p).Prefixes) > 0:
		w += "; the built-in list stands in for them"
	}
	return w
}

// offlineWarning says that an offline run has no cached copy of p's lists
// at urls, and what decides instead; others says snapshots of its other
// lists are in force.
func offlineWarning(p *crawler.Profile, urls []string, others bool) string {
	what := urls[0]
	if len(urls) > 1 {
		names := make([]string, len(urls))
		for i, u := range urls {
			names[i] = listName(u)
		}
		what = fmt.Sprintf("%d lists of %s (%s)", len(urls), p.Name, strings.Join(names, ", "))
	}
	if b := BuiltinList(p); len(b.Prefixes) > 0 {
		return fmt.Sprintf("ip list: offline and no cached copy of %s; the built-in list (%s) decides", what, b)
	}
	if others {
		return fmt.Sprintf("ip list: offline and no cached copy of %s; %s has no built-in copy of them, so its other lists decide alone; run 'lohibot-audit ips update --crawler %s' once online", what, p.Name, crawlerArg(p))
	}
	return fmt.Sprintf("ip list: offline and no cached copy of %s; %s has no built-in list, so its claims that DNS does not settle stay unverified (no-ip-list); run 'lohibot-audit ips update --crawler %s' once online", what, p.Name, crawlerArg(p))
}

// unionLists merges lists; one list is returned as it is.
func unionLists(lists []*IPList) *IPList {
	if len(lists) == 1 {
		return lists[0]
	}
	u := &IPList{}
	var sources []string
	for _, l := range lists {
		u.Parts = append(u.Parts, l.Each()...)
		u.Prefixes = append(u.Prefixes, l.Prefixes...)
		if !slices.Contains(sources, l.Source) {
			sources = append(sources, l.Source)
		}
		if !l.Fetched.IsZero() && (u.Fetched.IsZero() || l.Fetched.Before(u.Fetched)) {
			u.Fetched = l.Fetched
		}
		if l.CreationTime.After(u.CreationTime) {
			u.CreationTime = l.CreationTime
		}
		if !l.Snapshot.IsZero() && (u.Snapshot.IsZero() || l.Snapshot.Before(u.Snapshot)) {
			u.Snapshot = l.Snapshot
		}
	}
	slices.SortFunc(u.Prefixes, ipComparePrefix)
	u.Prefixes = slices.Compact(u.Prefixes)
	u.Source = strings.Join(sources, ", ")
	return u
}

// loadFile reads a list file; a list that does not parse leaves p's cached
// lists, else its built-in list, in force.
func (ld *ListLoader) loadFile(p *crawler.Profile, path string, out *Lists) (*ListLoad, error) {
	l := &ListLoad{Source: path}
	data, err := readListFile(path)
	if err != nil {
		return nil, err
	}
	list, err := ParseIPList(data)
	if err == nil {
		list.Source = path
		l.List = list
		return l, nil
	}
	// The fallback: p's own lists as cached, else its built-in list.
	var cached []*IPList
	what := ""
	for _, u := range p.IPLists {
		if c := ld.cached(u); c != nil {
			if cl, err := c.List(); err == nil {
				cached = append(cached, cl)
				what = fmt.Sprintf("the cached list of %s", c.Fetched.UTC().Format(time.RFC3339))
			}
		}
	}
	switch {
	case len(cached) > 1:
		what = "the cached lists"
	case len(cached) == 0:
		what = builtinName(p)
	}
	if len(cached) > 0 {
		l.List, l.Cached = unionLists(cached), true
	}
	l.FetchErr = fmt.Errorf("ip list %s: %w", path, err)
	l.FetchWarning = fmt.Sprintf("%v; rejected whole, %s stays in force", l.FetchErr, what)
	out.Warnings = append(out.Warnings, l.FetchWarning)
	return l, nil
}

// snapshotList is the built-in snapshot of the list at src, as a list in
// force, or nil when there is none (or it does not parse, which the
// tests rule out).
func snapshotList(src string) *IPList {
	snap, ok := crawler.SnapshotOf(src)
	if !ok {
		return nil
	}
	l, err := ParseIPList(snap.Data)
	if err != nil {
		return nil
	}
	l.Source = src + " (built-in snapshot of " + snap.AsOf.Format(time.DateOnly) + ")"
	l.Snapshot = snap.AsOf
	return l
}

// snapshotAge says how old a snapshot is: "2026-08-21, 105 days old".
func snapshotAge(asOf, now time.Time) string {
	days := int(now.Sub(asOf).Hours() / 24)
	switch {
	case days < 0:
		days = 0
	case days == 1:
		return asOf.Format(time.DateOnly) + ", 1 day old"
	}
	return fmt.Sprintf("%s, %d days old", asOf.Format(time.DateOnly), days)
}

// snapshotWarning says that built-in snapshots stand in for p's lists at
// loads, none being fetched or cached, and how old they are.
func snapshotWarning(p *crawler.Profile, loads []*ListLoad, offline bool, now time.Time) string {
	names := make([]string, len(loads))
	ages := make([]string, len(loads))
	for i, l := range loads {
		names[i] = listName(l.Source)
		ages[i] = snapshotAge(l.List.Snapshot, now)
	}
	why := "not fetched in this run and no copy cached"
	if offline {
		why = "offline and no copy cached"
	}
	what := "its built-in snapshot (" + ages[0] + ") decides"
	if len(loads) > 1 {
		what = "their built-in snapshots (" + strings.Join(ages, "; ") + ") decide"
	}
	return fmt.Sprintf("ip list: %s: %s of %s; %s; run 'lohibot-audit ips update --crawler %s' for the current list",
		p.Name, why, strings.Join(names, ", "), what, crawlerArg(p))
}

// fallbackName names what stands in for the list at src when it cannot
// be had: its built-in snapshot, else p's built-in list.
func (ld *ListLoader) fallbackName(p *crawler.Profile, src string) string {
	if snap, ok := crawler.SnapshotOf(src); ok {
		return "its built-in snapshot (" + snapshotAge(snap.AsOf, ld.now()) + ")"
	}
	return builtinName(p)
}

// builtinName names p's built-in list as the fallback in force.
func builtinName(p *crawler.Profile) string {
	if len(BuiltinList(p).Prefixes) == 0 {
		return "no list (" + p.Name + " has no built-in one)"
	}
	return "the built-in list"
}

// cached returns the cached copy of the list at url, or nil.
func (ld *ListLoader) cached(url string) *IPListCacheEntry {
	if ld.CacheDir == "" {
		return nil
	}
	e, err := LoadCachedIPList(ld.CacheDir, url)
	if err != nil {
		return nil
	}
	return e
}

// loadURL gets the list at src as the mode allows.
func (ld *ListLoader) loadURL(ctx context.Context, p *crawler.Profile, src string, out *Lists) *ListLoad {
	l := &ListLoad{Source: src}
	now := ld.now()
	var cached *IPListCacheEntry
	if ld.CacheDir != "" {
		e, err := LoadCachedIPList(ld.CacheDir, src)
		switch {
		case err == nil:
			cached = e
		case !errors.Is(err, fs.ErrNotExist):
			out.Warnings = append(out.Warnings, fmt.Sprintf("ip list cache: %v", err))
		}
	}
	useCached := func() {
		cl, _ := cached.List()
		l.List, l.Cached = cl, true
		l.Stale = now.Sub(cached.Fetched) > ld.fresh()
	}
	mode := ld.Mode
	if ld.Offline {
		mode = ListNoFetch
	}
	switch {
	case mode == ListNoFetch && cached != nil:
		useCached()
		return l
	case mode == ListNoFetch:
		if snap := snapshotList(src); snap != nil {
			l.List, l.Snapshot = snap, true
			out.snapshots = append(out.snapshots, l)
			return l
		}
		if ld.Offline {
			out.uncached = append(out.uncached, src)
		}
		return l
	case mode == ListAuto && cached != nil && now.Sub(cached.Fetched) >= 0 && now.Sub(cached.Fetched) < ld.fresh():
		useCached()
		return l
	}

	f := ld.Fetcher
	if f == nil {
		f = &IPListFetcher{}
	}
	var etag, lastMod string
	if cached != nil {
		etag, lastMod = cached.ETag, cached.LastModified
	}
	got, err := f.Fetch(ctx, src, etag, lastMod, now)
	if err == nil && got.NotModified && cached == nil {
		err = fmt.Errorf("ip list %s: the server answered 304 Not Modified to an unconditional request", src)
	}
	if err != nil {
		l.FetchErr = err
		what := ld.fallbackName(p, src)
		if cached != nil {
			useCached()
			what = fmt.Sprintf("the cached list of %s", cached.Fetched.UTC().Format(time.RFC3339))
		} else if snap := snapshotList(src); snap != nil {
			l.List, l.Snapshot = snap, true
		}
		verb := "cannot fetch"
		if IsListRejected(err) {
			verb = "rejected whole"
		}
		l.FetchWarning = fmt.Sprintf("%v (%s); %s stays in force", err, verb, what)
		return l
	}
	l.Status = got.Status
	entry := cached
	if got.NotModified {
		entry.Fetched = now
		if got.ETag != "" {
			entry.ETag = got.ETag
		}
		if got.LastModified != "" {
			entry.LastModified = got.LastModified
		}
		useCached()
	} else {
		entry = &IPListCacheEntry{Source: src, ETag: got.ETag, LastModified: got.LastModified, Fetched: now, Body: got.Body, SHA256: got.List.SHA256}
		l.List = got.List
	}
	if ld.CacheDir != "" {
		if err := SaveCachedIPList(ld.CacheDir, entry); err != nil {
			out.Warnings = append(out.Warnings, fmt.Sprintf("ip list cache: %v", err))
		} else {
			l.Saved = true
		}
	}
	return l
}

// IsListRejected reports whether a fetch error is about the list itself
// (invalid, empty, too large) rather than about getting it.
func IsListRejected(err error) bool {
	return errors.Is(err, ErrIPListInvalid) || errors.Is(err, ErrIPListEmpty) || errors.Is(err, ErrIPListTooLarge)
}

// readListFile reads an IP list file of at most IPListMaxBytes (a larger
// one is read in part and then rejected by the parser).
func readListFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &ListFileError{Path: path, Err: fail.PathCause(err)}
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return nil, &ListFileError{Path: path, Err: errors.New("it is a directory")}
	}
	data, err := io.ReadAll(io.LimitReader(f, IPListMaxBytes+1))
	if err != nil {
		return nil, &ListFileError{Path: path, Partial: true, Err: err}
	}
	return data, nil
}

// warnedFile keeps, in the cache directory, when each once-per-period
// warning was last said.
const warnedFile = "warned.json"

// sayOnce reports whether warning w is to be said now: when there is no
// cache directory to remember it in, or it was not said within the last
// Fresh period. Saying it is recorded.
func (ld *ListLoader) sayOnce(w string, now time.Time) bool {
	if ld.CacheDir == "" {
		return true
	}
	path := filepath.Join(ld.CacheDir, warnedFile)
	said := map[string]time.Time{}
	if data, err := cacheReadFile(path); err == nil {
		if json.Unmarshal(data, &said) != nil {
			said = map[string]time.Time{}
		}
	}
	sum := sha256.Sum256([]byte(w))
	key := hex.EncodeToString(sum[:8])
	if t, ok := said[key]; ok && now.Sub(t) >= 0 && now.Sub(t) < ld.fresh() {
		return false
	}
	said[key] = now.UTC()
	for k, t := range said {
		if now.Sub(t) >= ld.fresh() {
			delete(said, k)
		}
	}
	said[key] = now.UTC()
	if data, err := json.Marshal(said); err == nil {
		cacheWriteFile(path, data) // best effort: at worst it is said again
	}
	return true
}
