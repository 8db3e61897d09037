package timeline

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/conduct"
	"github.com/lohisoft/lohibot-audit/verify"
)

// TestObserver: each timed claimed hit goes to its site's timeline in the
// lane of its verdict, /robots.txt counted as a fetch (only the exact
// path), and a hit the log gave no time is left out.
func TestObserver(t *testing.T) {
	at := time.Date(2026, 12, 1, 7, 0, 0, 0, time.UTC)
	hit := func(target string, status int, timed bool) conduct.Hit {
		h := conduct.Hit{Site: "a.example", Target: target, Status: status, Time: at}
		if timed {
			h.Resolution = time.Second
		}
		return h
	}
	s := &Set{}
	observe := s.Observer()
	observe("a.example", 0, hit("/robots.txt", 200, true), verify.Genuine)
	observe("a.example", 0, hit("/robots.txt.bak", 503, true), verify.Genuine)
	observe("a.example", 0, hit("/", 200, true), verify.Spoofed)
	observe("a.example", 0, hit("/", 200, true), verify.Unverified)
	observe("a.example", 0, hit("/untimed", 200, false), verify.Genuine)
	observe("b.example", 0, hit("/", 200, true), verify.Spoofed)
	all := s.All()
	if len(all) != 2 || all[0].Site != "a.example" || all[1].Site != "b.example" || all[0].Crawler != "" {
		t.Fatalf("timelines %+v, want a.example and b.example with no crawler name", all)
	}
	a := all[0]
	if g := a.lanes[Genuine].total; g != (Counts{Requests: 2, Robots: 1, Errors: 1}) {
		t.Errorf("genuine lane %+v, want 2 requests, 1 robots.txt fetch, 1 error", g)
	}
	if n := a.lanes[Spoofed].total.Requests; n != 1 {
		t.Errorf("spoofed lane has %d requests, want 1", n)
	}
	if n := a.lanes[Unverified].total.Requests; n != 1 {
		t.Errorf("unverified lane has %d requests, want 1", n)
	}
	if _, ok := RequestOf(hit("/", 200, false), verify.Genuine); ok {
		t.Error("an untimed hit gave a request")
	}
}

// TestObserverCrawlers: with Crawlers set, each hit goes to the timeline
// of its site and its crawler's name, with that crawler's budget; a
// crawler index beyond the names is filed under none.
func TestObserverCrawlers(t *testing.T) {
	at := time.Date(2026, 12, 1, 7, 0, 0, 0, time.UTC)
	hit := conduct.Hit{Site: "a.example", Target: "/", Status: 200, Time: at, Resolution: time.Second}
	budgets := map[string]Budget{"examplebot": {Pages: 5, Window: time.Hour}}
	s := &Set{Crawlers: []string{"googlebot", "examplebot"}, Budget: func(name string) Budget { return budgets[name] }}
	observe := s.Observer()
	observe("a.example", 0, hit, verify.Genuine)
	observe("a.example", 1, hit, verify.Genuine)
	observe("a.example", 1, hit, verify.Spoofed)
	observe("a.example", 2, hit, verify.Genuine)
	var got []string
	for _, tl := range s.All() {
		got = append(got, fmt.Sprintf("%s %q %d/%d %d", tl.Site, tl.Crawler, tl.Total(Genuine).Requests, tl.Total(Spoofed).Requests, tl.Budget.Pages))
	}
	want := []string{`a.example "" 1/0 0`, `a.example "examplebot" 1/1 5`, `a.example "googlebot" 1/0 0`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("timelines\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}
