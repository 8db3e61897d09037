package conduct

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// Past maxDeniedPaths paths waiting for a 2xx, the oldest is forgotten:
// a 2xx for it is then not seen, and the report says so, listing auth as
// not fully checked; a path still remembered is flagged as ever.
func TestAuthBoundSaid(t *testing.T) {
	t0 := time.Date(2026, 8, 24, 10, 0, 0, 0, time.UTC)
	var hits []Hit
	add := func(path string, status int) {
		hits = append(hits, Hit{Site: "a.example", File: "a.log", Line: int64(len(hits) + 1), IP: "79.139.58.98",
			Target: path, Status: status, Time: t0.Add(time.Duration(len(hits)) * 2 * time.Second), Resolution: time.Second})
	}
	for i := range maxDeniedPaths + 1 {
		add(fmt.Sprintf("/private/%d", i), 403)
	}
	add("/private/0", 200) // forgotten: not seen
	add("/private/5", 200) // remembered
	got := streamed([][]Hit{hits}, Config{})
	var auth []int64
	for _, v := range got.Violations {
		if v.Kind == KindAuth {
			auth = append(auth, v.Line)
		}
	}
	if want := []int64{int64(len(hits))}; !slices.Equal(auth, want) {
		t.Errorf("auth violations on lines %v, want %v", auth, want)
	}
	if !slices.Contains(got.Sites[0].ChecksSkipped, KindAuth) {
		t.Errorf("checks skipped %v: auth is not complete", got.Sites[0].ChecksSkipped)
	}
	if len(got.Warnings) != 1 || !strings.Contains(got.Warnings[0], "a.example: 1 path that answered 401 or 403 to the crawler was forgotten") {
		t.Errorf("warnings %q", got.Warnings)
	}
}

// More /robots.txt requests than maxRobotsKept logged with the first page
// of a crawl leave that crawl unjudged for robots-not-fetched, said; they
// cost robots-unavailable nothing, as no 5xx answer came before.
func TestRobotsBoundSaid(t *testing.T) {
	t0 := time.Date(2026, 8, 24, 10, 0, 0, 0, time.UTC)
	hits := []Hit{{Site: "a.example", File: "a.log", Line: 1, IP: "79.139.58.98", Target: "/", Status: 200, Time: t0, Resolution: time.Second}}
	for range maxRobotsKept + 1 {
		hits = append(hits, Hit{Site: "a.example", File: "a.log", Line: int64(len(hits) + 1), IP: "79.139.58.98",
			Target: "/robots.txt", Status: 200, Time: t0, Resolution: time.Second})
	}
	cfg := Config{Covered: func(string, time.Time, time.Time) bool { return true }}
	got := streamed([][]Hit{hits}, cfg)
	if len(got.Violations) != 0 || !slices.Contains(got.Sites[0].ChecksSkipped, KindRobotsNotFetched) {
		t.Errorf("violations %s, skipped %v", dumpVs(got.Violations), got.Sites[0].ChecksSkipped)
	}
	if len(got.Warnings) != 1 || !strings.Contains(got.Warnings[0], "1 crawl was not judged for robots-not-fetched") {
		t.Errorf("warnings %q", got.Warnings)
	}
}
