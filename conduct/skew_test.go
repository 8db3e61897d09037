package conduct

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/robots"
)

// TestClockSkew: between requests two servers logged, a timing violation
// must hold however far apart their clocks are (up to ClockSkew); between
// two requests of one server, the skew changes nothing.
func TestClockSkew(t *testing.T) {
	// Starts and durations are logged to the millisecond: t0 and the 7ms
	// added to each duration keep their units so.
	t0 := time.Date(2026, 12, 1, 10, 0, 0, int(time.Millisecond), time.UTC)
	at := func(file string, line int64, ms int, dur time.Duration, path string, status int) Hit {
		return Hit{Site: "a.example", File: file, Line: line, IP: "79.139.58.98", Target: path, Status: status,
			Time: t0.Add(time.Duration(ms) * time.Millisecond), Resolution: time.Millisecond,
			HasDuration: true, StartLogged: true, Duration: dur + 7*time.Millisecond}
	}
	clock := func(file string) string { return file[:4] } // web1, web2
	pause := Config{MinPause: time.Second, RobotsOff: true}
	cases := []struct {
		name string
		cfg  Config
		hits []Hit
		want map[time.Duration][]string // by skew: kind:file:line
	}{
		{"a pause of 400ms between servers", pause, []Hit{
			at("web1.log", 1, 0, 100*time.Millisecond, "/a", 200),
			at("web2.log", 1, 500, 100*time.Millisecond, "/b", 200),
		}, map[time.Duration][]string{0: {"pause:web2.log:1"}, 500 * time.Millisecond: {"pause:web2.log:1"}, time.Second: nil}},
		{"a pause of 400ms on one server", pause, []Hit{
			at("web1.log", 1, 0, 100*time.Millisecond, "/a", 200),
			at("web1.log", 2, 500, 100*time.Millisecond, "/b", 200),
			at("web2.log", 1, 60_000, 100*time.Millisecond, "/c", 200),
		}, map[time.Duration][]string{0: {"pause:web1.log:2"}, time.Hour: {"pause:web1.log:2"}}},
		{"the latest request of the same server decides", pause, []Hit{
			at("web1.log", 1, 0, 900*time.Millisecond, "/a", 200),
			at("web2.log", 1, 1000, 100*time.Millisecond, "/b", 200),
			at("web1.log", 2, 1300, 100*time.Millisecond, "/c", 200),
		}, map[time.Duration][]string{0: {"pause:web2.log:1", "pause:web1.log:2"}, time.Second: {"pause:web1.log:2"}}},
		{"requests at once by 1.5s", pause, []Hit{
			at("web1.log", 1, 0, 2*time.Second, "/a", 200),
			at("web2.log", 1, 500, 1200*time.Millisecond, "/b", 200),
			// With 2s, they may not have overlapped, but then one began less
			// than the least pause after the other ended.
		}, map[time.Duration][]string{0: {"concurrency:web2.log:1"}, time.Second: {"concurrency:web2.log:1"}, 2 * time.Second: {"pause:web2.log:1"}, 5 * time.Second: nil}},
		{"a backoff of 29.5s", Config{MinBackoff: 30 * time.Second, RobotsOff: true}, []Hit{
			at("web1.log", 1, 0, 0, "/a", 503),
			at("web2.log", 1, 29_500, 0, "/b", 200),
		}, map[time.Duration][]string{0: {"backoff:web2.log:1"}, 400 * time.Millisecond: {"backoff:web2.log:1"}, time.Second: nil}},
		{"a budget of 2 pages in 10s, by 9.5s", Config{Budget: 2, BudgetWindow: 10 * time.Second, RobotsOff: true}, []Hit{
			at("web1.log", 1, 0, 0, "/a", 200),
			at("web2.log", 1, 4_000, 0, "/b", 200),
			at("web1.log", 2, 9_500, 0, "/c", 200),
		}, map[time.Duration][]string{0: {"budget:web1.log:2"}, 400 * time.Millisecond: {"budget:web1.log:2"}, time.Second: nil}},
		{"a page 0.5s after /robots.txt answered 503", Config{}, []Hit{
			at("web1.log", 1, 0, 0, "/robots.txt", 503),
			at("web2.log", 1, 500, 0, "/a", 200),
		}, map[time.Duration][]string{0: {"robots-unavailable:web2.log:1"}, 400 * time.Millisecond: {"robots-unavailable:web2.log:1"}, time.Second: nil}},
		{"a 403, then a 200 0.5s later", Config{RobotsOff: true}, []Hit{
			at("web1.log", 1, 0, 0, "/x", 403),
			at("web2.log", 1, 500, 0, "/x", 200),
		}, map[time.Duration][]string{0: {"auth:web2.log:1"}, 400 * time.Millisecond: {"auth:web2.log:1"}, time.Second: nil}},
	}
	for _, tc := range cases {
		for skew, want := range tc.want {
			cfg := tc.cfg
			cfg.Clock, cfg.ClockSkew = clock, skew
			vs, _ := Check(tc.hits, cfg)
			var got, details []string
			for _, v := range vs {
				got = append(got, fmt.Sprintf("%s:%s:%d", v.Kind, v.File, v.Line))
				details = append(details, v.Detail)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s, skew %s: %q, want %q (%q)", tc.name, skew, got, want, details)
			}
		}
	}
}

// TestClockSkewAllow4xx: a 4xx answer for /robots.txt allows every page
// for 24 h; on a site that two servers logged, a page just past the day
// on the other server's clock may have been within it, by up to the
// skew, and is not held against the crawler.
func TestClockSkewAllow4xx(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	at := func(file string, d time.Duration, path string, status int) Hit {
		return Hit{Site: "a.example", File: file, Line: 1, IP: "79.139.58.98", Target: path, Status: status,
			Time: t0.Add(d), Resolution: time.Second}
	}
	rb := robots.Parse([]byte("User-agent: *\nDisallow: /private\n"))
	// Logged to the second without durations, the 404 surely ended by
	// t0+1s, and the page surely started at t0+24h+2s or later: 24h and
	// 1s after it at the least.
	hits := []Hit{
		at("web1.log", 0, "/robots.txt", 404),
		at("web2.log", 24*time.Hour+2*time.Second, "/private/a", 200),
	}
	for _, tc := range []struct {
		skew  time.Duration
		want  []string
		notes int
	}{
		{0, []string{"robots:web2.log:1"}, 0},
		{998 * time.Millisecond, []string{"robots:web2.log:1"}, 0},
		{time.Second, nil, 1}, // half a second either way: within the day
		{time.Hour, nil, 1},
	} {
		cfg := Config{Robots: func(string) *robots.Robots { return rb },
			Clock: func(file string) string { return file[:4] }, ClockSkew: tc.skew}
		vs, sites := Check(hits, cfg)
		var got []string
		for _, v := range vs {
			if v.Kind == KindRobots { // robots-not-fetched is the matter of TestClockSkew
				got = append(got, fmt.Sprintf("%s:%s:%d", v.Kind, v.File, v.Line))
			}
		}
		notes := 0
		for _, n := range sites[0].RobotsNotes {
			if strings.HasPrefix(n, "1 page within 24h after /robots.txt answered 4xx") {
				notes++
			}
		}
		if !slices.Equal(got, tc.want) || notes != tc.notes {
			t.Errorf("skew %s: violations %q, 4xx notes %d; want %q, %d (%+v)", tc.skew, got, notes, tc.want, tc.notes, sites[0].RobotsNotes)
		}
	}
	// One server's clock: the day is the day, whatever the skew.
	one := slices.Clone(hits)
	one[1].File = "web1.log"
	one[1].Line = 2
	vs, _ := Check(one, Config{Robots: func(string) *robots.Robots { return rb },
		Clock: func(file string) string { return file[:4] }, ClockSkew: time.Hour})
	if len(vs) == 0 || vs[0].Kind != KindRobots {
		t.Errorf("one server, skew 1h: %+v, want the robots violation", vs)
	}
}
