package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/internal/testutil"
)

// ipListTestSite serves an IP list whose body and status a test can
// change, counting the requests and answering conditional ones with 304.
type ipListTestSite struct {
	mu       sync.Mutex
	body     string
	etag     string
	requests int
	cond     int // conditional requests seen
}

func (s *ipListTestSite) set(body, etag string) {
	s.mu.Lock()
	s.body, s.etag = body, etag
	s.mu.Unlock()
}

func (s *ipListTestSite) counts() (int, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests, s.cond
}

func (s *ipListTestSite) mux() *http.ServeMux {
	m := http.NewServeMux()
	m.HandleFunc("/bot/ips.json", func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.requests++
		if inm := r.Header.Get("If-None-Match"); inm != "" {
			s.cond++
			if inm == s.etag {
				w.WriteHeader(http.StatusNotModified)
				return
			}
		}
		if s.etag != "" {
			w.Header().Set("ETag", s.etag)
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, s.body)
	})
	m.HandleFunc("/moved.json", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https://evil.example/ips.json", http.StatusMovedPermanently)
	})
	m.HandleFunc("/big.json", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `["79.139.58.98"`+strings.Repeat(" ", 1<<20)+`]`)
	})
	m.HandleFunc("/slow.json", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(3 * time.Second):
		}
	})
	return m
}

const ipListTestBody = `{"creationTime":"2026-08-30T00:00:00Z","prefixes":[{"ipv4Prefix":"79.139.58.98/32"},{"ipv4Prefix":"79.139.58.121/32"},{"ipv4Prefix":"198.51.100.0/24"}]}`

func TestIPsUpdateAndShow(t *testing.T) {
	site := &ipListTestSite{}
	site.set(ipListTestBody, `"v1"`)
	srv, _ := identityListServer(t, site.mux())
	url := srv.URL + "/bot/ips.json"
	cache := t.TempDir()
	now := time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)
	cdn, _ := cdnListServer(t)
	env := func() *Env {
		return &Env{HTTPClient: srv.Client(), Now: func() time.Time { return now }, cdnURL: cdn}
	}
	common := []string{"--ip-list", url, "--cache-dir", cache}

	steps := []struct {
		name     string
		args     []string
		setBody  string
		advance  time.Duration
		wantCode int
		stdout   []string
		stderr   []string
	}{
		{name: "show before any fetch", args: []string{"ips", "show"},
			stdout: []string{"source:   built-in (no cached copy of " + url, "prefixes: 2", "  79.139.58.98\n", "created:  2026-08-23T00:00:00Z"}},
		{name: "update fetches", args: []string{"ips", "update"}, stdout: []string{"200: " + url + ", 3 prefixes; cached",
			"cdn cloudflare: 200: https://www.cloudflare.com/ips-v4, 15 prefixes; cached\n", "cdn cloudfront: 200: https://ip-ranges.amazonaws.com/ip-ranges.json, 277 prefixes; cached\n"}},
		{name: "show the cached list", args: []string{"ips", "show"}, advance: 90 * time.Minute,
			stdout: []string{"source:   " + url + " (cached)", "fetched:  2026-09-01T12:00:00Z (1h ago)", "created:  2026-08-30T00:00:00Z", "prefixes: 3", "  198.51.100.0/24\n"}},
		{name: "bare ips shows too", args: []string{"ips"}, stdout: []string{"prefixes: 3"}},
		{name: "update revalidates", args: []string{"ips", "update"}, stdout: []string{"304 not modified: " + url + ", 3 prefixes, is current; cached",
			"cdn bunny: 304 not modified: https://bunnycdn.com/api/system/edgeserverlist/ipv6, 320 prefixes, is current; cached\n"}},
		{name: "show the cdn lists", args: []string{"ips", "show", "--cdn"},
			stdout: []string{"cdn:      cloudflare\nsource:   https://www.cloudflare.com/ips-v4\nin force: fetched 2026-09-01T13:30:00Z (0s ago)\nprefixes: 15\n",
				"cdn:      google-lb\nsource:   https://cloud.google.com/load-balancing/docs/firewall-rules\nin force: the ranges documented as of"}},
		{name: "show after 304", args: []string{"ips", "show"}, stdout: []string{"fetched:  2026-09-01T13:30:00Z (0s ago)"}},
		{name: "invalid list rejected", args: []string{"ips", "update"}, setBody: `{"prefixes": [`, wantCode: 3,
			stderr: []string{"error: rejected: ip list " + url + ": ip list is not valid", "the cached list stays in force"}},
		{name: "empty list rejected", args: []string{"ips", "update"}, setBody: `[]`, wantCode: 3,
			stderr: []string{"error: rejected: ip list " + url + ": ip list is empty"}},
		{name: "cached list still in force", args: []string{"ips", "show"}, stdout: []string{"prefixes: 3", "(cached)"}},
		{name: "stale list", args: []string{"ips", "show"}, advance: 7 * time.Hour, stdout: []string{"(7h ago; the next run fetches it again)"}},
		{name: "json", args: []string{"ips", "show", "--format", "json"},
			stdout: []string{`"source": "` + url + `"`, `"cached": true`, `"age_seconds": 25200`, `"stale": true`, `"creation_time": "2026-08-30T00:00:00Z"`, `"198.51.100.0/24"`}},
		{name: "redirect refused", args: []string{"ips", "update", "--ip-list", srv.URL + "/moved.json"}, wantCode: 3,
			stderr: []string{"answered 301 to \"https://evil.example/ips.json\"; redirects are not followed"}},
		{name: "oversize refused", args: []string{"ips", "update", "--ip-list", srv.URL + "/big.json"}, wantCode: 3,
			stderr: []string{"error: rejected:", "too large"}},
		{name: "offline update", args: []string{"ips", "update", "--offline"}, wantCode: 2, stderr: []string{"cannot run with --offline"}},
		{name: "file update", args: []string{"ips", "update", "--ip-list", "/etc/hosts"}, wantCode: 2, stderr: []string{"is a file"}},
		{name: "bad format", args: []string{"ips", "show", "--format", "xml"}, wantCode: 2, stderr: []string{"unknown --format"}},
		{name: "csv lists the prefixes", args: []string{"ips", "show", "--format", "csv"}, stdout: []string{"prefix\n79.139.58.98\n79.139.58.121\n"}},
		{name: "unknown subcommand", args: []string{"ips", "delete"}, wantCode: 2, stderr: []string{"unknown command"}},
	}
	for _, st := range steps {
		now = now.Add(st.advance)
		if st.setBody != "" {
			site.set(st.setBody, `"v2"`)
		}
		args := append(append([]string{}, st.args[:min(2, len(st.args))]...), common...)
		args = append(args, st.args[min(2, len(st.args)):]...)
		if st.args[0] == "ips" && len(st.args) == 1 {
			args = append([]string{"ips"}, common...)
		}
		code, stdout, stderr := identityRun(t, env(), args...)
		if code != st.wantCode {
			t.Fatalf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", st.name, code, st.wantCode, stdout, stderr)
		}
		for _, w := range st.stdout {
			if !strings.Contains(stdout, w) {
				t.Errorf("%s: stdout lacks %q:\n%s", st.name, w, stdout)
			}
		}
		for _, w := range st.stderr {
			if !strings.Contains(stderr, w) {
				t.Errorf("%s: stderr lacks %q:\n%s", st.name, w, stderr)
			}
		}
	}
	if _, cond := site.counts(); cond < 1 {
		t.Error("no conditional request was made")
	}
}

func TestIdentityListFetchedWhenStale(t *testing.T) {
	site := &ipListTestSite{}
	site.set(ipListTestBody, `"v1"`)
	srv, _ := identityListServer(t, site.mux())
	cache := t.TempDir()
	now := time.Date(2026, 9, 1, 12, 0, 0, 0, time.UTC)
	run := func(extra ...string) (int, string, string) {
		env := &Env{HTTPClient: srv.Client(), Now: func() time.Time { return now }}
		args := append([]string{"verify", "--offline=false", "--format", "json", "--ip-list", srv.URL + "/bot/ips.json",
			"--cache-dir", cache, "--resolver", "127.0.0.1:1", "198.51.100.7"}, extra...)
		return identityRun(t, env, args...)
	}
	steps := []struct {
		name         string
		advance      time.Duration
		extra        []string
		wantRequests int
		wantCond     int
		wantVerdict  string
	}{
		{name: "first run fetches", wantRequests: 1, wantVerdict: `"method": "ip-list"`},
		{name: "fresh cache: no request", advance: time.Hour, wantRequests: 1, wantVerdict: `"in_ip_list": true`},
		{name: "offline: no request", advance: 10 * time.Hour, extra: []string{"--offline"}, wantRequests: 1, wantVerdict: `"verdict": "genuine"`},
		{name: "stale: revalidated", wantRequests: 2, wantCond: 1, wantVerdict: `"in_ip_list": true`},
		{name: "revalidation refreshed the cache", advance: time.Hour, wantRequests: 2, wantCond: 1, wantVerdict: `"in_ip_list": true`},
		{name: "no-cache fetches every time", extra: []string{"--no-cache"}, wantRequests: 3, wantCond: 1, wantVerdict: `"in_ip_list": true`},
	}
	for _, st := range steps {
		now = now.Add(st.advance)
		code, stdout, stderr := run(st.extra...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", st.name, code, stderr)
		}
		req, cond := site.counts()
		if req != st.wantRequests || cond != st.wantCond {
			t.Errorf("%s: %d requests (%d conditional), want %d (%d)", st.name, req, cond, st.wantRequests, st.wantCond)
		}
		if !strings.Contains(stdout, st.wantVerdict) {
			t.Errorf("%s: output lacks %s:\n%s", st.name, st.wantVerdict, stdout)
		}
	}
}

func TestIdentityListFallbacks(t *testing.T) {
	site := &ipListTestSite{}
	srv, _ := identityListServer(t, site.mux())
	tests := []struct {
		name    string
		list    string
		client  *http.Client
		want    string // the list in force, as verify's table names it
		warning string
		limit   time.Duration
	}{
		{name: "redirect", list: srv.URL + "/moved.json", want: "IP list: built-in", warning: "redirects are not followed"},
		{name: "oversize", list: srv.URL + "/big.json", want: "IP list: built-in", warning: "(rejected whole); the built-in list stays in force"},
		{name: "slow server", list: srv.URL + "/slow.json", want: "IP list: built-in", warning: "; the built-in list stays in force",
			client: func() *http.Client { c := *srv.Client(); c.Timeout = 300 * time.Millisecond; return &c }(), limit: 2 * time.Second},
		{name: "invalid file", list: testutil.TempFile(t, "ips.json", `{"ips": ["not-an-ip"]}`), want: "IP list: built-in",
			warning: `ips[0] "not-an-ip" is not an address or CIDR prefix; rejected whole, the built-in list stays in force`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			client := tc.client
			if client == nil {
				client = srv.Client()
			}
			start := time.Now()
			code, stdout, stderr := identityRun(t, &Env{HTTPClient: client}, "verify", "--format", "table", "--offline=false",
				"--ip-list", tc.list, "--cache-dir", t.TempDir(), "--resolver", "127.0.0.1:1", "79.139.58.98")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			if !strings.Contains(stdout, tc.want) || !strings.Contains(stdout, "genuine") {
				t.Errorf("stdout lacks %q:\n%s", tc.want, stdout)
			}
			if !strings.Contains(stderr, tc.warning) {
				t.Errorf("stderr lacks %q:\n%s", tc.warning, stderr)
			}
			if tc.limit > 0 && time.Since(start) > tc.limit {
				t.Errorf("took %s, want under %s", time.Since(start), tc.limit)
			}
		})
	}
}

// ipsShown is what the tests read of the JSON of ips show.
type ipsShown struct {
	Crawler  string   `json:"crawler"`
	Source   string   `json:"source"`
	Cached   bool     `json:"cached"`
	Prefixes []string `json:"prefixes"`
}

func TestIPsShowJSONShape(t *testing.T) {
	code, stdout, stderr := identityRun(t, &Env{}, "ips", "show", "--format", "json", "--no-cache")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got ipsShown
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatal(err)
	}
	if got.Source != "built-in" || got.Cached || len(got.Prefixes) != 2 || got.Prefixes[0] != "79.139.58.98" || got.Prefixes[1] != "79.139.58.121" {
		t.Fatalf("got %+v", got)
	}
}

// TestIPsShowSnapshot: with nothing cached, ips show prints a built-in
// list's snapshot, named as such, its age counted from its date; ips
// update that cannot fetch says the snapshot stays in force (exit 3).
func TestIPsShowSnapshot(t *testing.T) {
	env := &Env{Now: func() time.Time { return fixedNow }}
	code, stdout, stderr := identityRun(t, env, "ips", "show", "--crawler", "gptbot", "--no-cache", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got struct {
		Crawler, Source string
		Age             int64 `json:"age_seconds"`
		Prefixes        []string
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatalf("%v:\n%s", err, stdout)
	}
	age := int64(fixedNow.Sub(time.Date(2026, 5, 11, 0, 0, 0, 0, time.UTC)) / time.Second)
	if got.Source != "https://openai.com/gptbot.json (built-in snapshot of 2026-05-11)" || got.Age != age || len(got.Prefixes) != 21 {
		t.Errorf("got %+v, want the snapshot of 2026-05-11, %d s old, 21 prefixes", got, age)
	}
	if !strings.Contains(stderr, "gptbot: not fetched in this run and no copy cached of gptbot.json; its built-in snapshot (2026-05-11, 205 days old) decides") {
		t.Errorf("stderr %q", stderr)
	}
	// The list's own URL, answered 404 by a local server.
	srv := httptest.NewTLSServer(http.NotFoundHandler())
	t.Cleanup(srv.Close)
	client := srv.Client()
	tr := client.Transport.(*http.Transport).Clone()
	tr.DialContext = func(ctx context.Context, network, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, network, srv.Listener.Addr().String())
	}
	tr.TLSClientConfig.ServerName = "example.com"
	client.Transport = tr
	code, _, stderr = identityRun(t, &Env{Now: env.Now, HTTPClient: client}, "ips", "update", "--crawler", "gptbot", "--no-cache")
	if code != fail.ExitIncomplete || !strings.Contains(stderr, "its built-in snapshot of 2026-05-11 stays in force") {
		t.Errorf("ips update: exit %d: %s", code, stderr)
	}
}
