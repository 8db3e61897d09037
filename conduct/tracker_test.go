package conduct_test

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/conduct"
	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/lohisoft/lohibot-audit/robots"
)

var trackBase = time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)

// hitAt is a genuine hit on site at base+sec seconds.
func hitAt(file string, line int64, site string, sec float64, path string) *parse.Record {
	t := trackBase.Add(time.Duration(sec * float64(time.Second)))
	return &parse.Record{File: file, Line: line, Host: site, Client: netip.MustParseAddr("79.139.58.98"),
		Time: t, Start: t, End: t, Resolution: time.Second, Target: path, Method: "GET", Status: 200}
}

func trackCfg(rb *robots.Robots) conduct.Config {
	return conduct.Config{Token: "LohiSoftBot", Budget: 20, BudgetWindow: 24 * time.Hour, MinPause: time.Second, MinBackoff: 30 * time.Second,
		Robots: func(string) *robots.Robots { return rb }}
}

// add feeds a record to the tracker.
func add(tr *conduct.Tracker, r *parse.Record) []conduct.Violation { return tr.Add(conduct.HitOf(r)) }

// The budget violation comes with the 21st page, the pause violation with
// the second request, each at once.
func TestTrackerReportsAtTheProvingRequest(t *testing.T) {
	tr := conduct.NewTracker(trackCfg(nil))
	for i := range 20 {
		if v := add(tr, hitAt("a.log", int64(i+1), "a.example", float64(i*10), fmt.Sprintf("/p%d", i))); len(v) != 0 {
			t.Fatalf("page %d: %v", i+1, v)
		}
	}
	v := add(tr, hitAt("a.log", 21, "a.example", 200, "/p20"))
	if len(v) != 1 || v[0].Kind != conduct.KindBudget || v[0].Line != 21 {
		t.Fatalf("page 21: %+v, want one budget violation on line 21", v)
	}
	if v := add(tr, hitAt("a.log", 22, "a.example", 210, "/p21")); len(v) != 0 {
		t.Fatalf("page 22 of the same window: %+v, want none (one per window)", v)
	}

	tr = conduct.NewTracker(trackCfg(nil))
	if v := add(tr, hitAt("b.log", 1, "b.example", 0, "/")); len(v) != 0 {
		t.Fatalf("first request: %v", v)
	}
	v = add(tr, hitAt("b.log", 2, "b.example", 0, "/x"))
	if len(v) != 1 || v[0].Kind != conduct.KindPause || v[0].Line != 2 || v[0].Site != "b.example" {
		t.Fatalf("second request in the same second: %+v, want a pause violation on line 2", v)
	}

	// A disallowed page names the deciding robots.txt line as data.
	tr = conduct.NewTracker(trackCfg(robots.Parse([]byte("User-agent: *\nAllow: /\n\nUser-agent: LohiSoftBot\nDisallow: /private # staff\n"))))
	v = add(tr, hitAt("c.log", 1, "c.example", 0, "/private/x"))
	if len(v) != 1 || v[0].Kind != conduct.KindRobots || v[0].RobotsLine != 5 || v[0].RobotsRule != "Disallow: /private" {
		t.Fatalf("disallowed page: %+v, want a robots violation naming line 5 \"Disallow: /private\"", v)
	}
}

// A request sooner after a 429 than its Retry-After asks is a backoff
// violation at that request; one after the wait is not.
func TestTrackerBackoffAtTheRequest(t *testing.T) {
	tr := conduct.NewTracker(trackCfg(nil))
	first := hitAt("b.log", 1, "b.example", 0, "/a")
	first.Status, first.RetryAfter = 429, "120"
	if v := add(tr, first); len(v) != 0 {
		t.Fatalf("the 429 itself: %+v", v)
	}
	v := add(tr, hitAt("b.log", 2, "b.example", 60, "/b"))
	if len(v) != 1 || v[0].Kind != conduct.KindBackoff || v[0].Line != 2 {
		t.Fatalf("60 s after a 429 asking for 120 s: %+v, want one backoff violation on line 2", v)
	}
	if v := add(tr, hitAt("b.log", 3, "b.example", 70, "/c")); len(v) != 0 {
		t.Fatalf("the request after the first one: %+v, want none (the first one settles the wait)", v)
	}
	slow := hitAt("b.log", 4, "b.example", 100, "/d")
	slow.Status = 503
	add(tr, slow)
	if v := add(tr, hitAt("b.log", 5, "b.example", 140, "/e")); len(v) != 0 {
		t.Fatalf("40 s after a 503 without Retry-After, min backoff 30 s: %+v, want none", v)
	}
}

// violationKey is what must agree between the tracker and the batch
// checks: everything, but for the count in a budget violation's detail.
type violationKey struct {
	Kind, Site, IP, File, Path, Detail, RobotsRule string
	Line                                           int64
	RobotsLine                                     int
	Time                                           time.Time
}

func keys(vs []conduct.Violation, kinds map[string]bool) []violationKey {
	var out []violationKey
	for _, v := range vs {
		if kinds[v.Kind] {
			k := violationKey{v.Kind, v.Site, v.IP, v.File, v.Path, v.Detail, v.RobotsRule, v.Line, v.RobotsLine, v.Time}
			if v.Kind == conduct.KindBudget {
				// Check counts the whole window; the tracker the pages so far.
				k.Detail = ""
			}
			out = append(out, k)
		}
	}
	slices.SortFunc(out, func(a, b violationKey) int {
		if c := a.Time.Compare(b.Time); c != 0 {
			return c
		}
		if a.Line != b.Line {
			return int(a.Line - b.Line)
		}
		if a.Kind < b.Kind {
			return -1
		}
		if a.Kind > b.Kind {
			return 1
		}
		return 0
	})
	return out
}

// The tracker agrees with conduct.Check on the same hits in log
// order, for the kinds it checks: random crawls over a few sites, with
// bursts, pauses, quiet spells, durations, credentials and disallowed
// paths.
func TestTrackerAgreesWithCheck(t *testing.T) {
	rb := robots.Parse([]byte("User-agent: LohiSoftBot\nDisallow: /private\n"))
	kinds := map[string]bool{conduct.KindBudget: true, conduct.KindPause: true, conduct.KindConcurrency: true,
		conduct.KindRobots: true, conduct.KindAuth: true, conduct.KindBackoff: true}
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 7))
		cfg := trackCfg(rb)
		cfg.Budget = 1 + rng.IntN(25)
		cfg.BudgetWindow = time.Duration(1+rng.IntN(120)) * time.Minute
		cfg.MinPause = time.Duration(rng.IntN(3000)) * time.Millisecond
		cfg.MinBackoff = time.Duration(rng.IntN(90)) * time.Second
		durations := rng.IntN(2) == 0
		var hits []*parse.Record
		sec := 0.0
		nsites := 1 + rng.IntN(3)
		for i := range 300 {
			switch r := rng.IntN(10); {
			case r < 4:
			case r < 8:
				sec += float64(rng.IntN(5))
			case r < 9:
				sec += float64(rng.IntN(600))
			default:
				sec += float64(rng.IntN(7200))
			}
			site := fmt.Sprintf("s%d.example", rng.IntN(nsites))
			path := "/page"
			switch rng.IntN(8) {
			case 0:
				path = "/robots.txt"
			case 1:
				path = "/private/x"
			}
			h := hitAt("f.log", int64(i+1), site, sec, path)
			if rng.IntN(30) == 0 {
				h.RemoteUser = "alice"
			}
			switch rng.IntN(12) {
			case 0:
				h.Status = 429
			case 1:
				h.Status = 503
				switch rng.IntN(4) {
				case 0:
					h.RetryAfter = strconv.Itoa(rng.IntN(120))
				case 1:
					h.RetryAfter = h.Start.Add(time.Duration(rng.IntN(120)) * time.Second).UTC().Format(http.TimeFormat)
				case 2:
					h.RetryAfter = "soon"
				}
			}
			if durations {
				// Apache %t with %D: the start logged, the end derived.
				h.HasDuration = true
				h.Duration = time.Duration(rng.IntN(3000)) * time.Millisecond
				h.End = h.Start.Add(h.Duration)
			}
			hits = append(hits, h)
		}
		in := make([]conduct.Hit, len(hits))
		for i, h := range hits {
			in[i] = conduct.HitOf(h)
		}
		want, _ := conduct.Check(in, cfg)
		tr := conduct.NewTracker(cfg)
		var got []conduct.Violation
		for _, h := range hits {
			got = append(got, add(tr, h)...)
		}
		w, g := keys(want, kinds), keys(got, kinds)
		if !slices.Equal(w, g) {
			t.Fatalf("seed %d (budget %d/%s, pause %s, durations %v): tracker and batch differ\nbatch   %d: %v\ntracker %d: %v",
				seed, cfg.Budget, cfg.BudgetWindow, cfg.MinPause, durations, len(w), w, len(g), g)
		}
	}
}

// Prune forgets sites idle for longer than the longest window.
func TestTrackerPrune(t *testing.T) {
	tr := conduct.NewTracker(trackCfg(nil))
	for i := range 100 {
		add(tr, hitAt("a.log", int64(i+1), fmt.Sprintf("s%d.example", i), float64(i), "/"))
	}
	tr.Prune(trackBase.Add(23 * time.Hour))
	if n := tr.Sites(); n != 100 {
		t.Fatalf("pruned within the window: %d sites left", n)
	}
	tr.Prune(trackBase.Add(25 * time.Hour))
	if n := tr.Sites(); n != 0 {
		t.Fatalf("%d sites left after the window", n)
	}
}

// MaxViolations bounds what Add returns per site and kind, the first
// ones; LeftOut counts the others.
func TestTrackerMaxViolations(t *testing.T) {
	cfg := trackCfg(nil)
	cfg.MaxViolations = 2
	tr := conduct.NewTracker(cfg)
	var got []string
	for i := range 5 {
		for _, site := range []string{"a.example", "b.example"} {
			for _, v := range add(tr, hitAt("a.log", int64(10*i+len(site)), site, 0, "/")) {
				got = append(got, v.Kind+" "+v.Site)
			}
		}
	}
	want := []string{"pause a.example", "pause b.example", "pause a.example", "pause b.example"}
	if !slices.Equal(got, want) {
		t.Fatalf("violations %v, want %v", got, want)
	}
	if n := tr.LeftOut(); n != 4 {
		t.Fatalf("LeftOut %d, want 4 (two per site)", n)
	}
}

// A site that opted out: its pages past the grace are violations at once,
// robots.txt requests and other sites' pages are not.
func TestTrackerOptOut(t *testing.T) {
	cfg := trackCfg(nil)
	cfg.MinPause = 0
	cfg.OptedOut = conduct.OptOuts{"a.example": trackBase}.For
	cfg.OptOutGrace = time.Hour
	tr := conduct.NewTracker(cfg)
	var got []string
	for i, h := range []*parse.Record{
		hitAt("f.log", 1, "a.example", 1800, "/in-grace"),
		hitAt("f.log", 2, "a.example", 3601, "/robots.txt"),
		hitAt("f.log", 3, "a.example", 3602, "/late"),
		hitAt("f.log", 4, "b.example", 3603, "/other"),
	} {
		for _, v := range add(tr, h) {
			if v.Kind == conduct.KindOptOut {
				got = append(got, fmt.Sprintf("%d %s", i, v.Path))
			}
		}
	}
	if !slices.Equal(got, []string{"2 /late"}) {
		t.Errorf("opt-out violations %v", got)
	}
}
