package verify

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/httpsget"
)

// DefaultIPListTimeout is the time a fetch of the IP list may take when
// IPListFetcher.Timeout is zero.
const DefaultIPListTimeout = 10 * time.Second

// IPListFetcher fetches the crawler's IP list over HTTPS: no redirects
// followed, at most IPListMaxBytes, conditional on the validators of the
// copy at hand. The zero value is ready to use.
type IPListFetcher struct {
	// Client sends the request; nil means a client with its own
	// transport and short connection timeouts. Its CheckRedirect is
	// replaced: redirects are never followed.
	Client *http.Client
	// Timeout bounds the whole fetch, body included; zero means
	// DefaultIPListTimeout.
	Timeout time.Duration
	// UserAgent is sent as the User-Agent header when not empty.
	UserAgent string

	// after replaces time.AfterFunc for the timeout (tests).
	after func(d time.Duration, f func()) (stop func() bool)
}

// IPListFetch is the outcome of a fetch that got an answer.
type IPListFetch struct {
	// Status is the HTTP status: 200 or 304.
	Status int
	// NotModified is true for 304: the copy at hand is current; List and
	// Body are then nil.
	NotModified bool
	// List is the parsed list (Source is the URL, Fetched is now).
	List *IPList
	// Body is the list as sent, for the cache.
	Body []byte
	// ETag and LastModified are the server's validators.
	ETag, LastModified string
}

// Fetch gets the list at rawURL. etag and lastModified, when not empty,
// make the request conditional (If-None-Match, If-Modified-Since). A list
// that does not parse or is empty is an error (ErrIPListInvalid,
// ErrIPListEmpty): nothing of it is to be used. Other errors wrap
// ErrIPListNotHTTPS, ErrIPListRedirect, ErrIPListTooLarge or
// ErrIPListHTTPStatus, or say what went wrong on the network.
func (f *IPListFetcher) Fetch(ctx context.Context, rawURL, etag, lastModified string, now time.Time) (*IPListFetch, error) {
	timeout := f.Timeout
	if timeout <= 0 {
		timeout = DefaultIPListTimeout
	}
	g := &httpsget.Fetcher{Client: f.Client, Timeout: timeout, UserAgent: f.UserAgent, Accept: "application/json",
		MaxBytes: IPListMaxBytes, Errors: ipListErrors, After: f.after}
	resp, err := g.Get(ctx, rawURL, etag, lastModified)
	if err != nil {
		return nil, err
	}
	if resp.NotModified {
		return &IPListFetch{Status: resp.Status, NotModified: true, ETag: resp.ETag, LastModified: resp.LastModified}, nil
	}
	list, err := ParseIPList(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("ip list %s: %w", rawURL, err)
	}
	list.Source = rawURL
	list.Fetched = now
	return &IPListFetch{Status: resp.Status, List: list, Body: resp.Body, ETag: resp.ETag, LastModified: resp.LastModified}, nil
}

// ipListErrors are the errors and wording of an IP list fetch.
var ipListErrors = httpsget.Errors{
	Noun: "ip list", NotHTTPS: ErrIPListNotHTTPS, Redirect: ErrIPListRedirect,
	TooLarge: ErrIPListTooLarge, Status: ErrIPListHTTPStatus,
	RedirectHint: "give the final address with --ip-list",
}
