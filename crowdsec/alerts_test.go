package crowdsec

import (
	"encoding/json"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func spoofer(addr, ua string) Evidence {
	return Evidence{
		Addr: netip.MustParseAddr(addr), Crawler: "lohisoftbot", Reason: "ptr-mismatch",
		PTR: []string{"crawl-7.evil.example"}, Forward: []string{addr}, Hits: 12,
		FirstSeen: time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC), LastSeen: time.Date(2026, 11, 20, 11, 30, 0, 0, time.UTC),
		UserAgent: ua,
	}
}

func TestNewAlert(t *testing.T) {
	now := time.Date(2026, 12, 1, 8, 0, 0, 0, time.FixedZone("x", 3600))
	for _, tc := range []struct {
		name         string
		ban          Ban
		scope, value string
		message      string
	}{
		{"ipv4", Ban{Prefix: netip.MustParsePrefix("203.0.113.7/32"), Crawler: "lohisoftbot", Evidence: []Evidence{spoofer("203.0.113.7", "Mozilla/5.0 (compatible; LohiSoftBot/1.0)")}},
			ScopeIP, "203.0.113.7",
			`lohibot-audit 1.2.3: 203.0.113.7 claimed to be lohisoftbot in 12 requests (2026-11-20T10:00:00Z to 2026-11-20T11:30:00Z) and is not: ptr-mismatch, PTR crawl-7.evil.example, forward 203.0.113.7, User-Agent "Mozilla/5.0 (compatible; LohiSoftBot/1.0)"`},
		{"ipv6 range of two", Ban{Prefix: netip.MustParsePrefix("2001:db8:1:2::/64"), Crawler: "googlebot",
			Evidence: []Evidence{spoofer("2001:db8:1:2::7", "x"), spoofer("2001:db8:1:2::8", "y")}},
			ScopeRange, "2001:db8:1:2::/64",
			`lohibot-audit 1.2.3: 2001:db8:1:2::/64 holds 2001:db8:1:2::7, which claimed to be lohisoftbot in 12 requests (2026-11-20T10:00:00Z to 2026-11-20T11:30:00Z) and is not: ptr-mismatch, PTR crawl-7.evil.example, forward 2001:db8:1:2::7, User-Agent "x"; and 1 more address`},
		{"hostile user agent", Ban{Prefix: netip.MustParsePrefix("198.51.100.1/32"), Crawler: "lohisoftbot",
			Evidence: []Evidence{{Addr: netip.MustParseAddr("198.51.100.1"), Crawler: "lohisoftbot", Reason: "no-ptr", UserAgent: "LohiSoftBot\n\x1b[31mred\u202e"}}},
			ScopeIP, "198.51.100.1",
			`lohibot-audit 1.2.3: 198.51.100.1 claimed to be lohisoftbot and is not: no-ptr, PTR none, forward none, User-Agent "LohiSoftBot\n\x1b[31mred\u202e"`},
		{"no evidence", Ban{Prefix: netip.MustParsePrefix("198.51.100.2/32"), Crawler: "lohisoftbot"},
			ScopeIP, "198.51.100.2", `lohibot-audit 1.2.3: 198.51.100.2 claimed to be lohisoftbot and is not`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := NewAlert(tc.ban, 7*24*time.Hour, now, "1.2.3")
			if len(a.Decisions) != 1 {
				t.Fatalf("%d decisions", len(a.Decisions))
			}
			d := a.Decisions[0]
			want := Decision{Duration: "168h0m0s", Origin: "cscli", Scenario: "lohibot-audit/spoofed-" + tc.ban.Crawler, Scope: tc.scope, Type: "ban", Value: tc.value}
			if d != want {
				t.Errorf("decision %+v, want %+v", d, want)
			}
			if a.Scenario != want.Scenario || a.Source.Scope != tc.scope || a.Source.Value != tc.value {
				t.Errorf("alert scenario %q, source %+v", a.Scenario, a.Source)
			}
			if (tc.scope == ScopeIP) != (a.Source.IP == tc.value) || (tc.scope == ScopeRange) != (a.Source.Range == tc.value) {
				t.Errorf("source ip/range: %+v", a.Source)
			}
			if a.StartAt != "2026-12-01T07:00:00Z" || a.StopAt != a.StartAt {
				t.Errorf("start_at %q stop_at %q", a.StartAt, a.StopAt)
			}
			if a.Message != tc.message {
				t.Errorf("message\n got %s\nwant %s", a.Message, tc.message)
			}
			for _, c := range a.Message {
				if c < 0x20 || c >= 0x7f {
					t.Errorf("message holds %q", c)
				}
			}
			// Every field the Local API requires is in the JSON, events as
			// an empty list.
			data, err := json.Marshal([]Alert{a})
			if err != nil {
				t.Fatal(err)
			}
			var back []map[string]any
			if err := json.Unmarshal(data, &back); err != nil {
				t.Fatal(err)
			}
			for _, k := range []string{"capacity", "decisions", "events", "events_count", "leakspeed", "message", "scenario", "scenario_hash", "scenario_version", "simulated", "source", "start_at", "stop_at"} {
				if _, ok := back[0][k]; !ok {
					t.Errorf("field %s missing from %s", k, data)
				}
			}
			if ev, ok := back[0]["events"].([]any); !ok || len(ev) != 0 {
				t.Errorf("events = %v, want []", back[0]["events"])
			}
		})
	}
}

func TestMessageBounded(t *testing.T) {
	e := spoofer("203.0.113.9", strings.Repeat("\x00A", 5000))
	e.PTR = []string{strings.Repeat("p", 3000), strings.Repeat("q", 3000)}
	b := Ban{Prefix: netip.MustParsePrefix("203.0.113.9/32"), Crawler: "lohisoftbot", Evidence: []Evidence{e}}
	m := b.Message("v")
	if len(m) > maxMessage || !strings.Contains(m, `..."`) || strings.ContainsRune(m, 0) {
		t.Errorf("message of %d bytes: %q", len(m), m)
	}
}
