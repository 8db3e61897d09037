package proxy

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestLoaderUpdate fetches the lists from an HTTPS server laid out as the
// CDNs publish them: each list is cached, revalidated with its ETag the
// next time, and a list that cannot be had or is refused leaves its
// cached copy, else the snapshot, in force.
func TestLoaderUpdate(t *testing.T) {
	var fastlyBody atomic.Value
	fastlyBody.Store(`{"addresses":["151.101.0.0/16"],"ipv6_addresses":["2a04:4e42::/32"]}`)
	var conditional atomic.Int64
	mux := http.NewServeMux()
	serve := func(path, etag string, body func() string) {
		mux.HandleFunc(path, func(w http.ResponseWriter, r *http.Request) {
			etag := fmt.Sprintf("%s-%d", etag, len(body()))
			if r.Header.Get("If-None-Match") == etag {
				conditional.Add(1)
				w.WriteHeader(http.StatusNotModified)
				return
			}
			w.Header().Set("ETag", etag)
			fmt.Fprint(w, body())
		})
	}
	serve("/www.cloudflare.com/ips-v4", `"cf4"`, func() string { return "173.245.48.0/20\n198.51.100.0/24\n" })
	serve("/www.cloudflare.com/ips-v6", `"cf6"`, func() string { return "2400:cb00::/32\n" })
	serve("/api.fastly.com/public-ip-list", `"f"`, func() string { return fastlyBody.Load().(string) })
	serve("/ip-ranges.amazonaws.com/ip-ranges.json", `"aws"`, func() string {
		return `{"prefixes":[{"ip_prefix":"13.32.0.0/15","service":"CLOUDFRONT"},{"ip_prefix":"3.5.140.0/22","service":"AMAZON"}],"ipv6_prefixes":[]}`
	})
	mux.HandleFunc("/bunnycdn.com/api/system/edgeserverlist", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/elsewhere", http.StatusFound)
	})
	mux.HandleFunc("/bunnycdn.com/api/system/edgeserverlist/ipv6", http.NotFound)
	srv := httptest.NewTLSServer(mux)
	defer srv.Close()
	dir := t.TempDir()
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	ld := &Loader{CacheDir: dir, Client: srv.Client(), Now: func() time.Time { return now },
		URL: func(s string) string {
			u, _ := url.Parse(s)
			return srv.URL + "/" + u.Host + u.Path
		}}

	e := ld.Update(context.Background())
	byURL := map[string]*EdgeList{}
	for _, l := range e.Lists {
		byURL[l.Source.URL] = l
	}
	cf := byURL["https://www.cloudflare.com/ips-v4"]
	if cf.Err != nil || cf.Status != 200 || !cf.Saved || cf.Snapshot || !cf.Fetched.Equal(now) || len(cf.Prefixes) != 2 {
		t.Fatalf("cloudflare v4: %+v", cf)
	}
	if c := e.CDN(netip.MustParseAddr("198.51.100.7")); c == nil || c.Name != Cloudflare {
		t.Error("a range of the fetched list is not in force")
	}
	if aws := byURL["https://ip-ranges.amazonaws.com/ip-ranges.json"]; len(aws.Prefixes) != 1 || aws.Prefixes[0].String() != "13.32.0.0/15" {
		t.Errorf("cloudfront: %v, want CloudFront's prefixes only", aws.Prefixes)
	}
	b4 := byURL["https://bunnycdn.com/api/system/edgeserverlist"]
	if !errors.Is(b4.Err, ErrRedirect) || !b4.Snapshot || len(b4.Prefixes) == 0 {
		t.Errorf("bunny v4: err %v, snapshot %v: a redirect is refused and the snapshot stays", b4.Err, b4.Snapshot)
	}
	if b6 := byURL["https://bunnycdn.com/api/system/edgeserverlist/ipv6"]; !errors.Is(b6.Err, ErrHTTPStatus) || !strings.Contains(b6.Err.Error(), "404") {
		t.Errorf("bunny v6: %v", b6.Err)
	}
	if g := byURL["https://cloud.google.com/load-balancing/docs/firewall-rules"]; g.Err != nil || g.Status != 0 || !g.Snapshot {
		t.Errorf("google-lb is documented only, never fetched: %+v", g)
	}

	// The next update revalidates; a list refused now leaves the cached
	// copy in force.
	fastlyBody.Store(`{"addresses":["0.0.0.0/0"]}`)
	now = now.Add(time.Hour)
	e = ld.Update(context.Background())
	for _, l := range e.Lists {
		byURL[l.Source.URL] = l
	}
	if cf := byURL["https://www.cloudflare.com/ips-v4"]; cf.Status != 304 || !cf.Fetched.Equal(now) || len(cf.Prefixes) != 2 {
		t.Errorf("cloudflare v4 revalidated: %+v", cf)
	}
	f := byURL["https://api.fastly.com/public-ip-list"]
	if !errors.Is(f.Err, ErrListInvalid) || f.Snapshot || len(f.Prefixes) != 2 {
		t.Errorf("fastly refused: err %v, %d prefixes (the cached copy's 2 stay)", f.Err, len(f.Prefixes))
	}
	if conditional.Load() < 3 {
		t.Errorf("%d conditional requests answered 304", conditional.Load())
	}

	// A run reads the cached copies without the network.
	loaded, warnings := (&Loader{CacheDir: dir}).Load()
	if len(warnings) != 0 {
		t.Fatalf("warnings %q", warnings)
	}
	for _, l := range loaded.Lists {
		fetched := l.Source.Fetch && !strings.Contains(l.Source.URL, "bunny")
		if l.Snapshot == fetched {
			t.Errorf("%s: snapshot %v", l.Source.URL, l.Snapshot)
		}
	}
	// Trusting a CDN trusts its cached ranges.
	set, warnings, err := (&Loader{CacheDir: dir}).Set([]string{"cloudflare"}, false)
	if err != nil || len(warnings) != 0 || !set.Trusts(netip.MustParseAddr("198.51.100.7")) {
		t.Errorf("Set: err %v, warnings %q; want the cached cloudflare range trusted", err, warnings)
	}
	if _, _, err := (&Loader{CacheDir: dir}).Set([]string{"akamai"}, false); !errors.Is(err, ErrSpec) {
		t.Errorf("Set of an unknown proxy: err %v, want ErrSpec", err)
	}
	// A damaged cache file is said and the snapshot stands in.
	path := ld.cachePath("https://www.cloudflare.com/ips-v6")
	if err := os.WriteFile(path, []byte(`{"source":"https://www.cloudflare.com/ips-v6","prefixes":["::/0"]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	loaded, warnings = (&Loader{CacheDir: dir}).Load()
	if len(warnings) != 1 || !strings.Contains(warnings[0], filepath.Base(path)) || !strings.Contains(warnings[0], "built-in snapshot") {
		t.Errorf("warnings %q", warnings)
	}
	if l := loaded.Of(Cloudflare)[1]; !l.Snapshot {
		t.Error("the damaged copy is in force")
	}
}
