package verify

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestIPListFetch(t *testing.T) {
	const list = `{"creationTime":"2026-08-23T10:00:00Z","prefixes":[{"ipv4Prefix":"79.139.58.98/32"},{"ipv4Prefix":"79.139.58.121/32"}]}`
	var redirectTargetHit atomic.Bool
	// The slow handlers say when the fetch has waited long enough: the
	// fetch's timeout fires then, not on the clock.
	slowReached := make(chan struct{}, 1)
	mux := http.NewServeMux()
	mux.HandleFunc("/ok.json", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Last-Modified", "Sun, 23 Aug 2026 10:00:00 GMT")
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, list)
	})
	mux.HandleFunc("/since.json", func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("If-Modified-Since") == "Sun, 23 Aug 2026 10:00:00 GMT" {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		fmt.Fprint(w, list)
	})
	mux.HandleFunc("/moved.json", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/target.json", http.StatusFound)
	})
	mux.HandleFunc("/target.json", func(w http.ResponseWriter, r *http.Request) {
		redirectTargetHit.Store(true)
		fmt.Fprint(w, list)
	})
	mux.HandleFunc("/big.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", fmt.Sprint(IPListMaxBytes+10))
		w.Write([]byte(`["79.139.58.98"` + strings.Repeat(" ", IPListMaxBytes) + `]`))
	})
	mux.HandleFunc("/big-chunked.json", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`["79.139.58.98"`))
		w.(http.Flusher).Flush()
		w.Write([]byte(strings.Repeat(" ", IPListMaxBytes) + `]`))
	})
	mux.HandleFunc("/invalid.json", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"prefixes": [{"ipv4Prefix": "79.139.58.98/32"},`)
	})
	mux.HandleFunc("/empty.json", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"prefixes": []}`)
	})
	mux.HandleFunc("/slow.json", func(w http.ResponseWriter, r *http.Request) {
		slowReached <- struct{}{}
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	mux.HandleFunc("/slow-body.json", func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`["79.139.58.98"`))
		w.(http.Flusher).Flush()
		slowReached <- struct{}{}
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	mux.HandleFunc("/gone.json", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "gone", http.StatusGone)
	})
	srv := httptest.NewTLSServer(mux)
	defer srv.Close()
	now := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)

	tests := []struct {
		name         string
		url          string
		etag, since  string
		wantStatus   int
		wantErr      error
		errMatch     string
		wantPrefixes string
	}{
		{name: "200", url: srv.URL + "/ok.json", wantStatus: 200, wantPrefixes: "79.139.58.98, 79.139.58.121"},
		{name: "304 by etag", url: srv.URL + "/ok.json", etag: `"v1"`, wantStatus: 304},
		{name: "304 by date", url: srv.URL + "/since.json", since: "Sun, 23 Aug 2026 10:00:00 GMT", wantStatus: 304},
		{name: "redirect refused", url: srv.URL + "/moved.json", wantErr: ErrIPListRedirect, errMatch: `answered 302 to "/target.json"; redirects are not followed`},
		{name: "oversize by length", url: srv.URL + "/big.json", wantErr: ErrIPListTooLarge},
		{name: "oversize chunked", url: srv.URL + "/big-chunked.json", wantErr: ErrIPListTooLarge},
		{name: "invalid json", url: srv.URL + "/invalid.json", wantErr: ErrIPListInvalid},
		{name: "empty list", url: srv.URL + "/empty.json", wantErr: ErrIPListEmpty},
		{name: "slow server", url: srv.URL + "/slow.json", errMatch: "within 300ms"},
		{name: "slow body", url: srv.URL + "/slow-body.json", errMatch: "within 300ms"},
		{name: "error status", url: srv.URL + "/gone.json", wantErr: ErrIPListHTTPStatus, errMatch: "410 Gone"},
		{name: "plain http", url: strings.Replace(srv.URL, "https:", "http:", 1) + "/ok.json", wantErr: ErrIPListNotHTTPS},
		{name: "not a url", url: "ips.json", wantErr: ErrIPListNotHTTPS},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// 300ms is only what the message says: the timeout fires when
			// a slow handler is reached, else (a hang) after 30 s.
			f := &IPListFetcher{Client: srv.Client(), Timeout: 300 * time.Millisecond, UserAgent: "lohibot-audit/test",
				after: func(d time.Duration, fire func()) func() bool {
					stop := make(chan struct{})
					go func() {
						select {
						case <-slowReached:
							fire()
						case <-time.After(30 * time.Second):
							fire()
						case <-stop:
						}
					}()
					var once sync.Once
					return func() bool { once.Do(func() { close(stop) }); return true }
				}}
			got, err := f.Fetch(context.Background(), tc.url, tc.etag, tc.since, now)
			if tc.wantErr != nil || tc.errMatch != "" {
				if err == nil || (tc.wantErr != nil && !errors.Is(err, tc.wantErr)) || !strings.Contains(err.Error(), tc.errMatch) {
					t.Fatalf("err = %v, want %v containing %q", err, tc.wantErr, tc.errMatch)
				}
				if strings.Contains(err.Error(), "\n") {
					t.Errorf("error is not one line: %q", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			if got.Status != tc.wantStatus || got.NotModified != (tc.wantStatus == 304) {
				t.Fatalf("status %d (not modified %v), want %d", got.Status, got.NotModified, tc.wantStatus)
			}
			if tc.wantStatus == 200 {
				if got.List.String() != tc.wantPrefixes || got.List.Source != tc.url || !got.List.Fetched.Equal(now) ||
					got.ETag != `"v1"` || got.LastModified == "" || string(got.Body) != list {
					t.Fatalf("got %+v", got)
				}
			}
		})
	}
	if redirectTargetHit.Load() {
		t.Error("the redirect was followed")
	}
}
