package robots

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/urlarg"
)

// FetchTimeout bounds one robots.txt fetch, redirects included.
const FetchTimeout = 10 * time.Second

// MaxRedirects is how many consecutive redirects a fetch follows (RFC 9309
// §2.3.1.2: at least five).
const MaxRedirects = 5

var (
	// ErrBadURL is returned for a URL that is not a usable http(s) URL.
	ErrBadURL = errors.New("not a valid http(s) URL")
	// ErrUnavailable is matched by an [*UnavailableError].
	ErrUnavailable = errors.New("robots.txt unavailable")

	errTooManyRedirects = errors.New("too many redirects")
)

// UnavailableError is returned by [Fetcher.Fetch] under [FetchFail] for a
// robots.txt that could not be fetched now: a network error, a timeout, a
// 5xx. It matches [ErrUnavailable].
type UnavailableError struct {
	URL string
	// Reason says what happened, such as "answered 503" or "could not be
	// fetched (timed out)".
	Reason string
}

func (e *UnavailableError) Error() string { return "robots.txt " + e.URL + " " + e.Reason }

// Is makes the error match [ErrUnavailable].
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

// Source is a robots.txt as loaded: its rules, where they came from, and
// which of RFC 9309's stand-ins applies when it could not be read.
type Source struct {
	// Name says where it came from: the file path, the URL as given, or
	// "stdin".
	Name string
	// File is the local file path when the robots.txt was read from a
	// file, else "" (a URL or stdin).
	File string
	// Robots is nil only when Unavailable is set.
	Robots *Robots
	// Note is "" for a robots.txt that was read, else why RFC 9309's
	// allow-all or disallow-all applies (a 4xx, or a 5xx or unreachable
	// URL read as RFC 9309 says).
	Note string
	// Unavailable says why a URL could not be fetched now (network error,
	// timeout, 5xx) under [FetchSkip]; "" otherwise.
	Unavailable string
	// History, when set, is the robots.txt's dated versions (a directory
	// or git:REPO:PATH); Robots is then the latest.
	History *History
}

// HistorySource is the source of h's versions, with the latest in force
// as its Robots.
func HistorySource(h *History) *Source {
	return &Source{Name: h.Name, Robots: h.Latest().Robots, History: h}
}

// At returns the robots.txt in force at t and, for a source of versions,
// which version it is; a robots.txt with no version at t (t before the
// first) gives nil for both.
func (rs *Source) At(t time.Time) (*Robots, *Version) {
	if rs.History == nil {
		return rs.Robots, nil
	}
	i := rs.History.At(t)
	if i < 0 {
		return nil, nil
	}
	return rs.History.Versions[i].Robots, &rs.History.Versions[i]
}

// ParseSource parses the robots.txt data read from name (a file path,
// "stdin" or a URL); file is the local path when it was a file, else "".
func ParseSource(name, file string, data []byte) *Source {
	return &Source{Name: name, File: file, Robots: Parse(data)}
}

// OnFetchError says what a robots.txt URL that cannot be fetched now (a
// network error, a timeout, a 5xx) stands for.
type OnFetchError int8

const (
	// FetchFail makes it an [*UnavailableError]: a gate checks the file,
	// not the network.
	FetchFail OnFetchError = iota
	// FetchRFC reads it as RFC 9309 §2.3.1.4 tells a crawler to: disallow
	// all.
	FetchRFC
	// FetchSkip leaves the robots check out (Source.Unavailable set,
	// Source.Robots nil): the auditor's trouble today says nothing about
	// what the crawler found when it fetched.
	FetchSkip
)

// Fetcher fetches robots.txt URLs and applies RFC 9309 §2.3.1 to the
// answer. The zero value uses a default client and [FetchFail].
type Fetcher struct {
	// Client makes the requests; nil means a default client. Its Timeout
	// is lowered to [FetchTimeout] when it is 0 or longer, and its
	// redirect policy is replaced by one that follows [MaxRedirects].
	Client *http.Client
	// UserAgent is sent as the User-Agent header when not "".
	UserAgent string
	// OnError says what a URL that cannot be fetched now stands for.
	OnError OnFetchError
}

// Fetch fetches the robots.txt at rawURL. A 2xx answer is parsed (at most
// [MaxBytes] of it); a 4xx, more than [MaxRedirects] redirects or a
// redirect without a usable Location gives [AllowAll], with Source.Note
// saying so; a 5xx, a timeout or a network error is what f.OnError says.
//
// It returns an error wrapping [ErrBadURL] for an unusable URL, an
// [*UnavailableError] under [FetchFail], and one wrapping ctx.Err() when
// ctx ends first.
func (f *Fetcher) Fetch(ctx context.Context, rawURL string) (*Source, error) {
	u, err := url.Parse(rawURL)
	if s := urlarg.Scheme(rawURL); err != nil || u.Host == "" || s != "http" && s != "https" {
		return nil, fmt.Errorf("robots.txt URL %q is %w", rawURL, ErrBadURL)
	}
	var client http.Client
	if f.Client != nil {
		client = *f.Client
	}
	if client.Timeout == 0 || client.Timeout > FetchTimeout {
		client.Timeout = FetchTimeout
	}
	client.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) > MaxRedirects {
			return errTooManyRedirects
		}
		return nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("robots.txt URL %q is %w (%v)", rawURL, ErrBadURL, err)
	}
	if f.UserAgent != "" {
		req.Header.Set("User-Agent", f.UserAgent)
	}
	req.Header.Set("Accept", "text/plain, */*;q=0.5")

	unavailable := func(what string) (*Source, error) {
		switch f.OnError {
		case FetchRFC:
			note := fmt.Sprintf("%s %s: RFC 9309 §2.3.1.4 says disallow all", rawURL, what)
			return &Source{Name: rawURL, Robots: DisallowAll(note), Note: note}, nil
		case FetchSkip:
			return &Source{Name: rawURL, Unavailable: what}, nil
		}
		return nil, &UnavailableError{URL: rawURL, Reason: what}
	}
	allow := func(note string) (*Source, error) {
		return &Source{Name: rawURL, Robots: AllowAll(note), Note: note}, nil
	}
	interrupted := func() error {
		return fmt.Errorf("fetching robots.txt %s: %w", rawURL, ctx.Err())
	}

	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, interrupted()
		}
		if errors.Is(err, errTooManyRedirects) {
			return allow(fmt.Sprintf("%s redirected more than %d times: RFC 9309 §2.3.1.2 lets a crawler treat it as unavailable, so allow all", rawURL, MaxRedirects))
		}
		return unavailable("could not be fetched (" + netError(err) + ")")
	}
	defer resp.Body.Close()
	code := resp.StatusCode
	switch {
	case code >= 200 && code <= 299:
		data, err := io.ReadAll(io.LimitReader(resp.Body, MaxBytes+1))
		if err != nil {
			if ctx.Err() != nil {
				return nil, interrupted()
			}
			return unavailable(fmt.Sprintf("answered %d but the body could not be read (%s)", code, netError(err)))
		}
		return ParseSource(rawURL, "", data), nil
	case code >= 400 && code <= 499:
		return allow(fmt.Sprintf("%s answered %d: RFC 9309 §2.3.1.3 says allow all", rawURL, code))
	case code >= 500 && code <= 599:
		return unavailable(fmt.Sprintf("answered %d", code))
	case code >= 300 && code <= 399:
		// A redirect that could not be followed (no Location, 304 and the
		// like): the file was not reached, as after too many redirects.
		return allow(fmt.Sprintf("%s answered %d without a usable redirect: RFC 9309 §2.3.1.2 lets a crawler treat it as unavailable, so allow all", rawURL, code))
	}
	// 1xx and codes past 599: no answer a crawler could use.
	return unavailable(fmt.Sprintf("answered %d", code))
}

// netError shortens a client error to its cause: the URL is already in the
// message around it.
func netError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "timed out"
	}
	return err.Error()
}
