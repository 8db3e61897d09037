package verify

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"
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

// errIPListTimeout is the cause of a fetch's context when its time ran
// out.
var errIPListTimeout = errors.New("ip list fetch timed out")

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
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("%w: %q: the list is fetched over https only", ErrIPListNotHTTPS, ipShorten(rawURL))
	}
	timeout := f.Timeout
	if timeout <= 0 {
		timeout = DefaultIPListTimeout
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	after := f.after
	if after == nil {
		after = func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }
	}
	stop := after(timeout, func() { cancel(errIPListTimeout) })
	defer stop()
	timedOut := func() bool { return context.Cause(ctx) == errIPListTimeout }

	client := ipListDefaultClient
	if f.Client != nil {
		c := *f.Client
		client = &c
	}
	noRedirect := *client
	noRedirect.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("ip list %s: %w", rawURL, err)
	}
	req.Header.Set("Accept", "application/json")
	if f.UserAgent != "" {
		req.Header.Set("User-Agent", f.UserAgent)
	}
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	if lastModified != "" {
		req.Header.Set("If-Modified-Since", lastModified)
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		if timedOut() {
			return nil, fmt.Errorf("ip list %s: no answer within %s", rawURL, timeout)
		}
		return nil, fmt.Errorf("ip list %s: %w", rawURL, ipUnwrapURLError(err))
	}
	defer resp.Body.Close()

	switch {
	case resp.StatusCode == http.StatusNotModified:
		return &IPListFetch{Status: resp.StatusCode, NotModified: true,
			ETag: ipHeader(resp, "ETag", etag), LastModified: ipHeader(resp, "Last-Modified", lastModified)}, nil
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		loc := resp.Header.Get("Location")
		return nil, fmt.Errorf("%w: %s answered %d to %q; redirects are not followed, give the final address with --ip-list",
			ErrIPListRedirect, rawURL, resp.StatusCode, ipShorten(loc))
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("%w: %s answered %s", ErrIPListHTTPStatus, rawURL, resp.Status)
	}
	if resp.ContentLength > IPListMaxBytes {
		return nil, fmt.Errorf("%w: %s is %d bytes, the limit is %d", ErrIPListTooLarge, rawURL, resp.ContentLength, IPListMaxBytes)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, IPListMaxBytes+1))
	if err != nil {
		if timedOut() {
			return nil, fmt.Errorf("ip list %s: the body did not arrive within %s", rawURL, timeout)
		}
		return nil, fmt.Errorf("ip list %s: reading the body: %w", rawURL, err)
	}
	if len(body) > IPListMaxBytes {
		return nil, fmt.Errorf("%w: %s is over %d bytes", ErrIPListTooLarge, rawURL, IPListMaxBytes)
	}
	list, err := ParseIPList(body)
	if err != nil {
		if timedOut() {
			// The body was cut off by the timeout, whatever the reader said.
			return nil, fmt.Errorf("ip list %s: the body did not arrive within %s", rawURL, timeout)
		}
		return nil, fmt.Errorf("ip list %s: %w", rawURL, err)
	}
	list.Source = rawURL
	list.Fetched = now
	return &IPListFetch{Status: resp.StatusCode, List: list, Body: body,
		ETag: resp.Header.Get("ETag"), LastModified: resp.Header.Get("Last-Modified")}, nil
}

// ipHeader returns resp's header key, or def when it has none.
func ipHeader(resp *http.Response, key, def string) string {
	if v := resp.Header.Get(key); v != "" {
		return v
	}
	return def
}

// ipUnwrapURLError drops the "Get "url": " prefix that the URL is already
// given in.
func ipUnwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// ipListDefaultClient is used when IPListFetcher.Client is nil: proxies
// from the environment, TLS 1.2 or later, and connection steps that fail
// fast on a machine without network.
var ipListDefaultClient = &http.Client{
	Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 3 * time.Second}).DialContext,
		TLSClientConfig:       &tls.Config{MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: DefaultIPListTimeout,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          2,
		IdleConnTimeout:       30 * time.Second,
	},
}
