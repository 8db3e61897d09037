// Package httpsget fetches the lists the tool reads from their publishers
// (a crawler's IP list, a CDN's edge ranges) by one set of rules: HTTPS
// only, no redirects followed, at most a given size, one time limit over
// the whole fetch (the body included), and revalidation with the
// validators of the copy at hand (If-None-Match, If-Modified-Since).
//
// Errors are one line each and wrap the caller's sentinels (Errors), so
// that every kind of list keeps its own errors and wording.
package httpsget

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

// Errors are the sentinels a fetch's errors wrap, and how they name what
// is fetched.
type Errors struct {
	// Noun names what is fetched in messages ("ip list").
	Noun string
	// NotHTTPS, Redirect, TooLarge and Status are wrapped by the errors
	// of a URL that is not https://, a redirect, a body over the limit
	// and a status other than 200 and 304.
	NotHTTPS, Redirect, TooLarge, Status error
	// RedirectHint ends the message of a redirect ("give the final
	// address with --ip-list").
	RedirectHint string
}

// Fetcher fetches one kind of list. The zero value is not usable: set
// MaxBytes and Errors.
type Fetcher struct {
	// Client sends the request; nil means a client with its own transport
	// and short connection timeouts. Its CheckRedirect is replaced.
	Client *http.Client
	// Timeout bounds the whole fetch, body included.
	Timeout time.Duration
	// UserAgent is sent as the User-Agent header when not empty; Accept
	// as the Accept header.
	UserAgent, Accept string
	// MaxBytes is the largest body accepted.
	MaxBytes int64
	Errors   Errors
	// After replaces time.AfterFunc for the timeout (tests).
	After func(d time.Duration, f func()) (stop func() bool)
}

// Response is a fetch that got an answer.
type Response struct {
	// Status is 200 or 304; NotModified is true for 304 (Body is then
	// nil, and ETag and LastModified are the ones given unless the server
	// sent new ones).
	Status      int
	NotModified bool
	Body        []byte
	// ETag and LastModified are the server's validators.
	ETag, LastModified string
}

// errTimeout is the cause of a fetch's context when its time ran out.
var errTimeout = errors.New("fetch timed out")

// Get fetches rawURL; etag and lastModified, when not empty, make the
// request conditional.
func (f *Fetcher) Get(ctx context.Context, rawURL, etag, lastModified string) (*Response, error) {
	noun := f.Errors.Noun
	u, err := url.Parse(rawURL)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("%w: %q: the list is fetched over https only", f.Errors.NotHTTPS, Shorten(rawURL))
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	after := f.After
	if after == nil {
		after = func(d time.Duration, fn func()) func() bool { return time.AfterFunc(d, fn).Stop }
	}
	stop := after(f.Timeout, func() { cancel(errTimeout) })
	defer stop()
	timedOut := func() bool { return context.Cause(ctx) == errTimeout }

	client := defaultClient
	if f.Client != nil {
		c := *f.Client
		client = &c
	}
	noRedirect := *client
	noRedirect.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", noun, rawURL, err)
	}
	if f.Accept != "" {
		req.Header.Set("Accept", f.Accept)
	}
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
			return nil, fmt.Errorf("%s %s: no answer within %s", noun, rawURL, f.Timeout)
		}
		return nil, fmt.Errorf("%s %s: %w", noun, rawURL, unwrapURLError(err))
	}
	defer resp.Body.Close()

	switch {
	case resp.StatusCode == http.StatusNotModified:
		return &Response{Status: resp.StatusCode, NotModified: true,
			ETag: header(resp, "ETag", etag), LastModified: header(resp, "Last-Modified", lastModified)}, nil
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		loc := resp.Header.Get("Location")
		msg := fmt.Errorf("%w: %s answered %d to %q; redirects are not followed", f.Errors.Redirect, rawURL, resp.StatusCode, Shorten(loc))
		if f.Errors.RedirectHint != "" {
			msg = fmt.Errorf("%w, %s", msg, f.Errors.RedirectHint)
		}
		return nil, msg
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("%w: %s answered %s", f.Errors.Status, rawURL, resp.Status)
	}
	if resp.ContentLength > f.MaxBytes {
		return nil, fmt.Errorf("%w: %s is %d bytes, the limit is %d", f.Errors.TooLarge, rawURL, resp.ContentLength, f.MaxBytes)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, f.MaxBytes+1))
	if err != nil || timedOut() {
		// A body cut off by the timeout is not read on, whatever the
		// reader said.
		if timedOut() {
			return nil, fmt.Errorf("%s %s: the body did not arrive within %s", noun, rawURL, f.Timeout)
		}
		return nil, fmt.Errorf("%s %s: reading the body: %w", noun, rawURL, err)
	}
	if int64(len(body)) > f.MaxBytes {
		return nil, fmt.Errorf("%w: %s is over %d bytes", f.Errors.TooLarge, rawURL, f.MaxBytes)
	}
	return &Response{Status: resp.StatusCode, Body: body,
		ETag: resp.Header.Get("ETag"), LastModified: resp.Header.Get("Last-Modified")}, nil
}

// header returns resp's header key, or def when it has none.
func header(resp *http.Response, key, def string) string {
	if v := resp.Header.Get(key); v != "" {
		return v
	}
	return def
}

// unwrapURLError drops the "Get "url": " prefix that the URL is already
// given in.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// Shorten cuts s to 80 bytes, at a character boundary, for a message.
func Shorten(s string) string {
	const max = 80
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && s[cut]&0xc0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}

// defaultClient is used when Fetcher.Client is nil: proxies from the
// environment, TLS 1.2 or later, and connection steps that fail fast on a
// machine without network.
var defaultClient = &http.Client{
	Transport: &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           (&net.Dialer{Timeout: 3 * time.Second}).DialContext,
		TLSClientConfig:       &tls.Config{MinVersion: tls.VersionTLS12},
		TLSHandshakeTimeout:   5 * time.Second,
		ResponseHeaderTimeout: 10 * time.Second,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          2,
		IdleConnTimeout:       30 * time.Second,
	},
}
