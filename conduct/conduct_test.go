package conduct_test

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/conduct"
	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/lohisoft/lohibot-audit/robots"
	"github.com/lohisoft/lohibot-audit/verify"
)

// conductT0 is the reference time of the conduct tests.
var conductT0 = time.Date(2026, 8, 24, 10, 0, 0, 0, time.UTC)

// at returns conductT0 plus d.
func at(d time.Duration) time.Time { return conductT0.Add(d) }

// sec is a shorthand for a number of seconds, fractions allowed.
func sec(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

type hitOpt func(*parse.Record)

// hit builds a record the way the log reader does: Time as logged, Start
// and End equal without a duration, Resolution a millisecond when t has a
// fraction and a second otherwise.
func hit(file string, line int64, t time.Time, path string, status int, opts ...hitOpt) *parse.Record {
	r := &parse.Record{
		File: file, Line: line,
		Client: netip.MustParseAddr("79.139.58.98"), ClientRaw: "79.139.58.98",
		Time: t, Start: t, End: t, Resolution: time.Second,
		Request: "GET " + path + " HTTP/1.1", Method: "GET", Target: path, Proto: "HTTP/1.1",
		Status: status, Bytes: 512,
		UserAgent: "LohiSoftBot/1.0 (+https://lohisoft.com/bot)", Host: "a.example", Claimed: true,
	}
	if t.Nanosecond() != 0 {
		r.Resolution = time.Millisecond
	}
	for _, o := range opts {
		o(r)
	}
	return r
}

func onSite(s string) hitOpt { return func(r *parse.Record) { r.Host = s } }

func fromIP(s string) hitOpt {
	return func(r *parse.Record) { r.Client, r.ClientRaw = netip.MustParseAddr(s), s }
}

func withUser(u string) hitOpt { return func(r *parse.Record) { r.RemoteUser = u } }

func retryAfter(v string) hitOpt { return func(r *parse.Record) { r.RetryAfter = v } }

// claimRes sets the resolution the reader claims for the time.
func claimRes(d time.Duration) hitOpt { return func(r *parse.Record) { r.Resolution = d } }

// nginxDur gives the request a duration with Time as its end
// ($time_local with $request_time).
func nginxDur(d time.Duration) hitOpt {
	return func(r *parse.Record) {
		r.Duration, r.HasDuration = d, true
		r.Start, r.End = r.Time.Add(-d), r.Time
	}
}

// apacheDur gives the request a duration with Time as its start (%t with %D).
func apacheDur(d time.Duration) hitOpt {
	return func(r *parse.Record) {
		r.Duration, r.HasDuration = d, true
		r.Start, r.End = r.Time, r.Time.Add(d)
	}
}

// untimed removes the record's time, as for a format without one.
func untimed() hitOpt {
	return func(r *parse.Record) { r.Time, r.Start, r.End, r.Resolution = time.Time{}, time.Time{}, time.Time{}, 0 }
}

func conductDefaults() conduct.Config {
	return conduct.Config{
		Token: "LohiSoftBot", Budget: 20, BudgetWindow: 24 * time.Hour,
		MinPause: time.Second, MinBackoff: 30 * time.Second,
	}
}

// checkRecords runs [conduct.Check] over records from the log reader;
// nil records are left out.
func checkRecords(recs []*parse.Record, cfg conduct.Config) ([]conduct.Violation, []conduct.SiteReport) {
	hits := make([]conduct.Hit, 0, len(recs))
	for _, r := range recs {
		if r != nil {
			hits = append(hits, conduct.HitOf(r))
		}
	}
	return conduct.Check(hits, cfg)
}

// vkey is the part of a violation the tables compare: "kind site file:line".
func vkey(v conduct.Violation) string {
	return fmt.Sprintf("%s %s %s:%d", v.Kind, v.Site, v.File, v.Line)
}

func keysOf(vs []conduct.Violation, kinds []string) []string {
	out := []string{}
	for _, v := range vs {
		if len(kinds) == 0 || slices.Contains(kinds, v.Kind) {
			out = append(out, vkey(v))
		}
	}
	return out
}

type conductCase struct {
	name string
	cfg  func(*conduct.Config) // changes to conductDefaults; nil for none
	hits []*parse.Record
	want []string // vkeys of the kinds compared, in output order
	// skipped, when set, is the wanted checks_skipped of the site "a.example".
	skipped []string
}

// runConductCases runs cases, comparing only violations of the given
// kinds, and checks the invariants every result must keep.
func runConductCases(t *testing.T, kinds []string, cases []conductCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := conductDefaults()
			if tc.cfg != nil {
				tc.cfg(&cfg)
			}
			got, sites := checkRecords(tc.hits, cfg)
			if g := keysOf(got, kinds); !reflect.DeepEqual(g, tc.want) {
				t.Errorf("violations:\n got  %q\n want %q\nall: %s", g, tc.want, dumpViolations(got))
			}
			if tc.skipped != nil {
				var s *conduct.SiteReport
				for i := range sites {
					if sites[i].Site == "a.example" {
						s = &sites[i]
					}
				}
				if s == nil {
					t.Fatalf("no site report for a.example in %+v", sites)
				}
				if !reflect.DeepEqual(s.ChecksSkipped, tc.skipped) {
					t.Errorf("checks_skipped = %q, want %q", s.ChecksSkipped, tc.skipped)
				}
			}
			checkConductInvariants(t, tc.hits, got, sites)
		})
	}
}

func dumpViolations(vs []conduct.Violation) string {
	var b strings.Builder
	for _, v := range vs {
		fmt.Fprintf(&b, "\n  %s %s %s %q", vkey(v), conduct.FmtTime(v.Time), v.Path, v.Detail)
	}
	return b.String()
}

// checkConductInvariants checks what holds for every input: violations
// sorted, each naming an input record of its site, details one printable
// line, and site reports that add up.
func checkConductInvariants(t *testing.T, hits []*parse.Record, got []conduct.Violation, sites []conduct.SiteReport) {
	t.Helper()
	type loc struct {
		site, file string
		line       int64
	}
	recs := map[loc][]*parse.Record{}
	for _, r := range hits {
		if r != nil {
			k := loc{r.Host, r.File, r.Line}
			recs[k] = append(recs[k], r)
		}
	}
	less := func(a, b conduct.Violation) bool {
		if a.Site != b.Site {
			return a.Site < b.Site
		}
		if !a.Time.Equal(b.Time) {
			return a.Time.Before(b.Time)
		}
		if a.File != b.File {
			return a.File < b.File
		}
		return a.Line < b.Line
	}
	perSite := map[string]int{}
	for i, v := range got {
		if i > 0 && less(v, got[i-1]) {
			t.Errorf("violation %d out of order: %s after %s", i, vkey(v), vkey(got[i-1]))
		}
		perSite[v.Site]++
		found := false
		for _, r := range recs[loc{v.Site, v.File, v.Line}] {
			if r.Path() == v.Path && (v.IP == r.ClientRaw || v.IP == r.Client.String()) {
				found = true
			}
		}
		if !found {
			t.Errorf("violation %s %q names no input record", vkey(v), v.Path)
		}
		if v.Detail == "" || v.Detail != parse.EscapeControl(v.Detail) || strings.ContainsAny(v.Detail, "\n\r") {
			t.Errorf("detail of %s is not one printable line: %q", vkey(v), v.Detail)
		}
		if v.Time.Location() != time.UTC {
			t.Errorf("time of %s is not UTC: %v", vkey(v), v.Time)
		}
	}
	names := []string{}
	for _, s := range sites {
		names = append(names, s.Site)
		if s.Violations != perSite[s.Site] {
			t.Errorf("site %s reports %d violations, the list has %d", s.Site, s.Violations, perSite[s.Site])
		}
		if s.ChecksSkipped == nil || !slices.IsSorted(s.ChecksSkipped) {
			t.Errorf("site %s: checks_skipped %q is nil or unsorted", s.Site, s.ChecksSkipped)
		}
	}
	if !slices.IsSorted(names) {
		t.Errorf("site reports not sorted: %q", names)
	}
}

func TestCheckConductRobots(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "robots.txt"))
	if err != nil {
		t.Fatal(err)
	}
	rb := robots.Parse(data)
	perSite := func(m map[string]*robots.Robots) func(*conduct.Config) {
		return func(c *conduct.Config) { c.Robots = func(site string) *robots.Robots { return m[site] } }
	}
	f := "access.log"
	runConductCases(t, []string{conduct.KindRobots}, []conductCase{
		{
			name: "disallowed page flagged, allowed ones not",
			cfg:  perSite(map[string]*robots.Robots{"a.example": rb}),
			hits: []*parse.Record{
				hit(f, 1, at(0), "/robots.txt", 200),
				hit(f, 2, at(sec(5)), "/private/x?y=1", 200),
				hit(f, 3, at(sec(10)), "/private/open", 200),              // Allow wins, longer
				hit(f, 4, at(sec(15)), "/tmp/x", 200),                     // only the * group says so
				hit(f, 5, at(sec(20)), "/private/y", 404),                 // asked for it: a violation whatever the answer
				hit(f, 6, at(sec(25)), "http://a.example/private/z", 200), // absolute form
			},
			want:    []string{"robots a.example access.log:2", "robots a.example access.log:5", "robots a.example access.log:6"},
			skipped: []string{conduct.KindConcurrency, conduct.KindRobotsNotFetched},
		},
		{
			name: "no robots.txt for the site: skipped, not passed",
			cfg:  perSite(map[string]*robots.Robots{"b.example": rb}),
			hits: []*parse.Record{
				hit(f, 1, at(0), "/robots.txt", 200),
				hit(f, 2, at(sec(5)), "/private/x", 200),
				hit(f, 3, at(sec(10)), "/private/x", 200, onSite("b.example")),
			},
			want:    []string{"robots b.example access.log:3"},
			skipped: []string{conduct.KindConcurrency, conduct.KindRobots, conduct.KindRobotsNotFetched},
		},
		{
			name:    "nil Robots func skips every site",
			hits:    []*parse.Record{hit(f, 1, at(0), "/private/x", 200)},
			want:    []string{},
			skipped: []string{conduct.KindConcurrency, conduct.KindRobots, conduct.KindRobotsNotFetched},
		},
		{
			name: "robots.txt that answered 5xx disallows all",
			cfg:  perSite(map[string]*robots.Robots{"a.example": robots.DisallowAll("robots.txt answered 503")}),
			hits: []*parse.Record{
				hit(f, 1, at(0), "/robots.txt", 200),
				hit(f, 2, at(sec(5)), "/", 200),
				hit(f, 3, at(sec(10)), "", 400), // a request line that did not parse: nothing to match
			},
			want: []string{"robots a.example access.log:2"},
		},
	})
}

func TestCheckConductRobotsDetail(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "robots.txt"))
	if err != nil {
		t.Fatal(err)
	}
	rb := robots.Parse(data)
	tests := []struct {
		name     string
		rb       *robots.Robots
		path     string
		want     string
		wantLine int
		wantRule string
	}{
		{"quotes the deciding line", rb, "/private/x", `disallowed by robots.txt line 5 "Disallow: /private/"`, 5, "Disallow: /private/"},
		{"gives the reason of a stand-in", robots.DisallowAll("robots.txt answered 503"), "/x", "disallowed: robots.txt answered 503", 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := conductDefaults()
			cfg.Robots = func(string) *robots.Robots { return tt.rb }
			got, _ := checkRecords([]*parse.Record{hit("l", 1, at(0), tt.path, 200)}, cfg)
			var details []string
			for _, v := range got {
				if v.Kind == conduct.KindRobots {
					details = append(details, v.Detail)
					if v.RobotsLine != tt.wantLine || v.RobotsRule != tt.wantRule {
						t.Errorf("robots line and rule = %d %q, want %d %q", v.RobotsLine, v.RobotsRule, tt.wantLine, tt.wantRule)
					}
				}
			}
			if !reflect.DeepEqual(details, []string{tt.want}) {
				t.Errorf("details = %q, want %q", details, tt.want)
			}
		})
	}
}

func TestCheckConductRobotsNotFetched(t *testing.T) {
	f := "access.log"
	// early is a hit on another site in the same file, long before: it
	// shows the log reaches back more than 24h.
	early := hit(f, 1, at(-72*time.Hour), "/robots.txt", 200, onSite("c.example"))
	runConductCases(t, []string{conduct.KindRobotsNotFetched}, []conductCase{
		{
			name: "never fetched",
			hits: []*parse.Record{early, hit(f, 2, at(0), "/", 200), hit(f, 3, at(sec(5)), "/a", 200)},
			want: []string{"robots-not-fetched a.example access.log:2"},
		},
		{
			name: "fetched 10s before",
			hits: []*parse.Record{early, hit(f, 2, at(sec(-10)), "/robots.txt", 200), hit(f, 3, at(0), "/", 200)},
			want: []string{},
		},
		{
			name: "any status counts as fetched",
			hits: []*parse.Record{early, hit(f, 2, at(sec(-10)), "/robots.txt", 404), hit(f, 3, at(0), "/", 200)},
			want: []string{},
		},
		{
			name: "fetched 23h59m before the crawl",
			hits: []*parse.Record{
				early,
				hit(f, 2, at(-23*time.Hour-59*time.Minute), "/robots.txt", 200),
				hit(f, 3, at(-23*time.Hour-58*time.Minute), "/", 200),
				hit(f, 4, at(0), "/later", 200),
			},
			want:    []string{},
			skipped: []string{conduct.KindConcurrency, conduct.KindRobots},
		},
		{
			name: "fetched 24h01m before the crawl",
			hits: []*parse.Record{
				early,
				hit(f, 2, at(-24*time.Hour-time.Minute), "/robots.txt", 200),
				hit(f, 3, at(-24*time.Hour), "/", 200),
				hit(f, 4, at(0), "/later", 200),
				hit(f, 5, at(sec(5)), "/later2", 200),
			},
			want: []string{"robots-not-fetched a.example access.log:4"},
		},
		{
			name: "a crawl that resumes within the hour is the same crawl",
			hits: []*parse.Record{
				early,
				hit(f, 2, at(-24*time.Hour), "/robots.txt", 200),
				hit(f, 3, at(-24*time.Hour+time.Minute), "/", 200),
				hit(f, 4, at(-23*time.Hour-10*time.Minute), "/a", 200),
				hit(f, 5, at(-22*time.Hour-20*time.Minute), "/b", 200),
				hit(f, 6, at(-21*time.Hour-30*time.Minute), "/c", 200),
			},
			want: []string{},
		},
		{
			name:    "logs that begin less than 24h before the crawl cannot tell",
			hits:    []*parse.Record{hit(f, 1, at(-23*time.Hour), "/robots.txt", 200, onSite("c.example")), hit(f, 2, at(0), "/", 200)},
			want:    []string{},
			skipped: []string{conduct.KindConcurrency, conduct.KindRobots, conduct.KindRobotsNotFetched},
		},
		{
			name: "another file reaching back does not count for this site's file",
			hits: []*parse.Record{
				hit("other.log", 1, at(-72*time.Hour), "/robots.txt", 200, onSite("c.example")),
				hit(f, 1, at(0), "/", 200),
			},
			want: []string{},
		},
		{
			name: "robots.txt of another site does not count",
			hits: []*parse.Record{early, hit(f, 2, at(sec(-10)), "/robots.txt", 200, onSite("b.example")), hit(f, 3, at(0), "/", 200)},
			want: []string{"robots-not-fetched a.example access.log:3"},
		},
		{
			name: "robots.txt right after the first page is too late",
			hits: []*parse.Record{early, hit(f, 2, at(0), "/", 200), hit(f, 3, at(sec(2)), "/robots.txt", 200), hit(f, 4, at(sec(4)), "/a", 200)},
			want: []string{"robots-not-fetched a.example access.log:2"},
		},
		{
			name: "same logged second: robots.txt may have come first",
			hits: []*parse.Record{early, hit(f, 2, at(0), "/", 200), hit(f, 3, at(0), "/robots.txt", 200)},
			want: []string{},
		},
		{
			name: "nginx completion order: robots.txt logged after the page but started before it",
			hits: []*parse.Record{
				early,
				hit(f, 2, at(sec(1)), "/", 200, nginxDur(sec(0.213))),           // 10:00:00.787 to :01
				hit(f, 3, at(sec(2)), "/robots.txt", 200, nginxDur(sec(1.734))), // 10:00:00.266 to :02
			},
			want: []string{},
		},
		{
			name: "each crawl after an hour's quiet is judged",
			hits: []*parse.Record{
				early,
				hit(f, 2, at(-48*time.Hour), "/robots.txt", 200),
				hit(f, 3, at(-48*time.Hour+time.Minute), "/", 200), // fine
				hit(f, 4, at(-3*time.Hour), "/a", 200),             // 45h after robots.txt
				hit(f, 5, at(0), "/b", 200),                        // again
			},
			want: []string{"robots-not-fetched a.example access.log:4", "robots-not-fetched a.example access.log:5"},
		},
	})
}

func TestCheckConductRobotsUnavailable(t *testing.T) {
	f := "access.log"
	runConductCases(t, []string{conduct.KindRobotsUnavailable}, []conductCase{
		{
			name: "pages after a 503 for robots.txt",
			hits: []*parse.Record{hit(f, 1, at(0), "/robots.txt", 503), hit(f, 2, at(sec(5)), "/", 200), hit(f, 3, at(sec(10)), "/a", 200)},
			want: []string{"robots-unavailable a.example access.log:2", "robots-unavailable a.example access.log:3"},
		},
		{
			name: "a later successful fetch ends it",
			hits: []*parse.Record{hit(f, 1, at(0), "/robots.txt", 503), hit(f, 2, at(sec(3)), "/robots.txt", 200), hit(f, 3, at(sec(5)), "/", 200)},
			want: []string{},
		},
		{
			name: "a later 404 ends it too",
			hits: []*parse.Record{hit(f, 1, at(0), "/robots.txt", 500), hit(f, 2, at(sec(3)), "/robots.txt", 404), hit(f, 3, at(sec(5)), "/", 200)},
			want: []string{},
		},
		{
			name: "404 for robots.txt allows everything",
			hits: []*parse.Record{hit(f, 1, at(0), "/robots.txt", 404), hit(f, 2, at(sec(5)), "/", 200)},
			want: []string{},
		},
		{
			name: "same logged second: the page may have been sent before the answer",
			hits: []*parse.Record{hit(f, 1, at(0), "/robots.txt", 503), hit(f, 2, at(0), "/", 200), hit(f, 3, at(sec(2)), "/a", 200)},
			want: []string{"robots-unavailable a.example access.log:3"},
		},
		{
			name: "an earlier good copy does not help",
			hits: []*parse.Record{hit(f, 1, at(-time.Hour), "/robots.txt", 200), hit(f, 2, at(0), "/robots.txt", 503), hit(f, 3, at(sec(5)), "/", 200)},
			want: []string{"robots-unavailable a.example access.log:3"},
		},
		{
			name: "a good fetch in the same second as the page may have come first",
			hits: []*parse.Record{hit(f, 1, at(0), "/robots.txt", 503), hit(f, 2, at(sec(5)), "/robots.txt", 200), hit(f, 3, at(sec(5)), "/", 200)},
			want: []string{},
		},
		{
			name: "29 days into an outage still counts, 31 days does not",
			hits: []*parse.Record{
				hit(f, 1, at(0), "/robots.txt", 503),
				hit(f, 2, at(29*24*time.Hour), "/robots.txt", 503),
				hit(f, 3, at(29*24*time.Hour+time.Minute), "/", 200),
				hit(f, 4, at(31*24*time.Hour), "/a", 200),
			},
			want: []string{"robots-unavailable a.example access.log:3"},
		},
		{
			name: "other site's robots.txt",
			hits: []*parse.Record{hit(f, 1, at(0), "/robots.txt", 503, onSite("b.example")), hit(f, 2, at(sec(5)), "/", 200)},
			want: []string{},
		},
	})
}

func TestCheckConductBudget(t *testing.T) {
	f := "access.log"
	// pages returns n pages on site a.example from line first on, every
	// step from start.
	pages := func(first int64, n int, start time.Time, step time.Duration, opts ...hitOpt) []*parse.Record {
		var out []*parse.Record
		for i := range n {
			out = append(out, hit(f, first+int64(i), start.Add(time.Duration(i)*step), fmt.Sprintf("/p%d", first+int64(i)), 200, opts...))
		}
		return out
	}
	join := func(parts ...[]*parse.Record) []*parse.Record { return slices.Concat(parts...) }
	runConductCases(t, []string{conduct.KindBudget}, []conductCase{
		{
			name: "21 pages in a window",
			hits: pages(1, 21, at(0), 10*time.Minute),
			want: []string{"budget a.example access.log:21"},
		},
		{
			name: "exactly 20 pages",
			hits: pages(1, 20, at(0), 10*time.Minute),
			want: []string{},
		},
		{
			name: "21st page exactly one window after the first",
			hits: join(pages(1, 20, at(0), 10*time.Second), pages(21, 1, at(24*time.Hour), 0)),
			want: []string{},
		},
		{
			name: "21st page one second short of the window",
			hits: join(pages(1, 20, at(0), 10*time.Second), pages(21, 1, at(24*time.Hour-time.Second), 0)),
			want: []string{"budget a.example access.log:21"},
		},
		{
			name: "two addresses count together",
			hits: join(pages(1, 11, at(0), time.Minute), pages(100, 11, at(sec(30)), time.Minute, fromIP("79.139.58.121"))),
			want: []string{"budget a.example access.log:11"}, // the 21st by start time
		},
		{
			name: "robots.txt requests are not pages",
			hits: join(pages(1, 20, at(0), time.Minute), []*parse.Record{
				hit(f, 50, at(sec(-5)), "/robots.txt", 200), hit(f, 51, at(30*time.Minute), "/robots.txt", 200),
			}),
			want: []string{},
		},
		{
			name: "sites apart",
			hits: join(pages(1, 15, at(0), time.Minute), pages(100, 15, at(sec(30)), time.Minute, onSite("b.example"))),
			want: []string{},
		},
		{
			name: "one violation per window",
			hits: join(pages(1, 22, at(0), time.Minute), pages(100, 23, at(72*time.Hour), time.Minute)),
			want: []string{"budget a.example access.log:21", "budget a.example access.log:120"},
		},
		{
			name: "the next window starts after the reported one",
			hits: join(pages(1, 25, at(0), time.Minute), pages(100, 10, at(23*time.Hour), time.Minute), pages(200, 15, at(25*time.Hour), time.Minute)),
			want: []string{"budget a.example access.log:21"},
		},
		{
			name: "turned off",
			cfg:  func(c *conduct.Config) { c.Budget = 0 },
			hits: pages(1, 30, at(0), time.Minute),
			want: []string{},
			skipped: []string{conduct.KindBudget, conduct.KindConcurrency, conduct.KindRobots,
				conduct.KindRobotsNotFetched},
		},
	})

	t.Run("detail gives the count of the window", func(t *testing.T) {
		hits := join(pages(1, 25, at(0), time.Minute), pages(100, 10, at(23*time.Hour), time.Minute))
		got, _ := checkRecords(hits, conductDefaults())
		want := "35 pages within 24h, more than the budget of 20: this is page 21 of the window that began at 2026-08-24T10:00:00Z (line 1)"
		if len(got) == 0 || keysOf(got, []string{conduct.KindBudget})[0] != "budget a.example access.log:21" {
			t.Fatalf("no budget violation at line 21: %s", dumpViolations(got))
		}
		for _, v := range got {
			if v.Kind == conduct.KindBudget && v.Detail != want {
				t.Errorf("detail = %q\nwant     %q", v.Detail, want)
			}
		}
	})
}

func TestCheckConductConcurrency(t *testing.T) {
	f := "access.log"
	runConductCases(t, []string{conduct.KindConcurrency, conduct.KindPause}, []conductCase{
		{
			name: "nginx completion order: the later line started first",
			hits: []*parse.Record{
				hit(f, 1, at(sec(4)), "/b", 200, nginxDur(sec(0.812))), // 10:00:03.188 to :04
				hit(f, 2, at(sec(5)), "/a", 200, nginxDur(sec(3.456))), // 10:00:01.544 to :05
			},
			want: []string{"concurrency a.example access.log:1"},
		},
		{
			name: "back to back with a 2s gap",
			hits: []*parse.Record{
				hit(f, 1, at(sec(1.123)), "/a", 200, nginxDur(sec(0.5))),
				hit(f, 2, at(sec(3.623)), "/b", 200, nginxDur(sec(0.5))),
			},
			want:    []string{},
			skipped: []string{conduct.KindRobots, conduct.KindRobotsNotFetched},
		},
		{
			name: "0.6s overlap to the millisecond",
			hits: []*parse.Record{
				hit(f, 1, at(sec(10.4)), "/a", 200, nginxDur(sec(1.234))),   // 9.166 to 10.4
				hit(f, 2, at(sec(11.003)), "/b", 200, nginxDur(sec(1.237))), // 9.766 to 11.003
			},
			want: []string{"concurrency a.example access.log:2"},
		},
		{
			name: "a long request overlaps two short ones",
			hits: []*parse.Record{
				hit(f, 1, at(sec(2)), "/b", 200, apacheDur(sec(0.300127))),
				hit(f, 2, at(sec(5)), "/c", 200, apacheDur(sec(0.200311))),
				hit(f, 3, at(0), "/a", 200, apacheDur(sec(10.500123))),
			},
			want: []string{"concurrency a.example access.log:1", "concurrency a.example access.log:2"},
		},
		{
			name: "overlap within the second cannot be proven, a short pause can",
			hits: []*parse.Record{
				hit(f, 1, at(sec(10)), "/a", 200, nginxDur(sec(0.812))), // ends in [10, 11)
				hit(f, 2, at(sec(10)), "/b", 200, nginxDur(sec(0.513))), // started 0.3s "before" /a ended
			},
			want: []string{"pause a.example access.log:2"},
		},
		{
			name:    "no durations: concurrency skipped",
			hits:    []*parse.Record{hit(f, 1, at(0), "/a", 200), hit(f, 2, at(sec(2)), "/b", 200)},
			want:    []string{},
			skipped: []string{conduct.KindConcurrency, conduct.KindRobots, conduct.KindRobotsNotFetched},
		},
		{
			name: "sites apart",
			hits: []*parse.Record{
				hit(f, 1, at(sec(4)), "/b", 200, nginxDur(sec(0.812))),
				hit(f, 2, at(sec(5)), "/a", 200, nginxDur(sec(3.456)), onSite("b.example")),
			},
			want: []string{},
		},
	})
}

func TestCheckConductPause(t *testing.T) {
	f := "access.log"
	runConductCases(t, []string{conduct.KindPause}, []conductCase{
		{
			name: "same logged second",
			hits: []*parse.Record{hit(f, 1, at(0), "/a", 200), hit(f, 2, at(0), "/b", 200)},
			want: []string{"pause a.example access.log:2"},
		},
		{
			name: "one logged second apart is exactly the least pause",
			hits: []*parse.Record{hit(f, 1, at(0), "/a", 200), hit(f, 2, at(sec(1)), "/b", 200)},
			want: []string{},
		},
		{
			name: "milliseconds: 0.4s flagged",
			hits: []*parse.Record{hit(f, 1, at(sec(0.123)), "/a", 200), hit(f, 2, at(sec(0.523)), "/b", 200)},
			want: []string{"pause a.example access.log:2"},
		},
		{
			name: "milliseconds: 0.999s is provably short",
			hits: []*parse.Record{hit(f, 1, at(sec(0.123)), "/a", 200), hit(f, 2, at(sec(1.122)), "/b", 200)},
			want: []string{"pause a.example access.log:2"},
		},
		{
			name: "milliseconds: exactly 1s",
			hits: []*parse.Record{hit(f, 1, at(sec(0.123)), "/a", 200), hit(f, 2, at(sec(1.123)), "/b", 200)},
			want: []string{},
		},
		{
			name: "durations: started 0.3s after the previous one ended",
			hits: []*parse.Record{
				hit(f, 1, at(sec(1.123)), "/a", 200, nginxDur(sec(0.5))),
				hit(f, 2, at(sec(1.923)), "/b", 200, nginxDur(sec(0.5))),
			},
			want: []string{"pause a.example access.log:2"},
		},
		{
			name: "rotated logs: across two files",
			hits: []*parse.Record{
				hit("access.log", 1, at(sec(0)), "/b", 200),
				hit("access.log.1", 9, at(sec(0)), "/a", 200),
				hit("access.log.1", 8, at(sec(-5)), "/robots.txt", 200),
			},
			want: []string{"pause a.example access.log.1:9"},
		},
		{
			name: "two addresses of the crawler count together",
			hits: []*parse.Record{hit(f, 1, at(0), "/a", 200), hit(f, 2, at(0), "/b", 200, fromIP("79.139.58.121"))},
			want: []string{"pause a.example access.log:2"},
		},
		{
			name: "sites apart",
			hits: []*parse.Record{hit(f, 1, at(0), "/a", 200), hit(f, 2, at(0), "/b", 200, onSite("b.example"))},
			want: []string{},
		},
		{
			name: "a file's times all on whole seconds are read to the second",
			cfg:  func(c *conduct.Config) { c.MinPause = 1500 * time.Millisecond },
			hits: []*parse.Record{
				hit(f, 1, at(0), "/a", 200, claimRes(time.Millisecond)),
				hit(f, 2, at(sec(1)), "/b", 200, claimRes(time.Millisecond)), // may be 1.999s later
			},
			want: []string{},
		},
		{
			name: "the same gap to the millisecond is short of 1.5s",
			cfg:  func(c *conduct.Config) { c.MinPause = 1500 * time.Millisecond },
			hits: []*parse.Record{
				hit(f, 1, at(sec(0.123)), "/a", 200, claimRes(time.Millisecond)),
				hit(f, 2, at(sec(1.123)), "/b", 200, claimRes(time.Millisecond)),
			},
			want: []string{"pause a.example access.log:2"},
		},
		{
			name:    "turned off",
			cfg:     func(c *conduct.Config) { c.MinPause = 0 },
			hits:    []*parse.Record{hit(f, 1, at(0), "/a", 200), hit(f, 2, at(0), "/b", 200)},
			want:    []string{},
			skipped: []string{conduct.KindConcurrency, conduct.KindPause, conduct.KindRobots, conduct.KindRobotsNotFetched},
		},
	})
}

func TestCheckConductBackoff(t *testing.T) {
	f := "access.log"
	date := at(2 * time.Minute).Format(http.TimeFormat)
	runConductCases(t, []string{conduct.KindBackoff}, []conductCase{
		{
			name: "429 without Retry-After, back after 10s",
			hits: []*parse.Record{hit(f, 1, at(0), "/a", 429), hit(f, 2, at(sec(10)), "/a", 200)},
			want: []string{"backoff a.example access.log:2"},
		},
		{
			name: "back after 29s",
			hits: []*parse.Record{hit(f, 1, at(0), "/a", 429), hit(f, 2, at(sec(29)), "/a", 200)},
			want: []string{"backoff a.example access.log:2"},
		},
		{
			name: "back after exactly the least backoff",
			hits: []*parse.Record{hit(f, 1, at(0), "/a", 429), hit(f, 2, at(sec(30)), "/a", 200)},
			want: []string{},
		},
		{
			name: "Retry-After 120, back after 119s",
			hits: []*parse.Record{hit(f, 1, at(0), "/a", 503, retryAfter("120")), hit(f, 2, at(sec(119)), "/b", 200)},
			want: []string{"backoff a.example access.log:2"},
		},
		{
			name: "Retry-After 120, back after 120s",
			hits: []*parse.Record{hit(f, 1, at(0), "/a", 503, retryAfter("120")), hit(f, 2, at(sec(120)), "/b", 200)},
			want: []string{},
		},
		{
			name: "Retry-After 5 is less than the least backoff and is what counts",
			hits: []*parse.Record{hit(f, 1, at(0), "/a", 503, retryAfter("5")), hit(f, 2, at(sec(10)), "/b", 200)},
			want: []string{},
		},
		{
			name: "Retry-After date, back before it",
			hits: []*parse.Record{hit(f, 1, at(0), "/a", 503, retryAfter(date)), hit(f, 2, at(sec(119)), "/b", 200)},
			want: []string{"backoff a.example access.log:2"},
		},
		{
			name: "Retry-After date, back on it",
			hits: []*parse.Record{hit(f, 1, at(0), "/a", 503, retryAfter(date)), hit(f, 2, at(sec(120)), "/b", 200)},
			want: []string{},
		},
		{
			name: "Retry-After 0",
			hits: []*parse.Record{hit(f, 1, at(0), "/a", 429, retryAfter("0")), hit(f, 2, at(sec(2)), "/a", 200)},
			want: []string{},
		},
		{
			name: "unreadable Retry-After falls back to the least backoff",
			hits: []*parse.Record{hit(f, 1, at(0), "/a", 429, retryAfter("soon")), hit(f, 2, at(sec(10)), "/a", 200)},
			want: []string{"backoff a.example access.log:2"},
		},
		{
			name: "robots.txt is a request too",
			hits: []*parse.Record{hit(f, 1, at(0), "/a", 500), hit(f, 2, at(sec(5)), "/robots.txt", 200)},
			want: []string{"backoff a.example access.log:2"},
		},
		{
			name: "sites apart",
			hits: []*parse.Record{
				hit(f, 1, at(0), "/a", 429),
				hit(f, 2, at(sec(5)), "/a", 200, onSite("b.example")),
				hit(f, 3, at(sec(60)), "/b", 200),
			},
			want: []string{},
		},
		{
			name: "only the next request is judged",
			hits: []*parse.Record{hit(f, 1, at(0), "/a", 429), hit(f, 2, at(sec(40)), "/a", 200), hit(f, 3, at(sec(42)), "/b", 200)},
			want: []string{},
		},
		{
			name: "a request in the same second may predate the answer; the next one is judged",
			hits: []*parse.Record{hit(f, 1, at(0), "/a", 429), hit(f, 2, at(0), "/b", 200), hit(f, 3, at(sec(5)), "/c", 200)},
			want: []string{"backoff a.example access.log:3"},
		},
		{
			name: "other answers need no backoff",
			hits: []*parse.Record{hit(f, 1, at(0), "/a", 404), hit(f, 2, at(sec(5)), "/b", 200)},
			want: []string{},
		},
		{
			name: "nginx order: measured from the end of the answer",
			hits: []*parse.Record{
				hit(f, 1, at(sec(40)), "/a", 503, nginxDur(sec(39.5))), // 10:00:00.5 to :40
				hit(f, 2, at(sec(60)), "/b", 200, nginxDur(sec(0.25))), // 20s after the answer
			},
			want: []string{"backoff a.example access.log:2"},
		},
	})
}

func TestCheckConductAuth(t *testing.T) {
	f := "access.log"
	runConductCases(t, []string{conduct.KindAuth}, []conductCase{
		{
			name: "remote user",
			hits: []*parse.Record{hit(f, 1, at(0), "/a", 200, withUser("alice")), hit(f, 2, at(sec(5)), "/b", 401, withUser("bob"))},
			want: []string{"auth a.example access.log:1", "auth a.example access.log:2"},
		},
		{
			name: "403 then 200 for the same path",
			hits: []*parse.Record{hit(f, 1, at(0), "/members", 403), hit(f, 2, at(time.Minute), "/members", 200)},
			want: []string{"auth a.example access.log:2"},
		},
		{
			name: "401 then 206 for the same path",
			hits: []*parse.Record{hit(f, 1, at(0), "/members", 401), hit(f, 2, at(time.Minute), "/members", 206)},
			want: []string{"auth a.example access.log:2"},
		},
		{
			name: "another query is another path",
			hits: []*parse.Record{hit(f, 1, at(0), "/m?id=1", 403), hit(f, 2, at(time.Minute), "/m?id=2", 200)},
			want: []string{},
		},
		{
			name: "200 then 403",
			hits: []*parse.Record{hit(f, 1, at(0), "/members", 200), hit(f, 2, at(time.Minute), "/members", 403)},
			want: []string{},
		},
		{
			name: "403 then 304",
			hits: []*parse.Record{hit(f, 1, at(0), "/members", 403), hit(f, 2, at(time.Minute), "/members", 304)},
			want: []string{},
		},
		{
			name: "robots.txt 403 then 200",
			hits: []*parse.Record{hit(f, 1, at(0), "/robots.txt", 403), hit(f, 2, at(time.Minute), "/robots.txt", 200)},
			want: []string{},
		},
		{
			name: "one violation per denial",
			hits: []*parse.Record{hit(f, 1, at(0), "/m", 403), hit(f, 2, at(time.Minute), "/m", 200), hit(f, 3, at(2*time.Minute), "/m", 200)},
			want: []string{"auth a.example access.log:2"},
		},
		{
			name: "same logged second",
			hits: []*parse.Record{hit(f, 1, at(0), "/m", 403), hit(f, 2, at(0), "/m", 200)},
			want: []string{},
		},
		{
			name: "sites apart",
			hits: []*parse.Record{hit(f, 1, at(0), "/m", 403), hit(f, 2, at(time.Minute), "/m", 200, onSite("b.example"))},
			want: []string{},
		},
	})
}

func TestCheckConductDetails(t *testing.T) {
	f := "access.log"
	date := at(2 * time.Minute).Format(http.TimeFormat)
	early := hit(f, 1, at(-72*time.Hour), "/robots.txt", 200, onSite("c.example"))
	tests := []struct {
		name string
		kind string
		hits []*parse.Record
		want string
	}{
		{
			name: "concurrency",
			kind: conduct.KindConcurrency,
			hits: []*parse.Record{
				hit(f, 11, at(sec(4)), "/b", 200, nginxDur(sec(0.812))),
				hit(f, 12, at(sec(5)), "/a", 200, nginxDur(sec(3.456))),
			},
			want: "2 requests at once: this one started 1.812s before the one on line 12 ended",
		},
		{
			name: "pause, same second",
			kind: conduct.KindPause,
			hits: []*parse.Record{hit(f, 1, at(0), "/a", 200), hit(f, 2, at(0), "/b", 200)},
			want: "logged in the same second as the request on line 1; the least pause is 1s",
		},
		{
			name: "pause, milliseconds without durations",
			kind: conduct.KindPause,
			hits: []*parse.Record{hit(f, 1, at(sec(0.123)), "/a", 200), hit(f, 2, at(sec(0.523)), "/b", 200)},
			want: "logged 0.4s after the request on line 1; the least pause is 1s",
		},
		{
			name: "pause, durations, other file",
			kind: conduct.KindPause,
			hits: []*parse.Record{
				hit("access.log.1", 7, at(sec(1.123)), "/a", 200, nginxDur(sec(0.5))),
				hit(f, 1, at(sec(1.923)), "/b", 200, nginxDur(sec(0.5))),
			},
			want: "started 0.3s after the request on line 7 of access.log.1 ended; the least pause is 1s",
		},
		{
			name: "backoff without Retry-After",
			kind: conduct.KindBackoff,
			hits: []*parse.Record{hit(f, 1, at(0), "/a", 429), hit(f, 2, at(sec(10)), "/a", 200)},
			want: "came 10s after the 429 answer on line 1, with no Retry-After logged; the least backoff is 30s",
		},
		{
			name: "backoff with Retry-After seconds",
			kind: conduct.KindBackoff,
			hits: []*parse.Record{hit(f, 1, at(0), "/a", 503, retryAfter("120")), hit(f, 2, at(sec(65)), "/a", 200)},
			want: `came 1m5s after the 503 answer on line 1, which asked for 2m (Retry-After: "120")`,
		},
		{
			name: "backoff with Retry-After date",
			kind: conduct.KindBackoff,
			hits: []*parse.Record{hit(f, 1, at(0), "/a", 503, retryAfter(date)), hit(f, 2, at(sec(65)), "/a", 200)},
			want: `came at 2026-08-24T10:01:05Z, before the 2026-08-24T10:02:00Z that the 503 answer on line 1 asked for (Retry-After: "Mon, 24 Aug 2026 10:02:00 GMT")`,
		},
		{
			name: "backoff with unreadable Retry-After",
			kind: conduct.KindBackoff,
			hits: []*parse.Record{hit(f, 1, at(0), "/a", 503, retryAfter("soon\x1b[2J")), hit(f, 2, at(sec(10)), "/a", 200)},
			want: `came 10s after the 503 answer on line 1, whose Retry-After "soon\x1b[2J" is unreadable; the least backoff is 30s`,
		},
		{
			name: "robots-not-fetched, none in the logs",
			kind: conduct.KindRobotsNotFetched,
			hits: []*parse.Record{early, hit(f, 2, at(0), "/", 200)},
			want: "first page of a crawl with no /robots.txt request to this site in the 24h before it (none since the logs begin at 2026-08-21T10:00:00Z)",
		},
		{
			name: "robots-not-fetched, an old one",
			kind: conduct.KindRobotsNotFetched,
			hits: []*parse.Record{early, hit(f, 2, at(-25*time.Hour-3*time.Minute), "/robots.txt", 200), hit(f, 3, at(0), "/", 200)},
			want: "first page of a crawl with no /robots.txt request to this site in the 24h before it (the last one was 25h3m earlier, on line 2)",
		},
		{
			name: "robots-unavailable",
			kind: conduct.KindRobotsUnavailable,
			hits: []*parse.Record{hit(f, 4, at(0), "/robots.txt", 503), hit(f, 5, at(sec(12)), "/", 200)},
			want: "fetched 12s after /robots.txt answered 503 (line 4) and before it was fetched again: RFC 9309 treats that as a complete disallow",
		},
		{
			name: "auth, remote user with control characters",
			kind: conduct.KindAuth,
			hits: []*parse.Record{hit(f, 1, at(0), "/a", 200, withUser("bob\x1b]0;pwned\x07"))},
			want: `sent credentials: the log shows the remote user "bob\x1b]0;pwned\a"`,
		},
		{
			name: "auth, 2xx after 403",
			kind: conduct.KindAuth,
			hits: []*parse.Record{hit(f, 8, at(0), "/members", 403), hit(f, 9, at(90*time.Second), "/members", 200)},
			want: "got 200 for a path that answered 403 to the crawler 1m30s earlier (line 8)",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, sites := checkRecords(tt.hits, conductDefaults())
			checkConductInvariants(t, tt.hits, got, sites)
			var details []string
			for _, v := range got {
				if v.Kind == tt.kind {
					details = append(details, v.Detail)
				}
			}
			if !reflect.DeepEqual(details, []string{tt.want}) {
				t.Errorf("details = %q\nwant       [%q]", details, tt.want)
			}
		})
	}
}

// TestCheckConductRawFields checks that Path and IP keep the logged bytes
// while the detail escapes them.
func TestCheckConductRawFields(t *testing.T) {
	path := "/a\x1b[31m\u202e"
	hits := []*parse.Record{hit("l", 1, at(0), path, 200, withUser("x")), hit("l", 2, at(0), path, 200)}
	hits[1].Client, hits[1].ClientRaw = netip.Addr{}, "weird\x00addr"
	got, sites := checkRecords(hits, conductDefaults())
	checkConductInvariants(t, hits, got, sites)
	want := []conduct.Violation{
		{Kind: conduct.KindAuth, Site: "a.example", IP: "79.139.58.98", Time: conductT0, File: "l", Line: 1, Path: path,
			Detail: `sent credentials: the log shows the remote user "x"`},
		{Kind: conduct.KindPause, Site: "a.example", IP: "weird\x00addr", Time: conductT0, File: "l", Line: 2, Path: path,
			Detail: "logged in the same second as the request on line 1; the least pause is 1s"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %#v\nwant %#v", got, want)
	}
}

func TestCheckConductSiteReports(t *testing.T) {
	f := "access.log"
	rb := robots.Parse([]byte("User-agent: *\nDisallow: /x\n"))
	cfg := conductDefaults()
	cfg.Robots = func(site string) *robots.Robots {
		if site == "b.example" {
			return rb
		}
		return nil
	}
	hits := []*parse.Record{
		hit(f, 1, at(-48*time.Hour), "/robots.txt", 200, onSite("b.example"), nginxDur(sec(0.012))),
		hit(f, 2, at(-48*time.Hour+time.Minute), "/", 200, onSite("b.example"), nginxDur(sec(0.101))),
		hit(f, 3, at(0), "/robots.txt", 200),
		hit(f, 4, at(sec(5)), "/", 200),
		hit(f, 5, at(sec(10)), "/a", 200),
		hit(f, 6, at(sec(20)), "/b", 200, untimed(), onSite("c.example")),
		hit(f, 7, at(sec(20)), "/x", 200, untimed(), onSite("c.example"), withUser("u")),
	}
	got, sites := checkRecords(hits, cfg)
	checkConductInvariants(t, hits, got, sites)
	want := []conduct.SiteReport{
		{Site: "a.example", Pages: 2, RobotsFetches: 1, ChecksSkipped: []string{conduct.KindConcurrency, conduct.KindRobots}},
		// The logs do not reach back 24h before b.example's crawl.
		{Site: "b.example", Pages: 1, RobotsFetches: 1, ChecksSkipped: []string{conduct.KindRobotsNotFetched}},
		{Site: "c.example", Pages: 2, RobotsFetches: 0, Violations: 1, ChecksSkipped: []string{
			conduct.KindAuth, conduct.KindBackoff, conduct.KindBudget, conduct.KindConcurrency, conduct.KindPause, conduct.KindRobots, conduct.KindRobotsNotFetched, conduct.KindRobotsUnavailable,
		}},
	}
	if !reflect.DeepEqual(sites, want) {
		t.Errorf("sites:\n got  %+v\n want %+v", sites, want)
	}
	if keys := keysOf(got, nil); !reflect.DeepEqual(keys, []string{"auth c.example access.log:7"}) {
		t.Errorf("violations = %q", keys)
	}
}

// TestCheckConductOrderAndRepeats checks that input order does not matter
// and that a line read twice counts once.
func TestCheckConductOrderAndRepeats(t *testing.T) {
	var hits []*parse.Record
	for i := range 30 {
		d := time.Duration(i) * 700 * time.Millisecond
		st := 200
		if i%9 == 4 {
			st = 503
		}
		file := "access.log"
		if i < 12 {
			file = "access.log.1"
		}
		hits = append(hits, hit(file, int64(i+1), at(d).Truncate(time.Second), fmt.Sprintf("/p%d", i%7), st,
			onSite([]string{"a.example", "b.example"}[i%2]), nginxDur(sec(0.1+float64(i%5)*0.237))))
	}
	hits = append(hits, hit("access.log", 100, at(sec(3)), "/robots.txt", 503))
	want, wantSites := checkRecords(hits, conductDefaults())
	if len(want) == 0 {
		t.Fatal("the scenario found nothing; it should find pauses, backoffs and overlaps")
	}
	checkConductInvariants(t, hits, want, wantSites)
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 20 {
		shuffled := slices.Clone(hits)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		if round%2 == 1 {
			shuffled = append(shuffled, hits...) // every line twice, as when a file is given twice
			shuffled = append(shuffled, nil)
		}
		got, gotSites := checkRecords(shuffled, conductDefaults())
		if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(gotSites, wantSites) {
			t.Fatalf("round %d: result depends on order or repeats:\n got %s\nwant %s", round, dumpViolations(got), dumpViolations(want))
		}
	}
}

// TestCheckConductNginxLog reads a real nginx log, written in completion
// order, through the log reader and checks the planted violations.
func TestCheckConductNginxLog(t *testing.T) {
	format, err := parse.CompileNginx(`$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $host $request_time "$sent_http_retry_after"`)
	if err != nil {
		t.Fatal(err)
	}
	name := filepath.Join("testdata", "nginx-completion-order.log")
	fh, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	r := parse.NewReader(fh, parse.Options{Name: "access.log", Format: format, Claims: parse.NewTokenSet([][]string{{"LohiSoftBot"}}), Workers: 1})
	genuine := map[string]bool{"79.139.58.98": true, "79.139.58.121": true}
	var hits []*parse.Record
	for r.Scan() {
		rec := *r.Record()
		if genuine[rec.Client.String()] {
			hits = append(hits, &rec)
		}
	}
	if err := r.Err(); err != nil {
		t.Fatal(err)
	}
	if len(hits) != 9 {
		t.Fatalf("read %d genuine hits, want 9", len(hits))
	}
	got, sites := checkRecords(hits, conductDefaults())
	checkConductInvariants(t, hits, got, sites)
	wantKeys := []string{
		"concurrency a.example access.log:5",
		"backoff a.example access.log:8",
		"robots-not-fetched b.example access.log:9",
	}
	if keys := keysOf(got, nil); !reflect.DeepEqual(keys, wantKeys) {
		t.Errorf("violations:\n got  %q\n want %q%s", keys, wantKeys, dumpViolations(got))
	}
	wantDetails := []string{
		"2 requests at once: this one started 1.812s before the one on line 6 ended",
		`came 59.88s after the 429 answer on line 7, which asked for 2m (Retry-After: "120")`,
		"first page of a crawl with no /robots.txt request to this site in the 24h before it (the last one was 49h4m59s earlier, on line 2)",
	}
	for i, v := range got {
		if i < len(wantDetails) && v.Detail != wantDetails[i] {
			t.Errorf("detail %d = %q\nwant       %q", i, v.Detail, wantDetails[i])
		}
	}
	if len(got) > 0 && !got[0].Time.Equal(time.Date(2026, 8, 24, 10, 0, 11, 188e6, time.UTC)) {
		t.Errorf("concurrency time = %v, want the start 10:00:11.188", got[0].Time)
	}
}

func TestConductParseRetryAfter(t *testing.T) {
	tests := []struct {
		in     string
		delta  time.Duration
		at     time.Time
		isDate bool
		ok     bool
	}{
		{"120", 120 * time.Second, time.Time{}, false, true},
		{" 0 ", 0, time.Time{}, false, true},
		{"99999999999999999999999", time.Duration(1<<63-1) / time.Second * time.Second, time.Time{}, false, true},
		{"Mon, 24 Aug 2026 10:02:00 GMT", 0, at(2 * time.Minute), true, true},
		{"Monday, 24-Aug-26 10:02:00 GMT", 0, at(2 * time.Minute), true, true},
		{"Mon Aug 24 10:02:00 2026", 0, at(2 * time.Minute), true, true},
		{"", 0, time.Time{}, false, false},
		{"-", 0, time.Time{}, false, false},
		{"-5", 0, time.Time{}, false, false},
		{"1.5", 0, time.Time{}, false, false},
		{"soon", 0, time.Time{}, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			delta, when, isDate, ok := conduct.ParseRetryAfter(tt.in)
			if delta != tt.delta || !when.Equal(tt.at) || isDate != tt.isDate || ok != tt.ok {
				t.Errorf("conduct.ParseRetryAfter(%q) = %v, %v, %v, %v; want %v, %v, %v, %v",
					tt.in, delta, when, isDate, ok, tt.delta, tt.at, tt.isDate, tt.ok)
			}
		})
	}
}

func TestConductDur(t *testing.T) {
	tests := []struct {
		in   time.Duration
		want string
	}{
		{0, "0s"},
		{400 * time.Millisecond, "0.4s"},
		{1812 * time.Millisecond, "1.812s"},
		{59880 * time.Millisecond, "59.88s"},
		{time.Minute, "1m"},
		{65 * time.Second, "1m5s"},
		{24 * time.Hour, "24h"},
		{25*time.Hour + 3*time.Minute, "25h3m"},
		{-300 * time.Millisecond, "-0.3s"},
		{-1 << 63, "-2562047h47m16s"},
	}
	for _, tt := range tests {
		if got := conduct.FmtDur(tt.in); got != tt.want {
			t.Errorf("conduct.FmtDur(%v) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzCheckConduct runs the checks over small random record sets: they
// never panic, and the invariants of checkConductInvariants hold.
func FuzzCheckConduct(f *testing.F) {
	f.Add([]byte("\x01\x14\x00\x00\x10\x00\x00\x00\x00\x00\x01\x00\x00\x10\x00\x05\x00\x00"))
	f.Add([]byte("\x00\x00\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f"))
	f.Add([]byte(strings.Repeat("\x07\x91\xfe\x33\x80\x04\x2a\x19\x00", 8)))
	if data, err := os.ReadFile(filepath.Join("testdata", "nginx-completion-order.log")); err == nil {
		f.Add(data)
	}
	rb := robots.Parse([]byte("User-agent: LohiSoftBot\nDisallow: /p1\nAllow: /p1/ok\n"))
	paths := []string{"/robots.txt", "/p1", "/p1/ok", "/p2?x=1", "", "http://a.example/p1", "*", "/p\x1b"}
	statuses := []int{200, 206, 301, 304, 401, 403, 404, 429, 500, 503, 0}
	retry := []string{"", "-", "0", "5", "120", "soon", "Mon, 24 Aug 2026 10:02:00 GMT", "99999999999999999999"}
	units := []time.Duration{time.Second, time.Millisecond, 100 * time.Millisecond, 0}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		cfg := conduct.Config{
			Token:        "LohiSoftBot",
			Budget:       int(data[0] % 6),
			BudgetWindow: time.Duration(data[1]%5) * 20 * time.Second,
			MinPause:     time.Duration(data[0]/6%4) * 500 * time.Millisecond,
			MinBackoff:   time.Duration(data[1]/5%4) * 10 * time.Second,
		}
		if data[1]&0x80 != 0 {
			cfg.Robots = func(site string) *robots.Robots {
				if site == "a.example" {
					return rb
				}
				return nil
			}
		}
		data = data[2:]
		var hits []*parse.Record
		lines := map[string]int64{}
		for len(data) >= 6 && len(hits) < 64 {
			b := data[:6]
			data = data[6:]
			file := []string{"x.log", "y.log"}[b[0]&1]
			lines[file]++
			t0 := at(time.Duration(int16(uint16(b[1])<<8|uint16(b[2]))) * 37 * time.Millisecond)
			unit := units[b[0]>>1&3]
			if unit > 0 {
				t0 = t0.Truncate(unit)
			}
			opts := []hitOpt{onSite([]string{"a.example", "b.example"}[b[0]>>3&1])}
			if b[0]&0x10 != 0 {
				opts = append(opts, fromIP("79.139.58.121"))
			}
			switch b[0] >> 5 {
			case 1:
				opts = append(opts, nginxDur(time.Duration(b[5])*13*time.Millisecond))
			case 2:
				opts = append(opts, apacheDur(time.Duration(b[5])*time.Second/7))
			case 3:
				opts = append(opts, untimed())
			case 4:
				opts = append(opts, withUser("u\x00"))
			}
			opts = append(opts, retryAfter(retry[int(b[4])%len(retry)]))
			r := hit(file, lines[file], t0, paths[int(b[3])%len(paths)], statuses[int(b[3]>>3)%len(statuses)], opts...)
			if unit == 0 && r.Resolution > 0 {
				r.Resolution = time.Nanosecond // the file's timestamps decide
			}
			hits = append(hits, r)
		}
		got, sites := checkRecords(hits, cfg)
		checkConductInvariants(t, hits, got, sites)
		again, againSites := checkRecords(slices.Clone(hits), cfg)
		if !reflect.DeepEqual(got, again) || !reflect.DeepEqual(sites, againSites) {
			t.Fatal("two runs over the same input differ")
		}

		// An Audit keeps hits in its own compact form: its report must
		// find the same violations. It takes each log as a server writes
		// it, nearly in time order.
		cfg.Covered = func(site string, from, to time.Time) bool { return true }
		slices.SortStableFunc(hits, func(a, b *parse.Record) int {
			return cmp.Or(strings.Compare(a.File, b.File), a.Time.Compare(b.Time))
		})
		want, wantSites := checkRecords(hits, cfg)
		a := &audit.Audit{}
		for i, h := range hits {
			a.Add(h)
			if i == len(hits)-1 || hits[i+1].File != h.File {
				a.AddInput(audit.InputReport{File: h.File}, nil)
			}
		}
		results := map[netip.Addr]verify.Result{
			netip.MustParseAddr("79.139.58.98"):  {Verdict: verify.Genuine, Method: verify.MethodIPList},
			netip.MustParseAddr("79.139.58.121"): {Verdict: verify.Genuine, Method: verify.MethodIPList},
		}
		// So does its snapshot, once written as JSON and read back.
		data, err := json.Marshal(a.Snapshot(results))
		if err != nil {
			t.Fatal(err)
		}
		var snap conduct.Snapshot
		if err := json.Unmarshal(data, &snap); err != nil {
			t.Fatal(err)
		}
		if fromSnap, _ := snap.Check(cfg); !reflect.DeepEqual(fromSnap, want) {
			t.Fatalf("snapshot violations differ from Check's:%s\nwant:%s", dumpViolations(fromSnap), dumpViolations(want))
		}
		rep := a.Report(results, cfg)
		if !reflect.DeepEqual(rep.Violations, want) {
			t.Fatalf("audit violations differ from CheckConduct's:%s\nwant:%s", dumpViolations(rep.Violations), dumpViolations(want))
		}
		for i := range rep.Sites {
			rep.Sites[i].ClaimedHits = 0
		}
		if !reflect.DeepEqual(rep.Sites, wantSites) {
			t.Fatalf("audit sites %+v, CheckConduct's %+v", rep.Sites, wantSites)
		}
	})
}

// TestCheckConductZeroConfig checks the zero values: no product token
// picks the * group alone, and budget and pause are off and said to be.
func TestCheckConductZeroConfig(t *testing.T) {
	rb := robots.Parse([]byte("User-agent: LohiSoftBot\nDisallow: /\n\nUser-agent: *\nDisallow: /x\n"))
	hits := []*parse.Record{hit("l", 1, at(0), "/robots.txt", 200)}
	for i := range 30 {
		hits = append(hits, hit("l", int64(i+2), at(time.Duration(i+1)*time.Minute), fmt.Sprintf("/p%d", i), 200))
	}
	hits = append(hits, hit("l", 40, at(time.Hour), "/x", 200), hit("l", 41, at(time.Hour), "/y", 429), hit("l", 42, at(time.Hour+10*time.Second), "/z", 200))
	got, sites := checkRecords(hits, conduct.Config{Robots: func(string) *robots.Robots { return rb }})
	checkConductInvariants(t, hits, got, sites)
	if keys := keysOf(got, nil); !reflect.DeepEqual(keys, []string{"robots a.example l:40"}) {
		t.Errorf("violations = %q%s", keys, dumpViolations(got))
	}
	want := []string{conduct.KindBudget, conduct.KindConcurrency, conduct.KindPause, conduct.KindRobotsNotFetched}
	if len(sites) != 1 || !reflect.DeepEqual(sites[0].ChecksSkipped, want) {
		t.Errorf("sites = %+v, want checks_skipped %q", sites, want)
	}
}

// TestCheckConductLogStart: with LogStart the first line of the file, not
// the crawler's first hit, says how far back the log reaches.
func TestCheckConductLogStart(t *testing.T) {
	hits := []*parse.Record{hit("access.log", 900, at(0), "/", 200), hit("access.log", 901, at(sec(5)), "/a", 200)}
	tests := []struct {
		name     string
		start    time.Time
		want     int
		skipped  bool
		inDetail string
	}{
		{"no log start: cannot tell", time.Time{}, 0, true, ""},
		{"log begins two days earlier", at(-48 * time.Hour), 1, false, "none since the logs begin at"},
		{"log begins 23h earlier: cannot tell", at(-23 * time.Hour), 0, true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := conductDefaults()
			cfg.LogStart = func(file string) (time.Time, bool) {
				if file != "access.log" {
					t.Errorf("asked for %q", file)
				}
				return tt.start, !tt.start.IsZero()
			}
			got, sites := checkRecords(hits, cfg)
			n := 0
			for _, v := range got {
				if v.Kind == conduct.KindRobotsNotFetched {
					n++
					if !strings.Contains(v.Detail, tt.inDetail) {
						t.Errorf("detail %q", v.Detail)
					}
				}
			}
			skipped := slices.Contains(sites[0].ChecksSkipped, conduct.KindRobotsNotFetched)
			if n != tt.want || skipped != tt.skipped {
				t.Errorf("%d violations (want %d), skipped %v (want %v)", n, tt.want, skipped, tt.skipped)
			}
		})
	}
}

// TestRobotsNotPromised: a crawler whose operator says it may ignore
// robots.txt (ChatGPT-User and the like) breaks no robots.txt promise:
// pages robots.txt disallows, a crawl without a robots.txt fetch and one
// after a 5xx answer are no violations, and the three checks are listed
// as not promised, not as skipped; a crawler that makes no promise
// (RobotsOff) has them listed as skipped. Its other promises still count.
func TestRobotsNotPromised(t *testing.T) {
	f := "access.log"
	rb := robots.Parse([]byte("User-agent: *\nDisallow: /private/\n"))
	recs := []*parse.Record{
		hit(f, 1, at(-72*time.Hour), "/", 200, onSite("c.example")),
		hit(f, 2, at(0), "/robots.txt", 503),
		hit(f, 3, at(sec(5)), "/private/a", 200),
		hit(f, 4, at(sec(5)), "/private/b", 200),
	}
	robotsKinds := []string{conduct.KindRobots, conduct.KindRobotsNotFetched, conduct.KindRobotsUnavailable}
	base := conductDefaults()
	base.Robots = func(string) *robots.Robots { return rb }
	got, _ := checkRecords(recs, base)
	if len(keysOf(got, robotsKinds)) == 0 {
		t.Fatalf("the promise kept: no robots violation to leave out: %s", dumpViolations(got))
	}
	for _, tc := range []struct {
		name                  string
		off, notPromised      bool
		skipped, notPromised2 []string
	}{
		{"not promised", false, true, nil, robotsKinds},
		{"no promise made", true, false, robotsKinds, nil},
	} {
		cfg := base
		cfg.RobotsOff, cfg.RobotsNotPromised = tc.off, tc.notPromised
		got, sites := checkRecords(recs, cfg)
		if k := keysOf(got, robotsKinds); len(k) != 0 {
			t.Errorf("%s: robots violations %q", tc.name, k)
		}
		if k := keysOf(got, []string{conduct.KindPause}); len(k) != 1 {
			t.Errorf("%s: pause violations %q, want the one of line 4", tc.name, k)
		}
		var s conduct.SiteReport
		for _, r := range sites {
			if r.Site == "a.example" {
				s = r
			}
		}
		for _, k := range robotsKinds {
			if slices.Contains(s.ChecksSkipped, k) != slices.Contains(tc.skipped, k) || slices.Contains(s.NotPromised, k) != slices.Contains(tc.notPromised2, k) {
				t.Errorf("%s: checks_skipped %q, not_promised %q", tc.name, s.ChecksSkipped, s.NotPromised)
			}
		}
		checkConductInvariants(t, recs, got, sites)
	}
}
