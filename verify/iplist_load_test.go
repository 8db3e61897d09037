package verify

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/crawler"
)

// googleCommon is a list in the layout Google publishes its crawlers'
// ranges in.
const googleCommon = `{
  "creationTime": "2026-11-30T14:46:03.000000",
  "prefixes": [
    {"ipv6Prefix": "2001:4860:4801:10::/64"},
    {"ipv4Prefix": "66.249.64.0/27"},
    {"ipv4Prefix": "66.249.66.0/27"}
  ]
}`

const googleSpecial = `{"creationTime": "2026-12-01T00:00:00.000000", "prefixes": [{"ipv4Prefix": "66.249.90.64/27"}]}`

// listServer serves the lists over HTTPS (a test certificate the returned
// client trusts) and counts the requests per path.
func listServer(t *testing.T) (*httptest.Server, map[string]*atomic.Int64) {
	t.Helper()
	hits := map[string]*atomic.Int64{"/common-crawlers.json": {}, "/special-crawlers.json": {}, "/gone.json": {}}
	mux := http.NewServeMux()
	serve := func(path, body string) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			hits[path].Add(1)
			if body == "" {
				http.NotFound(w, r)
				return
			}
			w.Header().Set("ETag", `"v1"`)
			if r.Header.Get("If-None-Match") == `"v1"` {
				w.WriteHeader(http.StatusNotModified)
				return
			}
			w.Write([]byte(body))
		})
	}
	serve("/common-crawlers.json", googleCommon)
	serve("/special-crawlers.json", googleSpecial)
	serve("/gone.json", "")
	srv := httptest.NewTLSServer(mux)
	t.Cleanup(srv.Close)
	return srv, hits
}

// listProfile is a crawler whose lists are on srv.
func listProfile(t *testing.T, srv *httptest.Server, paths ...string) *crawler.Profile {
	t.Helper()
	p := &crawler.Profile{Name: "googlebot", Tokens: []string{"Googlebot"}, FCrDNS: []string{"googlebot.com"}, IPv6: true}
	for _, path := range paths {
		p.IPLists = append(p.IPLists, srv.URL+path)
	}
	if err := p.Validate(); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestListLoaderUnion(t *testing.T) {
	srv, hits := listServer(t)
	p := listProfile(t, srv, "/common-crawlers.json", "/special-crawlers.json")
	now := time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	ld := &ListLoader{Fetcher: &IPListFetcher{Client: srv.Client()}, CacheDir: dir, Now: func() time.Time { return now }}

	got, err := ld.Load(context.Background(), p, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, ip := range []string{"66.249.66.1", "66.249.90.70", "2001:4860:4801:10::1"} {
		if !got.List.Contains(netip.MustParseAddr(ip)) {
			t.Errorf("the union does not hold %s: %s", ip, got.List)
		}
	}
	if got.List.Contains(netip.MustParseAddr("66.249.66.200")) {
		t.Error("the union holds an address of neither list")
	}
	if len(got.Loads) != 2 || !got.Loads[0].Saved || !got.Loads[1].Saved || got.Loads[0].Status != 200 || len(got.Warnings) != 0 {
		t.Fatalf("loads %+v %+v, warnings %q", got.Loads[0], got.Loads[1], got.Warnings)
	}
	if want := srv.URL + "/common-crawlers.json, " + srv.URL + "/special-crawlers.json"; got.List.Source != want {
		t.Errorf("source %q, want %q", got.List.Source, want)
	}
	if want := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC); !got.List.CreationTime.Equal(want) {
		t.Errorf("creation time %v, want the newest, %v", got.List.CreationTime, want)
	}
	// Each list is kept in the cache under its own URL.
	if files, _ := filepath.Glob(filepath.Join(dir, "iplist-*.json")); len(files) != 2 {
		t.Errorf("cache files %v, want one per list", files)
	}

	// Within the fresh period the cached copies serve, without a request.
	now = now.Add(time.Hour)
	again, err := ld.Load(context.Background(), p, "")
	if err != nil {
		t.Fatal(err)
	}
	if hits["/common-crawlers.json"].Load() != 1 || hits["/special-crawlers.json"].Load() != 1 || !again.Loads[0].Cached || !again.Loads[1].Cached {
		t.Errorf("second load asked the server (%d, %d requests) or did not use the cache", hits["/common-crawlers.json"].Load(), hits["/special-crawlers.json"].Load())
	}
	// After it, each list is revalidated: 304 keeps the copy.
	now = now.Add(DefaultListFresh)
	third, err := ld.Load(context.Background(), p, "")
	if err != nil {
		t.Fatal(err)
	}
	if third.Loads[0].Status != 304 || third.Loads[1].Status != 304 || !third.List.Contains(netip.MustParseAddr("66.249.90.70")) {
		t.Errorf("revalidation: %+v %+v", third.Loads[0], third.Loads[1])
	}
}

// TestListLoaderOneListFails: a list that cannot be had leaves the others
// in force, and the built-in list for its part, with a warning.
func TestListLoaderOneListFails(t *testing.T) {
	srv, _ := listServer(t)
	p := listProfile(t, srv, "/common-crawlers.json", "/gone.json")
	p.BuiltinIPs = []netip.Prefix{netip.MustParsePrefix("192.0.2.0/28")}
	ld := &ListLoader{Fetcher: &IPListFetcher{Client: srv.Client()}}
	got, err := ld.Load(context.Background(), p, "")
	if err != nil {
		t.Fatal(err)
	}
	if !got.List.Contains(netip.MustParseAddr("66.249.66.1")) || !got.List.Contains(netip.MustParseAddr("192.0.2.3")) {
		t.Errorf("list in force %s, want the first list and the built-in one", got.List)
	}
	if got.Loads[1].FetchErr == nil || len(got.Warnings) != 1 ||
		!strings.Contains(got.Warnings[0], "/gone.json answered 404 Not Found (cannot fetch); the built-in list stays in force") {
		t.Errorf("warnings %q", got.Warnings)
	}
	// Without a built-in list, the warning says nothing is in force for it.
	p.BuiltinIPs = nil
	got, _ = ld.Load(context.Background(), p, "")
	if len(got.Warnings) != 1 || !strings.Contains(got.Warnings[0], "no list (googlebot has no built-in one) stays in force") {
		t.Errorf("warnings %q", got.Warnings)
	}
}

// TestListLoaderOfflineWarnsOnce: the warning that a list has no cached
// copy is in every run's warnings (a report explains itself), and marked
// repeated, for stderr to leave out, when said within the fresh period.
func TestListLoaderOfflineWarnsOnce(t *testing.T) {
	p, _ := crawler.Builtin(crawler.Default)
	now := time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)
	dir := t.TempDir()
	ld := &ListLoader{CacheDir: dir, Offline: true, Now: func() time.Time { return now }}
	const want = "ip list: offline and no cached copy of https://lohisoft.com/bot/ips.json; the built-in list (79.139.58.98, 79.139.58.121) decides"
	for i, step := range []struct {
		after time.Duration
		said  bool
	}{{0, true}, {time.Minute, false}, {5 * time.Hour, false}, {2 * time.Hour, true}, {time.Hour, false}} {
		now = now.Add(step.after)
		got, err := ld.Load(context.Background(), p, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Warnings) != 1 || got.Warnings[0] != want {
			t.Errorf("run %d: warnings %q, want %q", i+1, got.Warnings, want)
		}
		said := len(got.Repeated) == 0
		if said != step.said || len(got.Repeated) > 1 || !said && got.Repeated[0] != want {
			t.Errorf("run %d: repeated %q, want said anew %v", i+1, got.Repeated, step.said)
		}
		if got.List.Source != IPListSourceBuiltin || len(got.List.Prefixes) != 2 {
			t.Errorf("run %d: list %s from %s", i+1, got.List, got.List.Source)
		}
	}
	// Without a cache directory nothing is remembered: said every time.
	ld.CacheDir = ""
	for range 2 {
		if got, _ := ld.Load(context.Background(), p, ""); len(got.Warnings) != 1 || len(got.Repeated) != 0 {
			t.Errorf("without a cache: warnings %q, repeated %q", got.Warnings, got.Repeated)
		}
	}
}

// TestListLoaderOfflineOneWarningPerCrawler: a crawler's lists without a
// cached copy are one warning, which says what decides instead, and the
// built-in snapshots standing in for the others one more, with their age.
func TestListLoaderOfflineOneWarningPerCrawler(t *testing.T) {
	p, _ := crawler.Builtin("google-user-triggered")
	now := time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)
	got, err := (&ListLoader{Offline: true, Now: func() time.Time { return now }}).Load(context.Background(), p, "")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"ip list: offline and no cached copy of 2 lists of google-user-triggered (user-triggered-fetchers-google.json, user-triggered-agents.json); google-user-triggered has no built-in copy of them, so its other lists decide alone; run 'lohibot-audit ips update --crawler google-user-triggered' once online",
		"ip list: google-user-triggered: offline and no copy cached of user-triggered-fetchers.json; its built-in snapshot (2026-08-21, 104 days old) decides; run 'lohibot-audit ips update --crawler google-user-triggered' for the current list",
	}
	if !slices.Equal(got.Warnings, want) {
		t.Errorf("warnings\n%q\nwant\n%q", got.Warnings, want)
	}
	if len(got.List.Prefixes) != 1056 || got.List.Source != "https://developers.google.com/static/crawling/ipranges/user-triggered-fetchers.json (built-in snapshot of 2026-08-21)" ||
		!got.List.Snapshot.Equal(time.Date(2026, 8, 21, 0, 0, 0, 0, time.UTC)) || !got.Loads[0].Snapshot || got.Loads[1].List != nil {
		t.Errorf("list in force: %d prefixes from %s (snapshot %v)", len(got.List.Prefixes), got.List.Source, got.List.Snapshot)
	}
	// A crawler none of whose lists has a snapshot or a copy: no list in
	// force, and it says so, not "built-in".
	q := &crawler.Profile{Name: "examplebot", Tokens: []string{"ExampleBot"}, FCrDNS: []string{"crawl.example.net"},
		IPLists: []string{"https://example.net/a.json", "https://example.net/b.json"}}
	if err := q.Validate(); err != nil {
		t.Fatal(err)
	}
	got, _ = (&ListLoader{Offline: true}).Load(context.Background(), q, "")
	if len(got.Warnings) != 1 || !strings.Contains(got.Warnings[0], "no cached copy of 2 lists of examplebot (a.json, b.json); examplebot has no built-in list, so its claims that DNS does not settle stay unverified (no-ip-list)") {
		t.Errorf("warnings %q", got.Warnings)
	}
	if len(got.List.Prefixes) != 0 || got.List.Source != IPListSourceNone ||
		got.List.Missing != "offline and never fetched; run 'lohibot-audit ips update --crawler examplebot'" {
		t.Errorf("list in force %s from %s (%s), want none, offline and never fetched", got.List, got.List.Source, got.List.Missing)
	}
}

// TestListLoaderFetchFailuresOneWarning: a crawler whose lists cannot be
// fetched gets one warning naming them briefly, the cause said once when
// it is the same for all, and no list in force without a built-in one.
func TestListLoaderFetchFailuresOneWarning(t *testing.T) {
	srv, _ := listServer(t)
	p := listProfile(t, srv, "/gone.json", "/gone-too.json", "/common-crawlers.json")
	got, err := (&ListLoader{Fetcher: &IPListFetcher{Client: srv.Client()}}).Load(context.Background(), p, "")
	if err != nil {
		t.Fatal(err)
	}
	want := "ip list: googlebot: 2 lists not fetched (ip list server answered with an error status: answered 404 Not Found); none cached of gone.json, gone-too.json"
	if len(got.Warnings) != 1 || got.Warnings[0] != want {
		t.Errorf("warnings %q, want %q", got.Warnings, want)
	}
	if !got.List.Contains(netip.MustParseAddr("66.249.66.1")) || strings.Contains(got.List.Source, IPListSourceNone) {
		t.Errorf("list in force %s from %s, want the fetched one alone", got.List, got.List.Source)
	}
	// Every list failing: nothing in force, and the warning says so.
	p = listProfile(t, srv, "/gone.json", "/gone-too.json")
	got, _ = (&ListLoader{Fetcher: &IPListFetcher{Client: srv.Client()}}).Load(context.Background(), p, "")
	if len(got.Warnings) != 1 || !strings.HasSuffix(got.Warnings[0], "gone-too.json; googlebot has no list in force: FCrDNS alone decides, and claims it cannot settle stay unverified (no-ip-list)") {
		t.Errorf("warnings %q", got.Warnings)
	}
	if got.List.Source != IPListSourceNone || got.List.Missing != "not fetched, and no copy cached" {
		t.Errorf("list in force from %q (%s), want none", got.List.Source, got.List.Missing)
	}
}
