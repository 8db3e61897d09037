package crowdsec

import (
	"errors"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/fail"
)

func TestAgent(t *testing.T) {
	clock := func() time.Time { return time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC) }
	a := Agent{Version: "1.2.3", Now: clock}
	creds := Credentials{URL: "http://127.0.0.1:8080", Login: "m", Password: "p"}
	p := a.Pusher(creds, []string{Scenario("googlebot")}, time.Hour)
	if p.Client.UserAgent != "lohibot-audit/1.2.3" || p.Version != "1.2.3" || p.TTL != time.Hour ||
		!slices.Equal(p.Client.Scenarios, []string{ScenarioPrefix + "spoofed-googlebot"}) || p.Now().Year() != 2026 || p.LookupEach != 0 {
		t.Errorf("pusher %+v, client %+v", p, p.Client)
	}
	q := a.Queue(creds, []string{"lohisoftbot", "bingbot"}, 2*time.Hour, func(string) {})
	want := []string{Scenario("lohisoftbot"), Scenario("bingbot")}
	if q.Pusher.LookupEach >= 0 || q.Pusher.TTL != 2*time.Hour || !slices.Equal(q.Pusher.Client.Scenarios, want) || q.Say == nil {
		t.Errorf("queue's pusher %+v: want each ban looked up, the crawlers' scenarios %q", q.Pusher, want)
	}
}

func TestScenariosOf(t *testing.T) {
	b := func(c string) Ban { return Ban{Prefix: netip.MustParsePrefix("192.0.2.1/32"), Crawler: c} }
	got := ScenariosOf([]Ban{b("googlebot"), b("bingbot"), b("googlebot")})
	if want := []string{Scenario("googlebot"), Scenario("bingbot")}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if got := ScenariosOf(nil); got != nil {
		t.Errorf("no bans: %q", got)
	}
}

func TestResultSummary(t *testing.T) {
	for _, tc := range []struct {
		r    Result
		want string
	}{
		{Result{}, "0 decisions added, 0 extended, 0 in force already"},
		{Result{Added: 1, Extended: 2, Kept: 3}, "1 decision added, 2 extended, 3 in force already"},
		{Result{Added: 2, Removed: 1}, "2 decisions added, 0 extended, 0 in force already, 1 older decision ended"},
	} {
		if got := tc.r.Summary(); got != tc.want {
			t.Errorf("%+v: %q, want %q", tc.r, got, tc.want)
		}
	}
}

// TestResultUnfinished: a push cut short says how many decisions are in
// force of how many, wraps the cause, and is an output not written, with
// what to do.
func TestResultUnfinished(t *testing.T) {
	cause := errors.New("POST /v1/alerts: 503 Service Unavailable")
	r := Result{Done: []netip.Prefix{netip.MustParsePrefix("192.0.2.1/32")}}
	err := r.Unfinished(3, cause)
	if err.Error() != "crowdsec: 1 of 3 decisions in force, then: POST /v1/alerts: 503 Service Unavailable" ||
		!errors.Is(err, cause) || fail.KindOf(err) != fail.Unwritten || !strings.Contains(fail.HintOf(err), "nothing is pushed twice") {
		t.Errorf("%v (kind %d, hint %q)", err, fail.KindOf(err), fail.HintOf(err))
	}
	if err := (Result{}).Unfinished(1, cause); !strings.HasPrefix(err.Error(), "crowdsec: 0 of 1 decision in force") {
		t.Errorf("one ban: %v", err)
	}
}
