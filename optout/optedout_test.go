package optout

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/fail"
)

func TestParseOptedOut(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 30, 0, 0, time.UTC)
	when := func(v string) (time.Time, error) {
		if v == "2026-12-01T09:30:00Z" {
			return at, nil
		}
		return time.Time{}, fail.Usagef("bad time %q", v)
	}
	got, err := ParseOptedOut([]string{"Example.COM=2026-12-01T09:30:00Z", "googlebot:bücher.example=2026-12-01T09:30:00Z"},
		[]string{"lohisoftbot", "googlebot"}, 0, when)
	if err == nil || !strings.Contains(err.Error(), "the run audits 2 crawlers; name the one opted out of: --opted-out lohisoftbot:Example.COM=") {
		t.Fatalf("an unnamed value with two crawlers: %v, %v", got, err)
	}
	got, err = ParseOptedOut([]string{"lohisoftbot:Example.COM=2026-12-01T09:30:00Z", "googlebot:bücher.example=2026-12-01T09:30:00Z"},
		[]string{"lohisoftbot", "googlebot"}, 48*time.Hour, when)
	if err != nil {
		t.Fatal(err)
	}
	if t1, ok := got["lohisoftbot"].For("example.com"); !ok || !t1.Equal(at) {
		t.Errorf("lohisoftbot's example.com: %v, %v", t1, ok)
	}
	if _, ok := got["googlebot"].For("xn--bcher-kva.example"); !ok {
		t.Errorf("googlebot's sites %v, want the punycode name", got["googlebot"])
	}
	for _, tc := range []struct {
		values []string
		grace  time.Duration
		msg    string
	}{
		{nil, -time.Hour, "--opt-out-grace -1h0m0s: give a duration of 0 or more"},
		{[]string{"example.com"}, 0, `--opted-out "example.com": not SITE=TIME`},
		{[]string{"=2026-12-01T09:30:00Z"}, 0, "not SITE=TIME"},
		{[]string{"bingbot:example.com=2026-12-01T09:30:00Z"}, 0, "crawler bingbot is not audited in this run"},
		{[]string{"exa mple.com=2026-12-01T09:30:00Z"}, 0, `--opted-out "exa mple.com=2026-12-01T09:30:00Z": `},
		{[]string{"example.com=yesterday"}, 0, `bad time "yesterday"`},
		{[]string{"example.com=2026-12-01T09:30:00Z", "EXAMPLE.com=2026-12-02"}, 0, "bad time"},
	} {
		_, err := ParseOptedOut(tc.values, []string{"lohisoftbot"}, tc.grace, when)
		if fail.KindOf(err) != fail.Usage || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%q (grace %s): %v, want a usage error with %q", tc.values, tc.grace, err, tc.msg)
		}
	}
	twice := func(v string) (time.Time, error) { return at.Add(time.Duration(len(v)) * time.Hour), nil }
	if _, err := ParseOptedOut([]string{"example.com=a", "EXAMPLE.com=bb"}, []string{"lohisoftbot"}, 0, twice); err == nil || !strings.Contains(err.Error(), "two times for example.com of lohisoftbot") {
		t.Errorf("two times for one site: %v", err)
	}
}

func TestSender(t *testing.T) {
	for _, tc := range []struct {
		given       bool
		from, email string
		want, how   string
	}{
		{true, "Ops <ops@example.org>", "x@example.net", "ops@example.org", ""},
		{false, "", " Web <web@example.net> ", "web@example.net", "$EMAIL"},
		{false, "", "", "webmaster@example.com", "webmaster@ the first domain"},
	} {
		a, how, err := Sender(tc.given, tc.from, tc.email, "example.com")
		if err != nil || a.Address != tc.want || how != tc.how {
			t.Errorf("Sender(%v, %q, %q) = %v, %q, %v; want %s, %q", tc.given, tc.from, tc.email, a, how, err, tc.want, tc.how)
		}
	}
	if _, _, err := Sender(false, "", "not an address", "example.com"); fail.KindOf(err) != fail.Usage || !strings.HasPrefix(err.Error(), "$EMAIL: ") {
		t.Errorf("a bad $EMAIL: %v", err)
	}
	if _, _, err := Sender(true, "a@b\r\nBcc: c@d", "", "example.com"); fail.KindOf(err) != fail.Usage || !strings.HasPrefix(err.Error(), "--from: ") {
		t.Errorf("an injected --from: %v", err)
	}
	var fe *fail.Error
	if _, _, err := Sender(true, "", "", "example.com"); !errors.As(err, &fe) {
		t.Errorf("an empty --from: %v", err)
	}
}

func TestAuditFlags(t *testing.T) {
	at := time.Date(2026, 12, 1, 9, 30, 0, 500, time.FixedZone("CET", 3600))
	if got := AuditFlags("lohisoftbot", true, []string{"a.example", "b.example"}, at); got != "--opted-out a.example=2026-12-01T08:30:00Z --opted-out b.example=2026-12-01T08:30:00Z" {
		t.Errorf("default crawler: %s", got)
	}
	if got := AuditFlags("googlebot", false, []string{"a.example"}, at); got != "--opted-out googlebot:a.example=2026-12-01T08:30:00Z" {
		t.Errorf("another crawler: %s", got)
	}
}
