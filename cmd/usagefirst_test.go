package cmd

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/internal/testutil"
)

// countingServer is an HTTPS server that answers robots.txt and the IP
// list and counts the requests it was sent.
type countingServer struct {
	*httptest.Server
	mu    sync.Mutex
	paths []string
}

func newCountingServer(t *testing.T) *countingServer {
	t.Helper()
	s := &countingServer{}
	s.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.paths = append(s.paths, r.URL.Path)
		s.mu.Unlock()
		switch r.URL.Path {
		case "/ips.json":
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(`["79.139.58.98"]`))
		default:
			w.Write([]byte("User-agent: *\nDisallow: /private/\n"))
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *countingServer) requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.paths...)
}

// TestLogsUsageErrorFetchesNothing checks that every flag of logs is
// checked before robots.txt or the IP list is fetched: a usage error
// (exit 2) leaves the server without a single request, whichever flag is
// wrong. The same command line with nothing wrong does fetch both, so the
// server is reachable.
func TestLogsUsageErrorFetchesNothing(t *testing.T) {
	log := testutil.TempFile(t, "access.log",
		`192.0.2.7 - - [01/Dec/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 5 "-" "Mozilla/5.0"`+"\n")
	for _, tc := range []struct {
		name string
		tty  bool
		args []string
		want string
	}{
		{name: "html to a terminal", tty: true, args: []string{"--format", "html"}, want: "--format html writes a page for a browser"},
		{name: "unknown report format", args: []string{"--format", "htm"}},
		{name: "unknown --fail-on", args: []string{"--fail-on", "spoof"}},
		{name: "unknown log format", args: []string{"--log-format", "combind"}},
		{name: "bad --since", args: []string{"--since", "yesterday"}},
		{name: "bad --budget", args: []string{"--budget", "0"}},
		{name: "site glob without a site", args: []string{"--site", "*.example"}, want: "is a glob without a site"},
		{name: "unknown crawler", args: []string{"--crawler", "nosuchbot"}, want: "unknown crawler"},
		{name: "bad resolver", args: []string{"--resolver", "dns.example"}, want: "--resolver"},
		{name: "bad dns timeout", args: []string{"--dns-timeout", "0s"}, want: "--dns-timeout"},
		{name: "ip list over http", args: []string{"--ip-list", "http://lists.example/ips.json"}, want: "https only"},
		{name: "ip list with two crawlers", args: []string{"--crawler", "lohisoftbot", "--crawler", "googlebot"}, want: "with 2 crawlers"},
		{name: "robots twice for every site", args: []string{"--robots", "second/robots.txt"}, want: "--robots given twice for every site"},
		{name: "robots without a source", args: []string{"--robots", "shop.example="}, want: "names no robots.txt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := newCountingServer(t)
			var out, errb bytes.Buffer
			env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, StdoutTTY: tc.tty,
				HTTPClient: srv.Client(), Getenv: func(string) string { return "" }, Now: func() time.Time { return fixedNow }}
			args := append([]string{"logs", "--cache-dir", t.TempDir(), "--ip-list", srv.URL + "/ips.json",
				"--robots", srv.URL + "/robots.txt"}, tc.args...)
			code := Run(context.Background(), env, append(args, log))
			if code != fail.ExitUsage || !strings.Contains(errb.String(), tc.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 saying %q", code, errb.String(), tc.want)
			}
			if got := srv.requests(); len(got) > 0 {
				t.Errorf("a usage error came after requests for %q", got)
			}
			if out.Len() > 0 {
				t.Errorf("a usage error printed a report:\n%s", out.String())
			}
		})
	}

	// The control: nothing wrong, both are fetched.
	srv := newCountingServer(t)
	var out, errb bytes.Buffer
	env := &Env{Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb,
		HTTPClient: srv.Client(), Getenv: func(string) string { return "" }, Now: func() time.Time { return fixedNow }}
	code := Run(context.Background(), env, []string{"logs", "--format", "json", "--cache-dir", filepath.Join(t.TempDir(), "cache"),
		"--ip-list", srv.URL + "/ips.json", "--robots", srv.URL + "/robots.txt", log})
	got := strings.Join(srv.requests(), " ")
	if code != fail.ExitOK || !strings.Contains(got, "/robots.txt") || !strings.Contains(got, "/ips.json") {
		t.Errorf("control run: exit %d, requests %q, stderr %q; want exit 0 with robots.txt and ips.json fetched", code, got, errb.String())
	}
}
