// Package robotstest serves robots.txt files over HTTPS with every answer a
// fetch can get, for tests of robots.txt fetching.
package robotstest

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/crawler"
)

// OK is the robots.txt served at /ok/robots.txt: it disallows everything
// to the default crawler, by line 2.
var OK = "User-agent: " + crawler.DefaultTitle() + "\nDisallow: /\n"

// Server is an httptest TLS server answering:
//
//	/ok/robots.txt          200 with [OK]
//	/gone/robots.txt        404
//	/forbidden/robots.txt   403
//	/down/robots.txt        503
//	/early/robots.txt       103, then 418
//	/big/robots.txt         200 with "Disallow: /early" on line 2 and
//	                        "Disallow: /late" past the parsing limit, in a
//	                        "User-agent: *" group
//	/slow/robots.txt        never: it waits for the client to give up
//	/nolocation/robots.txt  302 without a Location
//	/hop/N/robots.txt       N redirects, then /ok/robots.txt
type Server struct {
	*httptest.Server
	userAgent atomic.Value
}

// NewServer starts a Server, closed when the test ends.
func NewServer(t testing.TB, maxBytes int) *Server {
	t.Helper()
	s := &Server{}
	big := "User-agent: *\nDisallow: /early\n" + strings.Repeat("# padding past the parsing limit\n", maxBytes/16) + "Disallow: /late\n"
	mux := http.NewServeMux()
	mux.HandleFunc("/ok/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, OK)
	})
	mux.HandleFunc("/gone/robots.txt", http.NotFound)
	mux.HandleFunc("/forbidden/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusForbidden)
	})
	mux.HandleFunc("/down/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "maintenance", http.StatusServiceUnavailable)
	})
	mux.HandleFunc("/early/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusEarlyHints)
		w.WriteHeader(http.StatusTeapot)
	})
	mux.HandleFunc("/big/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, big)
	})
	// The client's deadline always comes first, however loaded the
	// machine.
	mux.HandleFunc("/slow/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
		panic(http.ErrAbortHandler) // no answer at all, not an empty 200
	})
	mux.HandleFunc("/nolocation/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusFound)
	})
	mux.HandleFunc("/hop/", func(w http.ResponseWriter, r *http.Request) {
		rest := strings.TrimPrefix(r.URL.Path, "/hop/")
		n, err := strconv.Atoi(strings.TrimSuffix(rest, "/robots.txt"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		next := "/ok/robots.txt"
		if n > 1 {
			next = fmt.Sprintf("/hop/%d/robots.txt", n-1)
		}
		http.Redirect(w, r, next, http.StatusMovedPermanently)
	})
	s.Server = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.userAgent.Store(r.UserAgent())
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(s.Close)
	return s
}

// UserAgent is the User-Agent header of the last request.
func (s *Server) UserAgent() string {
	ua, _ := s.userAgent.Load().(string)
	return ua
}

// ShortClient is the server's client with its deadline set to timeout, for
// /slow/robots.txt.
func (s *Server) ShortClient(timeout time.Duration) *http.Client {
	c := *s.Client()
	c.Timeout = timeout
	return &c
}

// ClosedURL returns the URL of a TLS server that is no longer listening.
func ClosedURL() string {
	closed := httptest.NewTLSServer(http.NotFoundHandler())
	defer closed.Close()
	return closed.URL
}
