package watch

import (
	"bytes"
	"context"
	"errors"
	"net/netip"
	"slices"
	"testing"

	"github.com/lohisoft/lohibot-audit/conduct"
	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/robots"
	"github.com/lohisoft/lohibot-audit/verify"
)

// TestNewFor: a Watcher made from an identity watches each of its
// crawlers under its name with its tokens, each held to its own promises,
// and its guard spares every crawler's listed addresses; Reload takes new
// lists for the same crawlers and refuses others.
func TestNewFor(t *testing.T) {
	var profiles []*crawler.Profile
	for _, name := range []string{"lohisoftbot", "googlebot"} {
		p, _ := crawler.Builtin(name)
		profiles = append(profiles, p)
	}
	googleList := &verify.IPList{Prefixes: []netip.Prefix{netip.MustParsePrefix("66.249.64.0/27")}}
	id := verify.NewIdentity(&verify.Verifier{Offline: true}, profiles, []*verify.IPList{nil, googleList})
	rb := robots.Parse([]byte("User-agent: *\nDisallow: /\n"))
	w := NewFor(context.Background(), Config{
		Options:  Options{Files: []string{"-"}, Events: &Events{W: &bytes.Buffer{}}},
		Identity: id,
		Robots:   func(string) *robots.Robots { return rb },
	})
	if len(w.crawlers) != 2 {
		t.Fatalf("%d crawlers watched, want 2", len(w.crawlers))
	}
	for i, c := range w.crawlers {
		if c.Name != profiles[i].Name || !slices.Equal(c.Tokens, profiles[i].Tokens) || c.Judge == nil || c.Tracker == nil {
			t.Errorf("crawler %d: %+v, want %s with its tokens, a judge and a tracker", i, c.Subject, profiles[i].Name)
		}
	}
	if got := w.claims.Match([]byte("Mozilla/5.0 (compatible; Googlebot/2.1) LohiSoftBot/1.0")); got != 3 {
		t.Errorf("claims of both tokens = %b, want 11", got)
	}
	spoofed := func(a string) verify.Result {
		return verify.Result{Addr: netip.MustParseAddr(a), Verdict: verify.Spoofed}
	}
	// Listed by either crawler: never blocked.
	for _, a := range []string{"79.139.58.98", "66.249.64.5"} {
		if got, why := w.o.Guard.Blockable(spoofed(a)); got.IsValid() {
			t.Errorf("%s, listed, is blockable (%s)", a, why)
		}
	}
	if got, _ := w.o.Guard.Blockable(spoofed("203.0.113.7")); !got.IsValid() {
		t.Error("a spoofer outside the lists is not blockable")
	}
	// LohiSoftBot promises a budget and obeys robots.txt; Googlebot only
	// obeys robots.txt.
	hit := func(path string) conduct.Hit {
		return conduct.Hit{Site: "s.example", IP: "192.0.2.1", Target: path, Status: 200, Resolution: 1}
	}
	for i, c := range w.crawlers {
		if vs := c.Tracker.Add(hit("/private")); len(vs) == 0 {
			t.Errorf("%s: a page disallowed by robots.txt is no violation", profiles[i].Name)
		}
	}

	// A reload of the same crawlers takes the new lists.
	newList := &verify.IPList{Prefixes: []netip.Prefix{netip.MustParsePrefix("203.0.113.0/24")}}
	id2 := verify.NewIdentity(&verify.Verifier{Offline: true}, profiles, []*verify.IPList{nil, newList})
	if err := w.Reload(Grounds{Identity: id2}); err != nil {
		t.Fatal(err)
	}
	if got, _ := w.o.Guard.Blockable(spoofed("203.0.113.7")); got.IsValid() {
		t.Error("after the reload, an address of the new list is blockable")
	}
	id3 := verify.NewIdentity(&verify.Verifier{Offline: true}, profiles[:1], nil)
	if err := w.Reload(Grounds{Identity: id3}); !errors.Is(err, ErrCrawlersChanged) {
		t.Errorf("reload with other crawlers: %v, want ErrCrawlersChanged", err)
	}
}
