package crowdsec

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// DefaultTimeout bounds one request to the Local API, and
// DefaultListTimeout one listing of every decision of a scenario: a Local
// API takes 21 s to list 10,000 alerts, and four times that for twice as
// many.
const (
	DefaultTimeout     = 30 * time.Second
	DefaultListTimeout = 15 * time.Minute
)

// Errors of the client. Callers match them with errors.Is; every error
// the client returns wraps one of them or the context's.
var (
	// ErrUnavailable means the Local API could not be reached or did not
	// answer (connection refused, timeout, a 5xx or 429 answer): trying
	// again later may work.
	ErrUnavailable = errors.New("crowdsec local api unavailable")
	// ErrRefused means the Local API answered and refused (a wrong
	// password, a machine not validated, a request it does not take).
	ErrRefused = errors.New("crowdsec local api refused")
	// ErrBadAnswer means an answer could not be read.
	ErrBadAnswer = errors.New("crowdsec local api answer not understood")
)

// APIError is a request that failed: what was asked, the HTTP status when
// there was an answer, and the Local API's message.
type APIError struct {
	// Op is the method and path, such as "POST /v1/alerts".
	Op string
	// URL is the Local API's base URL.
	URL string
	// Status is the HTTP status, 0 when there was no answer.
	Status int
	// Message is the answer's message, or the network error, cleaned.
	Message string
	// Kind is ErrUnavailable, ErrRefused or ErrBadAnswer.
	Kind error
}

func (e *APIError) Error() string {
	what := "no answer"
	if e.Status != 0 {
		what = fmt.Sprintf("%d %s", e.Status, strings.ToLower(http.StatusText(e.Status)))
	}
	if e.Message != "" {
		what += ": " + e.Message
	}
	return fmt.Sprintf("%s %s: %s", e.Op, e.URL, what)
}

func (e *APIError) Unwrap() error { return e.Kind }

// Client talks to a CrowdSec Local API as a machine: it logs in with the
// machine's login and password (POST /v1/watchers/login) and sends the
// token it gets with every request, logging in again when it expires. It
// is safe for concurrent use.
type Client struct {
	// Credentials are the machine's.
	Credentials Credentials
	// HTTP sends the requests; nil means a client of its own (with the
	// credentials' CA certificate when they name one).
	HTTP *http.Client
	// UserAgent is sent with every request.
	UserAgent string
	// Scenarios are told to the Local API at login: the scenarios the
	// machine pushes alerts for.
	Scenarios []string
	// Timeout bounds each request, ListTimeout each listing of every
	// decision of a scenario; zero means DefaultTimeout and
	// DefaultListTimeout.
	Timeout, ListTimeout time.Duration
	// Now is the local clock; nil means time.Now.
	Now func() time.Time

	once    sync.Once
	httpErr error
	mu      sync.Mutex
	token   string
	// offset is how far the Local API's clock is ahead of Now, as the Date
	// of its last answer says, when that is more than maxSkew.
	offset time.Duration
}

// maxSkew is the clock difference Clock leaves alone: a Date header counts
// whole seconds.
const maxSkew = 2 * time.Second

func (c *Client) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// Clock is the time by the Local API's clock, as far as the Date of its
// last answer tells (to the second), else by Now. A decision lasts from
// its alert's stop_at by the Local API's clock, so alerts are stamped
// with it: a host whose clock is wrong still bans for the TTL.
func (c *Client) Clock() time.Time {
	c.mu.Lock()
	off := c.offset
	c.mu.Unlock()
	return c.now().Add(off)
}

// noteDate keeps the clock difference an answer's Date header shows.
func (c *Client) noteDate(h http.Header) {
	d, err := http.ParseTime(h.Get("Date"))
	if err != nil {
		return
	}
	off := d.Sub(c.now())
	if off > -maxSkew && off < maxSkew {
		off = 0
	}
	c.mu.Lock()
	c.offset = off
	c.mu.Unlock()
}

// client returns the HTTP client, made once.
func (c *Client) client() (*http.Client, error) {
	c.once.Do(func() {
		if c.HTTP != nil {
			return
		}
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.Proxy = nil // a Local API is the site's own, never behind $HTTP_PROXY
		if c.Credentials.CACert != "" {
			pem, err := os.ReadFile(c.Credentials.CACert)
			if err != nil {
				c.httpErr = fmt.Errorf("%w: ca_cert_path: %v", ErrCredentials, err)
				return
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				c.httpErr = fmt.Errorf("%w: ca_cert_path %s holds no PEM certificate", ErrCredentials, c.Credentials.CACert)
				return
			}
			t.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		}
		c.HTTP = &http.Client{Transport: t}
	})
	return c.HTTP, c.httpErr
}

// Login logs in (again) and keeps the token.
func (c *Client) Login(ctx context.Context) error {
	body := struct {
		MachineID string   `json:"machine_id"`
		Password  string   `json:"password"`
		Scenarios []string `json:"scenarios,omitempty"`
	}{c.Credentials.Login, c.Credentials.Password, c.Scenarios}
	var out struct {
		Token string `json:"token"`
	}
	err := c.do(ctx, http.MethodPost, "/v1/watchers/login", nil, body, false, func(r io.Reader) error {
		return json.NewDecoder(io.LimitReader(r, 1<<20)).Decode(&out)
	})
	if err != nil {
		return err
	}
	if out.Token == "" {
		return &APIError{Op: "POST /v1/watchers/login", URL: c.Credentials.URL, Status: http.StatusOK, Message: "no token in the answer", Kind: ErrBadAnswer}
	}
	c.mu.Lock()
	c.token = out.Token
	c.mu.Unlock()
	return nil
}

// AddAlerts pushes alerts (POST /v1/alerts) and returns the IDs the Local
// API gave them.
func (c *Client) AddAlerts(ctx context.Context, alerts []Alert) ([]string, error) {
	var ids []string
	err := c.do(ctx, http.MethodPost, "/v1/alerts", nil, alerts, true, func(r io.Reader) error {
		return json.NewDecoder(io.LimitReader(r, 16<<20)).Decode(&ids)
	})
	return ids, err
}

// DeleteDecision deletes (ends) the decision with the ID id (DELETE
// /v1/decisions/ID) and returns how many the Local API deleted: 0 when it
// had ended already.
func (c *Client) DeleteDecision(ctx context.Context, id int64) (int, error) {
	var out struct {
		N string `json:"nbDeleted"`
	}
	path := "/v1/decisions/" + strconv.FormatInt(id, 10)
	err := c.do(ctx, http.MethodDelete, path, nil, nil, true, func(r io.Reader) error {
		return json.NewDecoder(io.LimitReader(r, 1<<20)).Decode(&out)
	})
	if err != nil {
		return 0, err
	}
	n, _ := strconv.Atoi(out.N)
	return n, nil
}

// Active is a decision in force, as the Local API reports it.
type Active struct {
	ID       int64
	Scope    string
	Value    string
	Type     string
	Origin   string
	Scenario string
	// Left is the time the decision has left, by the Local API's clock
	// when it answered; negative when Duration could not be read.
	Left time.Duration
}

// Filter chooses the alerts whose decisions ActiveDecisions reports.
// Empty fields choose any.
type Filter struct {
	// Scenario is a decision's scenario.
	Scenario string
	// Scope and Value are the alert's source (what it is about).
	Scope, Value string
}

// ActiveDecisions returns the decisions in force of the alerts the filter
// chooses (GET /v1/alerts with has_active_decision=true and limit=0): only
// those of type ban with time left, of the filter's scenario when it names
// one. A long answer is read as it comes, keeping only those decisions.
func (c *Client) ActiveDecisions(ctx context.Context, f Filter) ([]Active, error) {
	q := url.Values{"has_active_decision": {"true"}, "limit": {"0"}}
	if f.Scenario != "" {
		q.Set("scenario", f.Scenario)
	}
	if f.Scope != "" {
		q.Set("scope", f.Scope)
	}
	if f.Value != "" {
		q.Set("value", f.Value)
	}
	var out []Active
	if f.Value == "" {
		t := c.ListTimeout
		if t <= 0 {
			t = DefaultListTimeout
		}
		ctx = withTimeout(ctx, t)
	}
	err := c.do(ctx, http.MethodGet, "/v1/alerts", q, nil, true, func(r io.Reader) error {
		var err error
		out, err = decodeActive(r, f.Scenario)
		return err
	})
	return out, err
}

// decodeActive reads an array of alerts and keeps their decisions in
// force, of the scenario when it is not empty. A null answer is no alerts.
func decodeActive(r io.Reader, scenario string) ([]Active, error) {
	dec := json.NewDecoder(r)
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if tok == nil {
		return nil, nil
	}
	if d, ok := tok.(json.Delim); !ok || d != '[' {
		return nil, fmt.Errorf("not an array of alerts")
	}
	var out []Active
	for dec.More() {
		var a struct {
			Decisions []Decision `json:"decisions"`
		}
		if err := dec.Decode(&a); err != nil {
			return nil, err
		}
		for _, d := range a.Decisions {
			if d.Type != TypeBan || d.Simulated || (scenario != "" && d.Scenario != scenario) {
				continue
			}
			left, err := time.ParseDuration(d.Duration)
			if err != nil {
				left = -1
			} else if left <= 0 {
				continue
			}
			out = append(out, Active{ID: d.ID, Scope: d.Scope, Value: d.Value, Type: d.Type, Origin: d.Origin, Scenario: d.Scenario, Left: left})
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return out, nil
}

// do sends one request and reads a 2xx answer with read. With auth it
// sends the token, logging in first when there is none, and once more
// when the Local API says the token is no longer good.
func (c *Client) do(ctx context.Context, method, path string, q url.Values, body any, auth bool, read func(io.Reader) error) error {
	for try := 0; ; try++ {
		token := ""
		if auth {
			c.mu.Lock()
			token = c.token
			c.mu.Unlock()
			if token == "" {
				if err := c.Login(ctx); err != nil {
					return err
				}
				c.mu.Lock()
				token = c.token
				c.mu.Unlock()
			}
		}
		err := c.once1(ctx, method, path, q, body, token, read)
		var ae *APIError
		if auth && try == 0 && errors.As(err, &ae) && ae.Status == http.StatusUnauthorized {
			// The token expired (an hour by default): log in again.
			c.mu.Lock()
			if c.token == token {
				c.token = ""
			}
			c.mu.Unlock()
			continue
		}
		return err
	}
}

// once1 sends one request.
func (c *Client) once1(ctx context.Context, method, path string, q url.Values, body any, token string, read func(io.Reader) error) error {
	hc, err := c.client()
	if err != nil {
		return err
	}
	op := method + " " + path
	fail := func(status int, kind error, msg string) error {
		return &APIError{Op: op, URL: c.Credentials.URL, Status: status, Message: msg, Kind: kind}
	}
	u := c.Credentials.URL + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		rd = bytes.NewReader(data)
	}
	t := c.Timeout
	if t <= 0 {
		t = DefaultTimeout
	}
	if lt, ok := ctx.Value(timeoutKey{}).(time.Duration); ok {
		t = max(t, lt)
	}
	ctx, cancel := context.WithTimeout(ctx, t)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return fail(0, ErrRefused, err.Error())
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.UserAgent != "" {
		req.Header.Set("User-Agent", c.UserAgent)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := hc.Do(req)
	if err != nil {
		if ctx.Err() != nil && errors.Is(ctx.Err(), context.Canceled) {
			return ctx.Err()
		}
		return fail(0, ErrUnavailable, netMessage(err))
	}
	defer resp.Body.Close()
	c.noteDate(resp.Header)
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		msg := answerMessage(resp.Body)
		kind := ErrRefused
		if resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusRequestTimeout {
			kind = ErrUnavailable
		}
		return fail(resp.StatusCode, kind, msg)
	}
	if err := read(resp.Body); err != nil {
		if ctx.Err() != nil {
			if errors.Is(ctx.Err(), context.Canceled) {
				return ctx.Err()
			}
			return fail(resp.StatusCode, ErrUnavailable, "the answer was cut short: "+netMessage(err))
		}
		return fail(resp.StatusCode, ErrBadAnswer, clean(firstLine(err.Error()), 200))
	}
	// Drain what is left so that the connection can be used again.
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	return nil
}

// answerMessage is the "message" of an error answer, or its first line,
// cleaned and clipped.
func answerMessage(r io.Reader) string {
	data, _ := io.ReadAll(io.LimitReader(r, 4<<10))
	var m struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(data, &m) == nil && m.Message != "" {
		return clean(m.Message, 200)
	}
	return clean(strings.TrimSpace(firstLine(string(data))), 200)
}

// netMessage says a network error without the URL that APIError already
// names.
func netMessage(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "timed out"
	}
	return clean(err.Error(), 200)
}

// ValueOf is the decision value of p: the address of a single-address
// prefix, else the CIDR range.
func ValueOf(p netip.Prefix) string { return Ban{Prefix: p}.Value() }

// timeoutKey carries a longer timeout for one request.
type timeoutKey struct{}

func withTimeout(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, timeoutKey{}, d)
}
