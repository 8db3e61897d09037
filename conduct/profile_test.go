package conduct_test

import (
	"slices"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/conduct"
	"github.com/lohisoft/lohibot-audit/crawler"
)

func builtin(t *testing.T, name string) *crawler.Profile {
	t.Helper()
	p, ok := crawler.Builtin(name)
	if !ok {
		t.Fatalf("no built-in crawler %s", name)
	}
	return p
}

func TestConfigOfKeepsPromisesWithoutOverrides(t *testing.T) {
	lohi := conduct.ConfigOf(builtin(t, "lohisoftbot"), conduct.Overrides{})
	want := conduct.Config{Token: "LohiSoftBot", Budget: 20, BudgetWindow: 24 * time.Hour, MinPause: time.Second, MinBackoff: 30 * time.Second}
	if lohi.Token != want.Token || lohi.Budget != want.Budget || lohi.BudgetWindow != want.BudgetWindow ||
		lohi.MinPause != want.MinPause || lohi.MinBackoff != want.MinBackoff || lohi.Robots != nil {
		t.Errorf("lohisoftbot: got %+v, want %+v", lohi, want)
	}
	// Googlebot promises robots.txt only: no budget, pause or backoff.
	g := conduct.ConfigOf(builtin(t, "googlebot"), conduct.Overrides{})
	if g.Token != "Googlebot" || g.Budget != 0 || g.BudgetWindow != 0 || g.MinPause != 0 || g.MinBackoff != 0 {
		t.Errorf("googlebot: got %+v, want its token and no other check", g)
	}
}

func TestConfigOfOverridesEveryCrawler(t *testing.T) {
	pause, backoff := 5*time.Second, time.Minute
	ov := conduct.Overrides{
		Budget:     &crawler.Budget{Pages: 7, Window: time.Hour},
		MinPause:   &pause,
		MinBackoff: &backoff,
	}
	for _, name := range []string{"lohisoftbot", "googlebot", "bingbot"} {
		p := builtin(t, name)
		c := conduct.ConfigOf(p, ov)
		if c.Token != p.RobotsToken || c.Budget != 7 || c.BudgetWindow != time.Hour || c.MinPause != pause || c.MinBackoff != backoff {
			t.Errorf("%s: got %+v, want every override", name, c)
		}
	}
	// One override set leaves the other promises as each profile makes
	// them.
	c := conduct.ConfigOf(builtin(t, "lohisoftbot"), conduct.Overrides{MinPause: &pause})
	if c.MinPause != pause || c.Budget != 20 || c.BudgetWindow != 24*time.Hour || c.MinBackoff != 30*time.Second {
		t.Errorf("lohisoftbot with --min-pause only: got %+v", c)
	}
	c = conduct.ConfigOf(builtin(t, "googlebot"), conduct.Overrides{Budget: &crawler.Budget{Pages: 3, Window: time.Minute}})
	if c.Budget != 3 || c.BudgetWindow != time.Minute || c.MinPause != 0 || c.MinBackoff != 0 {
		t.Errorf("googlebot with a budget only: got %+v", c)
	}
}

// A promise a profile does not make is not checked: thirty pages in one
// second break LohiSoftBot's budget and pause, and nothing of Googlebot's
// until a flag holds every crawler to a pause.
func TestConfigOfPromiseNotMadeIsNotChecked(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	hits := make([]conduct.Hit, 30)
	for i := range hits {
		hits[i] = conduct.Hit{Site: "example.com", File: "a.log", Line: int64(i + 1), IP: "192.0.2.1",
			Target: "/p", Status: 200, Time: at, Resolution: time.Second}
	}
	kinds := func(cfg conduct.Config) ([]string, []string) {
		vs, sites := conduct.Check(hits, cfg)
		var ks []string
		for _, v := range vs {
			if !slices.Contains(ks, v.Kind) {
				ks = append(ks, v.Kind)
			}
		}
		slices.Sort(ks)
		if len(sites) != 1 {
			t.Fatalf("got %d site reports, want 1", len(sites))
		}
		return ks, sites[0].ChecksSkipped
	}
	ks, skipped := kinds(conduct.ConfigOf(builtin(t, "lohisoftbot"), conduct.Overrides{}))
	if !slices.Contains(ks, conduct.KindBudget) || !slices.Contains(ks, conduct.KindPause) {
		t.Errorf("lohisoftbot: violations %v, want budget and pause", ks)
	}
	if slices.Contains(skipped, conduct.KindBudget) || slices.Contains(skipped, conduct.KindPause) {
		t.Errorf("lohisoftbot: skipped %v, want budget and pause checked", skipped)
	}
	ks, skipped = kinds(conduct.ConfigOf(builtin(t, "googlebot"), conduct.Overrides{}))
	if slices.Contains(ks, conduct.KindBudget) || slices.Contains(ks, conduct.KindPause) {
		t.Errorf("googlebot: violations %v, want no budget or pause one", ks)
	}
	if !slices.Contains(skipped, conduct.KindBudget) || !slices.Contains(skipped, conduct.KindPause) {
		t.Errorf("googlebot: skipped %v, want budget and pause", skipped)
	}
	pause := time.Second
	ks, _ = kinds(conduct.ConfigOf(builtin(t, "googlebot"), conduct.Overrides{MinPause: &pause}))
	if !slices.Contains(ks, conduct.KindPause) || slices.Contains(ks, conduct.KindBudget) {
		t.Errorf("googlebot with --min-pause 1s: violations %v, want pause and no budget", ks)
	}
}

// TestConfigOfRobotsPromise: the robots.txt checks run for a crawler that
// promises to obey it, are not promised for one whose operator says it
// may ignore it, and are off for one that promises nothing about it.
func TestConfigOfRobotsPromise(t *testing.T) {
	for _, tc := range []struct {
		name             string
		off, notPromised bool
	}{
		{"googlebot", false, false},
		{"claude-user", false, false},
		{"chatgpt-user", false, true},
		{"perplexity-user", false, true},
		{"google-user-triggered", false, true},
		{"google-special", false, true},
		{"google-common", true, false},
	} {
		c := conduct.ConfigOf(builtin(t, tc.name), conduct.Overrides{})
		if c.RobotsOff != tc.off || c.RobotsNotPromised != tc.notPromised {
			t.Errorf("%s: robots off %v, not promised %v; want %v, %v", tc.name, c.RobotsOff, c.RobotsNotPromised, tc.off, tc.notPromised)
		}
	}
}
