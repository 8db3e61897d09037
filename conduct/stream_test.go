package conduct

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/robots"
)

// logSource gives hits from memory as a Source, in the order given.
type logSource struct {
	hits []Hit
	pos  int
}

func (s *logSource) Next(h *Hit) bool {
	if s.pos == len(s.hits) {
		return false
	}
	*h = s.hits[s.pos]
	s.pos++
	return true
}

// siteSource is a logSource that can leave out sites (a SiteSource).
type siteSource struct {
	logSource
	keep func(string) bool
}

func (s *siteSource) Only(keep func(string) bool) { s.keep = keep }

func (s *siteSource) Next(h *Hit) bool {
	for s.logSource.Next(h) {
		if s.keep == nil || s.keep(h.Site) {
			return true
		}
	}
	return false
}

// streamed runs the checks the way a caller with large logs does: every
// hit through Measure, then Anchor, then the logs to Run, one Source each.
func streamed(logs [][]Hit, cfg Config) Result { return streamedAtOnce(logs, cfg, 0) }

// streamedAtOnce is streamed with at most atOnce sites checked in one
// pass over the logs (0: the default); the even logs leave out sites
// themselves, the odd ones are filtered.
func streamedAtOnce(logs [][]Hit, cfg Config, atOnce int) Result {
	return streamedSharded(logs, cfg, atOnce, 0)
}

// streamedSharded is streamedAtOnce with the sites dealt over shards
// goroutines (0: GOMAXPROCS; 1: checked by Run's own).
func streamedSharded(logs [][]Hit, cfg Config, atOnce, shards int) Result {
	return streamedWith(logs, cfg, func(c *Checker) { c.sitesAtOnce, c.shards = atOnce, shards })
}

// streamedSplit is streamedSharded with the logs merged in split shares,
// each in a goroutine of its own, however few they are.
func streamedSplit(logs [][]Hit, cfg Config, atOnce, shards, split int) Result {
	return streamedWith(logs, cfg, func(c *Checker) { c.sitesAtOnce, c.shards, c.split = atOnce, shards, split })
}

// streamedWith is streamed with the Checker set up by setup first.
func streamedWith(logs [][]Hit, cfg Config, setup func(*Checker)) Result {
	c := NewChecker(cfg)
	setup(c)
	for _, l := range logs {
		for i := range l {
			c.Measure(&l[i])
		}
	}
	for _, l := range logs {
		for i := range l {
			c.Anchor(&l[i])
		}
	}
	return runLogs(c, logs)
}

// streamedSurveys is streamed with the Measure and Anchor passes split
// by file over n surveys, each in a goroutine of its own.
func streamedSurveys(logs [][]Hit, cfg Config, n int) Result {
	c := NewChecker(cfg)
	group := map[string]int{}
	for _, l := range logs {
		for _, h := range l {
			if _, ok := group[h.File]; !ok {
				group[h.File] = len(group) % n
			}
		}
	}
	surveys := make([]*Survey, n)
	var wg sync.WaitGroup
	for g := range surveys {
		sv := c.NewSurvey()
		surveys[g] = sv
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, pass := range []func(*Hit){sv.Measure, sv.Anchor} {
				for _, l := range logs {
					for i := range l {
						if group[l[i].File] == g {
							pass(&l[i])
						}
					}
				}
			}
		}()
	}
	wg.Wait()
	c.Join(surveys...)
	return runLogs(c, logs)
}

// runLogs runs c over the logs, one Source each: the even ones leave out
// sites themselves, the odd ones are filtered.
func runLogs(c *Checker, logs [][]Hit) Result {
	return c.Run(func() []Source {
		var sources []Source
		for i, l := range logs {
			if i%2 == 0 {
				sources = append(sources, &siteSource{logSource: logSource{hits: l}})
			} else {
				sources = append(sources, &logSource{hits: l})
			}
		}
		return sources
	})
}

// randomLogs makes a few small logs of random requests from the crawler
// to a few sites: times to the second or the millisecond, with and
// without durations (the end logged as nginx does, or the start as
// Apache does), each log in the order its server would write it (by the
// logged time, a few lines swapped), some requests without a time, some
// logs given twice.
func randomLogs(rng *rand.Rand) [][]Hit {
	t0 := time.Date(2026, 8, 24, 10, 0, 0, 0, time.UTC)
	if rng.IntN(20) == 0 {
		t0 = time.Time{} // year 1 is a time like any other
	}
	sites := []string{"a.example", "b.example", "c.example"}[:1+rng.IntN(3)]
	paths := []string{"/robots.txt", "/robots.txt", "/p1", "/p2", "/p3?x", "/private/x", "", "http://a.example/p1"}
	statuses := []int{200, 200, 200, 204, 301, 304, 401, 403, 404, 429, 500, 503}
	retries := []string{"", "", "-", "0", "5", "40", "soon", "Mon, 24 Aug 2026 10:02:00 GMT"}
	span := []time.Duration{time.Minute, 10 * time.Minute, 2 * time.Hour, 30 * time.Hour, 40 * 24 * time.Hour}[rng.IntN(5)]
	nLogs := 1 + rng.IntN(3)
	var logs [][]Hit
	for f := range nLogs {
		name := fmt.Sprintf("%c.log", 'x'+f)
		style := rng.IntN(4) // 0: seconds, 1: milliseconds, 2: nginx durations, 3: apache durations
		n := rng.IntN(40)
		var l []Hit
		for i := range n {
			t := t0.Add(time.Duration(rng.Int64N(int64(span))))
			h := Hit{
				Site: sites[rng.IntN(len(sites))], File: name, Line: int64(i + 1),
				IP: "79.139.58.98", Target: paths[rng.IntN(len(paths))], Status: statuses[rng.IntN(len(statuses))],
				Time: t.Truncate(time.Second), Resolution: time.Second,
			}
			if rng.IntN(30) == 0 {
				h.IP = "79.139.58.121"
			}
			if rng.IntN(3) == 0 {
				h.RetryAfter = retries[rng.IntN(len(retries))]
			}
			if rng.IntN(40) == 0 {
				h.RemoteUser = "bob"
			}
			switch style {
			case 1:
				h.Time, h.Resolution = t.Truncate(time.Millisecond), time.Millisecond
			case 2, 3:
				h.HasDuration, h.StartLogged = true, style == 3
				h.Duration = time.Duration(rng.IntN(4000)) * time.Millisecond
				if rng.IntN(10) == 0 {
					h.Duration = time.Duration(rng.IntN(5)) * time.Minute
				}
			}
			if rng.IntN(60) == 0 {
				h.Resolution = time.Minute // a reader claiming a coarse unit
			}
			if rng.IntN(150) == 0 {
				h.Time, h.Resolution = time.Time{}, 0 // no time logged
			}
			l = append(l, h)
		}
		// As the server writes them: by the logged time.
		slices.SortStableFunc(l, func(a, b Hit) int { return a.Time.Compare(b.Time) })
		for range rng.IntN(3) {
			if len(l) > 1 {
				if i := rng.IntN(len(l) - 1); l[i+1].Time.Sub(l[i].Time) < 10*time.Minute {
					l[i], l[i+1] = l[i+1], l[i]
				}
			}
		}
		for i := range l {
			l[i].Line = int64(i + 1)
		}
		logs = append(logs, l)
		if rng.IntN(8) == 0 {
			logs = append(logs, slices.Clone(l)) // the same log given twice
		}
	}
	return logs
}

// randomConfig makes a random configuration of the checks.
func randomConfig(rng *rand.Rand, logs [][]Hit) Config {
	cfg := Config{
		Budget:       rng.IntN(6),
		BudgetWindow: []time.Duration{0, 20 * time.Second, 10 * time.Minute, 24 * time.Hour}[rng.IntN(4)],
		MinPause:     []time.Duration{0, 500 * time.Millisecond, time.Second, 3 * time.Second}[rng.IntN(4)],
		MinBackoff:   []time.Duration{0, 10 * time.Second, 30 * time.Second}[rng.IntN(3)],
	}
	if rng.IntN(3) > 0 {
		cfg.Token = "LohiSoftBot"
	}
	if rng.IntN(2) == 0 {
		rb := robots.Parse([]byte("User-agent: LohiSoftBot\nDisallow: /private\nDisallow: /p2\nAllow: /p2$\n"))
		cfg.Robots = func(site string) *robots.Robots {
			if site != "c.example" {
				return rb
			}
			return nil
		}
	}
	if rng.IntN(3) == 0 {
		// Dated versions around the logs' times: a day before them, and
		// changes a few minutes and a day and a half into them.
		t0 := time.Date(2026, 8, 24, 10, 0, 0, 0, time.UTC)
		if len(logs) > 0 && len(logs[0]) > 0 && logs[0][0].Time.Year() == 1 {
			t0 = time.Time{}
		}
		texts := []string{
			"User-agent: LohiSoftBot\nDisallow: /private\n",
			"User-agent: *\nDisallow: /p1\nDisallow: /private\n",
			"User-agent: LohiSoftBot\nDisallow: /p2\nDisallow: /p1\n",
			"User-agent: LohiSoftBot\nDisallow: /\n",
		}
		froms := []time.Duration{-24 * time.Hour, time.Duration(rng.IntN(600)) * time.Second, 36 * time.Hour, 40 * time.Hour}
		var vs []robots.Version
		for i, d := range froms[:1+rng.IntN(4)] {
			vs = append(vs, robots.Version{From: t0.Add(d), Name: fmt.Sprintf("v%d.txt", i), Robots: robots.Parse([]byte(texts[i]))})
		}
		if rng.IntN(4) == 0 {
			vs = vs[1:] // none before the logs begin
		}
		if len(vs) > 0 {
			h := &robots.History{Versions: vs, Name: "versions"}
			cfg.RobotsHistory = func(site string) *robots.History {
				if site == "b.example" {
					return nil // the single robots.txt, or none
				}
				return h
			}
		}
	}
	if rng.IntN(3) == 0 {
		at := time.Date(2026, 8, 24, 10, 0, 0, 0, time.UTC).Add(time.Duration(rng.IntN(3600)-600) * time.Second)
		cfg.OptOutGrace = []time.Duration{0, time.Second, 5 * time.Minute, 48 * time.Hour}[rng.IntN(4)]
		cfg.OptedOut = func(site string) (time.Time, bool) { return at, site != "c.example" }
	}
	switch rng.IntN(10) {
	case 0:
		cfg.RobotsOff = true
	case 1:
		cfg.RobotsNotPromised = true
	}
	if rng.IntN(3) == 0 {
		// The logs of several servers, whose clocks may differ.
		clocks := map[string]string{}
		for _, l := range logs {
			if len(l) > 0 {
				clocks[l[0].File] = fmt.Sprint("server", rng.IntN(2))
			}
		}
		cfg.Clock = func(file string) string { return clocks[file] }
		cfg.ClockSkew = []time.Duration{0, time.Millisecond, time.Second, 3 * time.Second, 90 * time.Second}[rng.IntN(5)]
	}
	switch rng.IntN(3) {
	case 0:
		cfg.Covered = func(site string, from, to time.Time) bool { return site != "b.example" || from.Second()%2 == 0 }
	case 1:
		starts := map[string]time.Time{}
		for _, l := range logs {
			if len(l) > 0 && rng.IntN(2) == 0 {
				starts[l[0].File] = l[0].Time.Add(-time.Duration(rng.IntN(48)) * time.Hour)
			}
		}
		cfg.LogStart = func(file string) (time.Time, bool) { t, ok := starts[file]; return t, ok }
	}
	return cfg
}

// TestStreamEqualsBatch checks, on random logs, that the checks made in
// one pass over logs merged by time give what the checks of every site's
// hits in memory gave: the same violations and site reports.
func TestStreamEqualsBatch(t *testing.T) {
	seeds := uint64(3000)
	if raceOn {
		seeds = 300 // the same code, far slower
	}
	for seed := range seeds {
		rng := rand.New(rand.NewPCG(seed, 99))
		logs := randomLogs(rng)
		cfg := randomConfig(rng, logs)
		var all []Hit
		for _, l := range logs {
			all = append(all, l...)
		}
		want, wantSites := referenceCheck(slices.Clone(all), cfg)
		got := streamed(logs, cfg)
		if len(got.Warnings) > 0 {
			t.Fatalf("seed %d: warnings %q", seed, got.Warnings)
		}
		if !reflect.DeepEqual(got.Violations, want) {
			t.Fatalf("seed %d: streamed violations differ\ngot:  %s\nwant: %s", seed, dumpVs(got.Violations), dumpVs(want))
		}
		if !reflect.DeepEqual(got.Sites, wantSites) {
			t.Fatalf("seed %d: site reports differ\ngot:  %+v\nwant: %+v", seed, got.Sites, wantSites)
		}
		if inMem, inMemSites := Check(all, cfg); !reflect.DeepEqual(inMem, want) || !reflect.DeepEqual(inMemSites, wantSites) {
			t.Fatalf("seed %d: Check differs from the batch check", seed)
		}
		// Sites checked one or two at a time, a pass over the logs each.
		if byShare := streamedAtOnce(logs, cfg, 1+int(seed%2)); !reflect.DeepEqual(byShare, got) {
			t.Fatalf("seed %d: checked %d sites at a time: %s %+v\nwant %s %+v", seed, 1+seed%2, dumpVs(byShare.Violations), byShare.Sites, dumpVs(got.Violations), got.Sites)
		}
		// Sites checked by Run's goroutine alone, or dealt over three.
		for _, shards := range []int{1, 3} {
			if sharded := streamedSharded(logs, cfg, 1+int(seed%3), shards); !reflect.DeepEqual(sharded, got) {
				t.Fatalf("seed %d: %d shards: %s %+v\nwant %s %+v", seed, shards, dumpVs(sharded.Violations), sharded.Sites, dumpVs(got.Violations), got.Sites)
			}
		}
		// The logs merged in shares, each in a goroutine of its own.
		split := 1 + int(seed%3)
		if shared := streamedSplit(logs, cfg, 1+int(seed%2), 2, split); !reflect.DeepEqual(shared, got) {
			t.Fatalf("seed %d: merged in %d shares: %s %+v\nwant %s %+v", seed, split, dumpVs(shared.Violations), shared.Sites, dumpVs(got.Violations), got.Sites)
		}
		// Sites numbered (Hit.SiteID) in some logs and named only in the
		// others, and, for some seeds, each log numbering its sites its
		// own way (one id, two sites: snapshots of two audits joined):
		// each site is checked once all the same.
		ids := map[string]uint32{}
		numbered := make([][]Hit, len(logs))
		for i, l := range logs {
			if seed%3 == 0 {
				ids = map[string]uint32{}
			}
			numbered[i] = slices.Clone(l)
			for j := range numbered[i] {
				if h := &numbered[i][j]; (i+int(seed))%2 == 0 {
					if ids[h.Site] == 0 {
						ids[h.Site] = uint32(len(ids) + 1)
					}
					h.SiteID = ids[h.Site]
				}
			}
		}
		if byID := streamedSharded(numbered, cfg, 1+int(seed%2), 1+int(seed%3)); !reflect.DeepEqual(byID, got) {
			t.Fatalf("seed %d: sites by id: %s %+v\nwant %s %+v", seed, dumpVs(byID.Violations), byID.Sites, dumpVs(got.Violations), got.Sites)
		}
		// The passes split by file over surveys run at once.
		if surveyed := streamedSurveys(logs, cfg, 2+int(seed%2)); !reflect.DeepEqual(surveyed, got) {
			t.Fatalf("seed %d: surveys: %s %+v\nwant %s %+v", seed, dumpVs(surveyed.Violations), surveyed.Sites, dumpVs(got.Violations), got.Sites)
		}
		// The site reports handed on as each pass ends, in the same order.
		var handed []SiteReport
		each := streamedWith(logs, cfg, func(c *Checker) {
			c.sitesAtOnce = 1 + int(seed%2)
			c.EachSite(func(s SiteReport) { handed = append(handed, s) })
		})
		if each.Sites != nil || len(handed)+len(got.Sites) > 0 && !reflect.DeepEqual(handed, got.Sites) || !reflect.DeepEqual(each.Violations, got.Violations) {
			t.Fatalf("seed %d: EachSite: %+v (Result.Sites %+v)\nwant %+v", seed, handed, each.Sites, got.Sites)
		}

		// A bound on the list keeps the first of each site and kind, and
		// counts the others.
		cfg.MaxViolations = 1 + rng.IntN(3)
		bounded := streamed(logs, cfg)
		wantKept, wantLeft := firstPerKind(want, cfg.MaxViolations)
		if !reflect.DeepEqual(bounded.Violations, wantKept) {
			t.Fatalf("seed %d: bounded to %d: got %s\nwant %s", seed, cfg.MaxViolations, dumpVs(bounded.Violations), dumpVs(wantKept))
		}
		for i, s := range bounded.Sites {
			if s.Violations != wantSites[i].Violations {
				t.Fatalf("seed %d: site %s counts %d violations, want %d", seed, s.Site, s.Violations, wantSites[i].Violations)
			}
			if !reflect.DeepEqual(s.ViolationsLeftOut, wantLeft[s.Site]) {
				t.Fatalf("seed %d: site %s left out %v, want %v", seed, s.Site, s.ViolationsLeftOut, wantLeft[s.Site])
			}
		}
	}
}

// firstPerKind keeps the first max violations of each site and kind of
// vs (sorted as a report is) and counts the others per site and kind.
func firstPerKind(vs []Violation, max int) ([]Violation, map[string]map[string]int) {
	kept := []Violation{}
	left := map[string]map[string]int{}
	n := map[[2]string]int{}
	for _, v := range vs {
		k := [2]string{v.Site, v.Kind}
		n[k]++
		if n[k] <= max {
			kept = append(kept, v)
			continue
		}
		if left[v.Site] == nil {
			left[v.Site] = map[string]int{}
		}
		left[v.Site][v.Kind]++
	}
	return kept, left
}

func dumpVs(vs []Violation) string {
	var b strings.Builder
	for _, v := range vs {
		fmt.Fprintf(&b, "\n  %s %s %s %s:%d %q %s", v.Kind, v.Site, v.Time.Format(time.RFC3339Nano), v.File, v.Line, v.Path, v.Detail)
	}
	return b.String()
}

// TestStreamOutOfOrder checks that a log whose lines are out of time
// order by less than Disorder is checked as if in order, and that one
// further out of order is said, by file and line, its late requests
// counted and checked for robots.txt and credentials, and its site's time
// checks listed as not fully checked.
func TestStreamOutOfOrder(t *testing.T) {
	t0 := time.Date(2026, 8, 24, 10, 0, 0, 0, time.UTC)
	at := func(file string, line int64, d time.Duration, path string, status int) Hit {
		return Hit{Site: "a.example", File: file, Line: line, IP: "79.139.58.98", Target: path, Status: status,
			Time: t0.Add(d), Resolution: time.Second}
	}
	rb := robots.Parse([]byte("User-agent: *\nDisallow: /private\n"))
	cfg := Config{Budget: 20, BudgetWindow: 24 * time.Hour, MinPause: time.Second, MinBackoff: 30 * time.Second,
		Robots: func(string) *robots.Robots { return rb }}

	// Within the window: a request logged 10 minutes late.
	near := []Hit{at("a.log", 1, 0, "/robots.txt", 200), at("a.log", 2, 11*time.Minute, "/a", 200),
		at("a.log", 3, time.Minute, "/b", http.StatusServiceUnavailable), at("a.log", 4, time.Minute+5*time.Second, "/c", 200)}
	want, wantSites := referenceCheck(slices.Clone(near), cfg)
	got := streamed([][]Hit{near}, cfg)
	if !reflect.DeepEqual(got.Violations, want) || !reflect.DeepEqual(got.Sites, wantSites) || len(got.Warnings) > 0 {
		t.Fatalf("10 minutes out of order: got %s %+v %q\nwant %s %+v", dumpVs(got.Violations), got.Sites, got.Warnings, dumpVs(want), wantSites)
	}
	if len(want) != 1 || want[0].Kind != KindBackoff {
		t.Fatalf("the case should find one backoff violation: %s", dumpVs(want))
	}

	// Too far: two requests logged an hour late, one to a disallowed
	// page with credentials, one so soon after another that it would
	// break the pause.
	far := []Hit{at("b.log", 1, 0, "/robots.txt", 200)}
	for i := range 100 {
		far = append(far, at("b.log", int64(i+2), time.Hour+time.Duration(i)*10*time.Second, "/x", 200))
	}
	late := at("b.log", 102, 20*time.Minute, "/private/1", 200)
	late.RemoteUser = "bob"
	far = append(far, late, at("b.log", 103, 20*time.Minute, "/y", 200))
	got = streamed([][]Hit{far}, cfg)
	if len(got.Warnings) != 1 || !strings.HasPrefix(got.Warnings[0], "b.log: 2 requests logged more than 15m out of time order (the first on line 102)") {
		t.Fatalf("warnings %q", got.Warnings)
	}
	var kindsGot []string
	for _, v := range got.Violations {
		kindsGot = append(kindsGot, fmt.Sprintf("%s:%d", v.Kind, v.Line))
	}
	if w := []string{"auth:102", "robots:102", "budget:22"}; !slices.Equal(kindsGot, w) {
		t.Fatalf("violations %v, want %v (no pause for line 103)", kindsGot, w)
	}
	s := got.Sites[0]
	if s.Pages != 102 || s.RobotsFetches != 1 {
		t.Fatalf("late requests not counted: %+v", s)
	}
	if w := []string{KindAuth, KindBackoff, KindBudget, KindConcurrency, KindPause, KindRobotsNotFetched, KindRobotsUnavailable}; !slices.Equal(s.ChecksSkipped, w) {
		t.Fatalf("checks skipped %v, want %v", s.ChecksSkipped, w)
	}

	// The same late requests in a log of several sites, and in two logs:
	// the sites dealt over goroutines find and say the same.
	var mixed, other []Hit
	for i, h := range far {
		for j, site := range []string{"a.example", "b.example", "c.example"} {
			h.Site, h.Line = site, int64(3*i+j+1)
			mixed = append(mixed, h)
		}
		h.File, h.Site, h.Line = "c.log", "d.example", int64(i+1)
		other = append(other, h)
	}
	one := streamedSharded([][]Hit{mixed, other}, cfg, 0, 1)
	if len(one.Warnings) != 2 || !strings.HasPrefix(one.Warnings[0], "b.log: 6 requests logged more than 15m out of time order (the first on line 304)") ||
		!strings.HasPrefix(one.Warnings[1], "c.log: 2 requests logged more than 15m out of time order (the first on line 102)") || len(one.Sites) != 4 {
		t.Fatalf("several sites: warnings %q, sites %+v", one.Warnings, one.Sites)
	}
	for _, shards := range []int{2, 3, 5} {
		if got := streamedSharded([][]Hit{mixed, other}, cfg, 0, shards); !reflect.DeepEqual(got, one) {
			t.Fatalf("%d shards: %s %+v %q\nwant %s %+v %q", shards, dumpVs(got.Violations), got.Sites, got.Warnings, dumpVs(one.Violations), one.Sites, one.Warnings)
		}
		// The two logs merged apart, each in a goroutine of its own.
		if got := streamedSplit([][]Hit{mixed, other}, cfg, 0, shards, 2); !reflect.DeepEqual(got, one) {
			t.Fatalf("%d shards, merged in 2 shares: %s %+v %q\nwant %s %+v %q", shards, dumpVs(got.Violations), got.Sites, got.Warnings, dumpVs(one.Violations), one.Sites, one.Warnings)
		}
	}
}
