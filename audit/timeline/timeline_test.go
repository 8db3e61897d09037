package timeline

import (
	"math/rand/v2"
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 1, 7, 0, 0, 0, time.UTC)

func sumBuckets(bs []Bucket) Counts {
	var c Counts
	for _, b := range bs {
		c.Add(b.Counts)
	}
	return c
}

func TestTimelineExactBelowCap(t *testing.T) {
	tl := &Timeline{MarkCap: 100}
	// Added out of order, with robots.txt fetches and back-off answers.
	for i := 99; i >= 0; i-- {
		tl.Add(Request{Time: t0.Add(time.Duration(i) * 7 * time.Second), Class: Genuine, Robots: i%10 == 0, Status: []int{200, 503, 429, 404}[i%4]})
	}
	tl.Add(Request{Time: t0, Class: Spoofed, Status: 404})
	if tl.Aggregated(Genuine) {
		t.Fatal("100 requests with a cap of 100 are aggregated")
	}
	reqs := tl.Requests(Genuine)
	if len(reqs) != 100 {
		t.Fatalf("got %d exact requests, want 100", len(reqs))
	}
	for i, r := range reqs {
		want := t0.Add(time.Duration(i) * 7 * time.Second)
		if !r.Time.Equal(want) || r.Class != Genuine || r.Robots != (i%10 == 0) || r.Status != []int{200, 503, 429, 404}[i%4] {
			t.Fatalf("request %d = %+v, want time %v", i, r, want)
		}
	}
	if w, b := tl.Buckets(Genuine); w != 0 || b != nil {
		t.Errorf("exact lane has buckets: %v %v", w, b)
	}
	got := tl.Total(Genuine)
	if got != (Counts{Requests: 100, Robots: 10, Errors: 50}) {
		t.Errorf("total = %+v", got)
	}
	if got := tl.Total(Spoofed); got != (Counts{Requests: 1}) {
		t.Errorf("spoofed total = %+v", got)
	}
	first, last, ok := tl.Span(Genuine)
	if !ok || !first.Equal(t0) || !last.Equal(t0.Add(99*7*time.Second)) {
		t.Errorf("span = %v %v %v", first, last, ok)
	}
	if _, _, ok := tl.Span(Unverified); ok {
		t.Error("an empty lane has a span")
	}
}

func TestTimelineAggregatesAboveCap(t *testing.T) {
	tl := &Timeline{MarkCap: 50}
	rng := rand.New(rand.NewPCG(1, 2))
	var want Counts
	var added []Request
	// Three days of requests in random order: past the cap they are
	// counted per bucket, and the counts add up.
	const n = 20_000
	for i := 0; i < n; i++ {
		r := Request{
			Time:   t0.Add(time.Duration(rng.Int64N(int64(72 * time.Hour)))),
			Class:  Spoofed,
			Robots: rng.IntN(20) == 0,
			Status: []int{200, 404, 429, 500, 503}[rng.IntN(5)],
		}
		tl.Add(r)
		added = append(added, r)
		want.Add(mark{status: int16(r.Status), robots: r.Robots}.counts())
	}
	if !tl.Aggregated(Spoofed) {
		t.Fatal("20,000 requests with a cap of 50 are not aggregated")
	}
	if tl.Requests(Spoofed) != nil {
		t.Error("an aggregated lane returns exact requests")
	}
	w, bs := tl.Buckets(Spoofed)
	if len(bs) == 0 || len(bs) > MaxBuckets {
		t.Fatalf("%d buckets, want 1 to %d", len(bs), MaxBuckets)
	}
	if got := sumBuckets(bs); got != want || tl.Total(Spoofed) != want {
		t.Errorf("buckets add up to %+v, total %+v, want %+v", got, tl.Total(Spoofed), want)
	}
	for i, b := range bs {
		if b.Start.UnixMilli()%w.Milliseconds() != 0 {
			t.Errorf("bucket %d starts at %v, not a multiple of %v", i, b.Start, w)
		}
		if i > 0 && !bs[i-1].Start.Before(b.Start) {
			t.Errorf("buckets %d and %d are out of order", i-1, i)
		}
		if b.Requests == 0 {
			t.Errorf("bucket %d is empty", i)
		}
	}
	// The first 50 spanned up to 72h, so the width is chosen for that span
	// and stays on the ladder.
	onLadder := false
	for _, l := range bucketLadder {
		onLadder = onLadder || l == w.Milliseconds()
	}
	if !onLadder {
		t.Errorf("width %v is not on the ladder", w)
	}
	// Each request is counted in the bucket its time falls in.
	perBucket := map[int64]Counts{}
	for _, r := range added {
		start := FloorDiv(r.Time.UnixMilli(), w.Milliseconds()) * w.Milliseconds()
		c := perBucket[start]
		c.Add(mark{status: int16(r.Status), robots: r.Robots}.counts())
		perBucket[start] = c
	}
	if len(perBucket) != len(bs) {
		t.Errorf("%d buckets, want %d", len(bs), len(perBucket))
	}
	for _, b := range bs {
		if perBucket[b.Start.UnixMilli()] != b.Counts {
			t.Errorf("bucket %v holds %+v, want %+v", b.Start, b.Counts, perBucket[b.Start.UnixMilli()])
		}
	}
	if g := tl.Total(Genuine); g != (Counts{}) {
		t.Errorf("genuine lane has %+v", g)
	}
}

func TestTimelineCoarsensToStayWithinMaxBuckets(t *testing.T) {
	tl := &Timeline{MarkCap: 10}
	// Ten requests within 9 seconds choose one-second buckets; then one
	// request a minute for 10 days needs far more than MaxBuckets of them.
	for i := 0; i < 10; i++ {
		tl.Add(Request{Time: t0.Add(time.Duration(i) * time.Second), Class: Genuine})
	}
	tl.Add(Request{Time: t0.Add(10 * time.Second), Class: Genuine})
	w, _ := tl.Buckets(Genuine)
	if w != time.Second {
		t.Fatalf("width after the cap = %v, want 1s", w)
	}
	const minutes = 10 * 24 * 60
	for i := 0; i < minutes; i++ {
		tl.Add(Request{Time: t0.Add(time.Minute + time.Duration(i)*time.Minute), Class: Genuine, Robots: i%100 == 0})
	}
	w, bs := tl.Buckets(Genuine)
	if len(bs) > MaxBuckets {
		t.Fatalf("%d buckets, more than %d", len(bs), MaxBuckets)
	}
	if w < 10*time.Minute {
		t.Errorf("width = %v; 10 days in at most %d buckets need at least 10m", w, MaxBuckets)
	}
	want := Counts{Requests: 11 + minutes, Robots: (minutes + 99) / 100}
	if got := sumBuckets(bs); got != want {
		t.Errorf("buckets add up to %+v, want %+v", got, want)
	}
	// Memory stays bounded: the exact marks are gone.
	if tl.lanes[Genuine].marks != nil {
		t.Error("an aggregated lane keeps its marks")
	}
	if c := cap(tl.lanes[Genuine].buckets); c > 2*MaxBuckets {
		t.Errorf("bucket slice capacity %d", c)
	}
}

func TestTimelineMarkCapacityNeverPassesTheCap(t *testing.T) {
	tl := &Timeline{MarkCap: 1000}
	for i := 0; i < 1000; i++ {
		tl.Add(Request{Time: t0.Add(time.Duration(i) * time.Second), Class: Genuine})
		if c := cap(tl.lanes[Genuine].marks); c > 1000 {
			t.Fatalf("after %d requests the marks' capacity is %d", i+1, c)
		}
	}
}

func TestTimelineExtremeTimes(t *testing.T) {
	tl := &Timeline{MarkCap: 2}
	times := []time.Time{
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Date(1969, 12, 31, 23, 59, 59, 500e6, time.UTC),
		t0,
	}
	for _, tm := range times {
		tl.Add(Request{Time: tm, Class: Unverified, Status: -5})
		tl.Add(Request{Time: tm, Class: Class(200)}) // counts as unverified
	}
	_, bs := tl.Buckets(Unverified)
	if got := sumBuckets(bs); got.Requests != 8 {
		t.Errorf("buckets hold %d requests, want 8", got.Requests)
	}
	first, last, _ := tl.Span(Unverified)
	if first.Year() != 1 || last.Year() != 9999 {
		t.Errorf("span %v – %v", first, last)
	}
}

func TestTimelinesKeepsTheCrawlersSites(t *testing.T) {
	s := &Set{Max: 3, MarkCap: 10, Budget: func(crawler string) Budget {
		return Budget{Pages: len(crawler), Window: time.Hour}
	}}
	// Three sites of spoofers fill the set (the fewest requests on c).
	for i, site := range []string{"a", "b", "c"} {
		for j := 0; j <= 2-i; j++ {
			if !s.Add(site, "bot", Request{Time: t0, Class: Spoofed}) {
				t.Fatalf("request to %s not kept", site)
			}
		}
	}
	// A fourth site of spoofers is not kept.
	if s.Add("d", "bot", Request{Time: t0, Class: Spoofed}) {
		t.Error("a spoofer's request to a fourth site was kept")
	}
	// The genuine crawler's site evicts the spoofers' site with the fewest
	// requests.
	if !s.Add("z", "bot", Request{Time: t0, Class: Genuine}) {
		t.Fatal("the genuine crawler's request was not kept")
	}
	all := s.All()
	var sites []string
	for _, tl := range all {
		sites = append(sites, tl.Site)
	}
	if got := join(sites); got != "a b z" {
		t.Errorf("sites kept: %s, want a b z", got)
	}
	if s.Omitted() != 1+1 {
		t.Errorf("omitted = %d, want 2 (d's request and c's one)", s.Omitted())
	}
	if all[2].Budget != (Budget{Pages: 3, Window: time.Hour}) || all[2].MarkCap != 10 {
		t.Errorf("new timeline: budget %+v, cap %d", all[2].Budget, all[2].MarkCap)
	}
	// Full of sites with genuine requests: a new one is not kept.
	s2 := &Set{Max: 1}
	s2.Add("x", "bot", Request{Time: t0, Class: Genuine})
	if s2.Add("y", "bot", Request{Time: t0, Class: Genuine}) {
		t.Error("a genuine site evicted another genuine site")
	}
	if s2.Omitted() != 1 {
		t.Errorf("omitted = %d", s2.Omitted())
	}
	var empty Set
	if len(empty.All()) != 0 || empty.Omitted() != 0 {
		t.Error("zero Set is not empty")
	}
}

func join(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += " "
		}
		out += x
	}
	return out
}

// TestTimelinesMemoryBound fills a full set of timelines with a year of
// requests of every class in random order: each timeline holds at most
// about 100 KB, whatever it is given.
func TestTimelinesMemoryBound(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	s := &Set{}
	const perSite = 30_000
	for site := 0; site < DefaultMaxTimelines; site++ {
		name := string(rune('a'+site%26)) + string(rune('a'+site/26))
		for i := 0; i < perSite; i++ {
			s.Add(name, "bot", Request{
				Time:  t0.Add(time.Duration(rng.Int64N(int64(365 * 24 * time.Hour)))),
				Class: Class(rng.IntN(3)), Robots: rng.IntN(10) == 0, Status: 200,
			})
		}
	}
	const bound = 3 * (DefaultMarkCap*16 + MaxBuckets*32) // 3 classes
	total := 0
	for _, tl := range s.All() {
		fp := tl.footprint()
		if fp > bound {
			t.Errorf("%s holds %d bytes, more than %d", tl.Site, fp, bound)
		}
		total += fp
		var n int64
		for c := Genuine; c < NumClasses; c++ {
			n += tl.Total(c).Requests
		}
		if n != perSite {
			t.Errorf("%s counts %d requests, want %d", tl.Site, n, perSite)
		}
	}
	if len(s.All()) != DefaultMaxTimelines || s.Omitted() != 0 {
		t.Errorf("%d timelines, %d omitted", len(s.All()), s.Omitted())
	}
	t.Logf("%d timelines of %d requests each hold %.1f MB (bound %.1f MB)", DefaultMaxTimelines, perSite, float64(total)/1e6, float64(DefaultMaxTimelines*bound)/1e6)
}
