package robots

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/robots/robotstest"
)

func TestFetch(t *testing.T) {
	srv := robotstest.NewServer(t, MaxBytes)
	closedURL := robotstest.ClosedURL()
	slow := srv.ShortClient(20 * time.Millisecond)

	tests := []struct {
		name    string
		path    string // on srv; a full URL when it starts with https://
		client  *http.Client
		onError OnFetchError
		// allowedRoot is what the answer says of LohiSoftBot on "/".
		allowedRoot bool
		line        int    // the deciding line, 0 for a stand-in
		note        string // substring of Note; "" for none
		unavailable string // Source.Unavailable (FetchSkip) or the error's Reason (FetchFail)
	}{
		{name: "200 is parsed", path: "/ok/robots.txt", line: 2},
		{name: "404 allows all", path: "/gone/robots.txt", allowedRoot: true, note: "/gone/robots.txt answered 404: RFC 9309 §2.3.1.3 says allow all"},
		{name: "403 allows all", path: "/forbidden/robots.txt", allowedRoot: true, note: "answered 403: RFC 9309 §2.3.1.3 says allow all"},
		{name: "five redirects are followed", path: "/hop/5/robots.txt", line: 2},
		{name: "six redirects allow all", path: "/hop/6/robots.txt", allowedRoot: true, note: "redirected more than 5 times: RFC 9309 §2.3.1.2"},
		{name: "redirect without location allows all", path: "/nolocation/robots.txt", allowedRoot: true, note: "answered 302 without a usable redirect"},
		{name: "oversize keeps the rules before the limit", path: "/big/robots.txt", allowedRoot: true},
		{name: "5xx fails", path: "/down/robots.txt", unavailable: "answered 503"},
		{name: "5xx under rfc disallows all", path: "/down/robots.txt", onError: FetchRFC, note: "answered 503: RFC 9309 §2.3.1.4 says disallow all"},
		{name: "5xx under skip", path: "/down/robots.txt", onError: FetchSkip, unavailable: "answered 503"},
		{name: "418 after 103 is a 4xx", path: "/early/robots.txt", allowedRoot: true, note: "answered 418"},
		{name: "timeout fails", path: "/slow/robots.txt", client: slow, unavailable: "could not be fetched (timed out)"},
		{name: "timeout under skip", path: "/slow/robots.txt", client: slow, onError: FetchSkip, unavailable: "could not be fetched (timed out)"},
		{name: "closed port under rfc", path: closedURL + "/robots.txt", onError: FetchRFC, note: "could not be fetched (dial tcp"},
		{name: "closed port fails", path: closedURL + "/robots.txt", unavailable: "could not be fetched (dial tcp"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			u := tc.path
			if !strings.HasPrefix(u, "https://") {
				u = srv.URL + u
			}
			client := tc.client
			if client == nil {
				client = srv.Client()
			}
			f := Fetcher{Client: client, UserAgent: "test-agent/1", OnError: tc.onError}
			src, err := f.Fetch(context.Background(), u)
			if tc.onError == FetchFail && tc.unavailable != "" {
				var ue *UnavailableError
				if !errors.As(err, &ue) || !errors.Is(err, ErrUnavailable) || ue.URL != u || !strings.HasPrefix(ue.Reason, tc.unavailable) {
					t.Fatalf("Fetch = %+v, %v; want an UnavailableError %q", src, err, tc.unavailable)
				}
				if want := "robots.txt " + u + " " + ue.Reason; err.Error() != want {
					t.Errorf("error %q, want %q", err, want)
				}
				return
			}
			if err != nil {
				t.Fatalf("Fetch: %v", err)
			}
			if src.Name != u || src.File != "" {
				t.Errorf("Name %q File %q, want %q and none", src.Name, src.File, u)
			}
			if tc.onError == FetchSkip && tc.unavailable != "" {
				if src.Unavailable != tc.unavailable || src.Robots != nil {
					t.Errorf("Unavailable %q, Robots %v; want %q and nil", src.Unavailable, src.Robots, tc.unavailable)
				}
				return
			}
			if src.Unavailable != "" {
				t.Errorf("Unavailable = %q, want none", src.Unavailable)
			}
			if tc.note == "" && src.Note != "" || !strings.Contains(src.Note, tc.note) {
				t.Errorf("Note = %q, want %q", src.Note, tc.note)
			}
			d := src.Robots.Decide(testToken, "/")
			if d.Allowed != tc.allowedRoot || d.Line != tc.line {
				t.Errorf("Decide(/) = %+v, want allowed %v by line %d", d, tc.allowedRoot, tc.line)
			}
			if tc.note != "" && d.Why != src.Note {
				t.Errorf("Decide(/).Why = %q, want the note %q", d.Why, src.Note)
			}
		})
	}
	if ua := srv.UserAgent(); ua != "test-agent/1" {
		t.Errorf("User-Agent sent = %q, want test-agent/1", ua)
	}
}

func TestFetchBig(t *testing.T) {
	srv := robotstest.NewServer(t, MaxBytes)
	f := Fetcher{Client: srv.Client()}
	src, err := f.Fetch(context.Background(), srv.URL+"/big/robots.txt")
	if err != nil {
		t.Fatal(err)
	}
	if d := src.Robots.Decide(testToken, "/early"); d.Allowed || d.Line != 2 {
		t.Errorf("Decide(/early) = %+v, want disallowed by line 2", d)
	}
	if d := src.Robots.Decide(testToken, "/late"); !d.Allowed {
		t.Errorf("Decide(/late) = %+v, want allowed: the rule is past the limit", d)
	}
	if w := src.Warnings(); len(w) == 0 || !strings.HasPrefix(w[0], "robots.txt "+srv.URL+"/big/robots.txt: robots.txt is larger than 500 KiB") {
		t.Errorf("Warnings() = %q, want the size limit first", w)
	}
}

func TestFetchErrors(t *testing.T) {
	srv := robotstest.NewServer(t, MaxBytes)
	for _, u := range []string{"https://", "ftp://example.com/robots.txt", "robots.txt", "http://[::1"} {
		t.Run(u, func(t *testing.T) {
			var f Fetcher
			src, err := f.Fetch(context.Background(), u)
			if !errors.Is(err, ErrBadURL) || src != nil {
				t.Fatalf("Fetch(%q) = %v, %v; want ErrBadURL", u, src, err)
			}
			if !strings.Contains(err.Error(), strconv.Quote(u)) {
				t.Errorf("error %q does not name the URL", err)
			}
		})
	}
	// A context ended before the answer is neither unavailable nor a
	// stand-in: the caller was interrupted.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for _, on := range []OnFetchError{FetchFail, FetchRFC, FetchSkip} {
		f := Fetcher{Client: srv.Client(), OnError: on}
		src, err := f.Fetch(ctx, srv.URL+"/slow/robots.txt")
		if !errors.Is(err, context.Canceled) || errors.Is(err, ErrUnavailable) || src != nil {
			t.Errorf("OnError %d: Fetch with a cancelled context = %v, %v; want context.Canceled", on, src, err)
		}
	}
}
