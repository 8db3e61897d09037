package crowdsec

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// The real Local API's answers are tested in lapi_test.go; this file gives
// the client the answers a real one gives rarely: an expired token, a
// failure halfway, garbage.

// odd is a Local API that misbehaves as told.
type odd struct {
	mu       sync.Mutex
	logins   int
	tokens   []string // tokens seen on /v1/alerts
	posted   []string // values pushed
	expireAt int      // the alerts request that answers 401 once
	failPost int      // the POST that answers 500 (1-based; 0 none)
	posts    int
	alerts   int
	get      string // answer to GET /v1/alerts
	date     string // the Date of every answer, when set
	stamps   []string
}

func (o *odd) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.date != "" {
		w.Header().Set("Date", o.date)
	}
	switch {
	case r.URL.Path == "/v1/watchers/login":
		o.logins++
		json.NewEncoder(w).Encode(map[string]any{"code": 200, "expire": "x", "token": "t" + string(rune('0'+o.logins))})
	case r.URL.Path == "/v1/alerts":
		o.alerts++
		o.tokens = append(o.tokens, r.Header.Get("Authorization"))
		if o.alerts == o.expireAt {
			w.WriteHeader(http.StatusUnauthorized)
			io.WriteString(w, `{"code":401,"message":"Token is expired"}`)
			return
		}
		if r.Method == http.MethodGet {
			io.WriteString(w, o.get)
			return
		}
		o.posts++
		if o.posts == o.failPost {
			w.WriteHeader(http.StatusInternalServerError)
			io.WriteString(w, "{\"message\":\"database is locked\\n\\u001b[31m\"}")
			return
		}
		var alerts []Alert
		json.NewDecoder(r.Body).Decode(&alerts)
		var out []string
		for _, a := range alerts {
			o.posted = append(o.posted, a.Decisions[0].Value)
			o.stamps = append(o.stamps, a.StopAt)
			out = append(out, "1")
		}
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(out)
	default:
		w.WriteHeader(http.StatusNotFound)
	}
}

func oddClient(t *testing.T, o *odd) *Client {
	srv := httptest.NewServer(o)
	t.Cleanup(srv.Close)
	return &Client{Credentials: Credentials{URL: srv.URL, Login: "m", Password: "p"}}
}

func TestClientLogsInAgainWhenTheTokenExpires(t *testing.T) {
	o := &odd{expireAt: 2, get: "[]"}
	c := oddClient(t, o)
	ctx := context.Background()
	for range 3 {
		if _, err := c.ActiveDecisions(ctx, Filter{}); err != nil {
			t.Fatal(err)
		}
	}
	if o.logins != 2 || strings.Join(o.tokens, ",") != "Bearer t1,Bearer t1,Bearer t2,Bearer t2" {
		t.Errorf("logins %d, tokens %v", o.logins, o.tokens)
	}
}

func TestPushHalfwayPushesNothingTwice(t *testing.T) {
	o := &odd{failPost: 2, get: "[]"}
	p := &Pusher{Client: oddClient(t, o), TTL: time.Hour, Batch: 2}
	bans := []Ban{ban("203.0.113.1/32"), ban("203.0.113.2/32"), ban("203.0.113.3/32"), ban("203.0.113.4/32")}
	res, err := p.Push(context.Background(), bans)
	if !errors.Is(err, ErrUnavailable) || res.Added != 2 || len(res.Done) != 2 {
		t.Fatalf("first push: %+v, %v", res, err)
	}
	// The error is one clean line: the answer's control bytes escaped.
	if msg := err.Error(); strings.ContainsAny(msg, "\n\x1b") || !strings.Contains(msg, "500 internal server error: database is locked") {
		t.Errorf("error %q", msg)
	}
	res, err = p.Push(context.Background(), bans)
	if err != nil || res.Added != 2 || res.Kept != 2 {
		t.Fatalf("second push: %+v, %v", res, err)
	}
	if got := strings.Join(o.posted, " "); got != "203.0.113.1 203.0.113.2 203.0.113.3 203.0.113.4" {
		t.Errorf("posted %s", got)
	}
}

func TestActiveDecisionsReadsOnlyWhatCounts(t *testing.T) {
	for _, tc := range []struct {
		name, answer string
		want         []Active
		err          error
	}{
		{"null", "null", nil, nil},
		{"empty", "[]", nil, nil},
		{"ended, other types and simulated left out; an unreadable duration counts as ending soon", `[
			{"id":1,"decisions":[
				{"id":10,"duration":"3h0m0s","origin":"cscli","scenario":"s","scope":"Ip","type":"ban","value":"203.0.113.1"},
				{"id":11,"duration":"-5s","origin":"cscli","scenario":"s","scope":"Ip","type":"ban","value":"203.0.113.2"},
				{"id":12,"duration":"1h","origin":"cscli","scenario":"s","scope":"Ip","type":"captcha","value":"203.0.113.3"},
				{"id":13,"duration":"1h","origin":"cscli","scenario":"s","scope":"Ip","type":"ban","value":"203.0.113.4","simulated":true},
				{"id":14,"duration":"soon","origin":"cscli","scenario":"s","scope":"Range","type":"ban","value":"2001:db8::/64"}],
			 "events":null,"meta":[{"key":"k","value":"v"}]}]`,
			[]Active{{ID: 10, Scope: "Ip", Value: "203.0.113.1", Type: "ban", Origin: "cscli", Scenario: "s", Left: 3 * time.Hour},
				{ID: 14, Scope: "Range", Value: "2001:db8::/64", Type: "ban", Origin: "cscli", Scenario: "s", Left: -1}}, nil},
		{"not an array", `{"message":"x"}`, nil, ErrBadAnswer},
		{"cut short", `[{"id":1,"decisions":[`, nil, ErrBadAnswer},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := oddClient(t, &odd{get: tc.answer})
			got, err := c.ActiveDecisions(context.Background(), Filter{})
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tc.want) {
				t.Fatalf("got %+v, want %+v", got, tc.want)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("got %+v, want %+v", got[i], tc.want[i])
				}
			}
		})
	}
}

// A decision lasts from its alert's stop_at by the Local API's clock:
// alerts are stamped by that clock, as the Date of its answers tells, when
// the host's is off by more than two seconds.
func TestAlertsStampedByTheLocalAPIClock(t *testing.T) {
	for _, tc := range []struct {
		local time.Time
		want  string
	}{
		{time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC), "2026-12-04T16:00:00Z"},  // a month behind
		{time.Date(2026, 12, 4, 16, 0, 1, 0, time.UTC), "2026-12-04T16:00:01Z"}, // a second ahead: its own
	} {
		o := &odd{get: "[]", date: "Fri, 04 Dec 2026 16:00:00 GMT"}
		c := oddClient(t, o)
		c.Now = func() time.Time { return tc.local }
		p := &Pusher{Client: c, TTL: time.Hour, Now: c.Now}
		if _, err := p.Push(context.Background(), []Ban{ban("203.0.113.1/32")}); err != nil {
			t.Fatal(err)
		}
		if len(o.stamps) != 1 || o.stamps[0] != tc.want {
			t.Errorf("local clock %s: stop_at %v, want %s", tc.local, o.stamps, tc.want)
		}
	}
}
