package audit

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/internal/interrupt"
	"github.com/lohisoft/lohibot-audit/internal/testutil"
	"github.com/lohisoft/lohibot-audit/robots"
	"github.com/lohisoft/lohibot-audit/verify"
)

// setupFor is a Setup of an offline run with the IP list in a file, its
// phases noted in phases.
func setupFor(t *testing.T, phases *[]Phase, crawlers ...string) *Setup {
	list := testutil.TempFile(t, "ips.json", `["79.139.58.98"]`)
	return &Setup{
		Profiles: builtinProfiles(t, crawlers...),
		Identity: &verify.Settings{IPList: list, Offline: true, NoCache: true, DNSTimeout: 2 * time.Second, DNSRetries: 2,
			DNSConcurrency: verify.DefaultDNSConcurrency, Now: time.Now},
		Robots:       []string{testutil.TempFile(t, "robots.txt", "User-agent: *\nDisallow: /private/\n")},
		RobotsLoader: &robots.Loader{},
		OptedOut:     []string{"example.com=2026-11-01"},
		OptOutGrace:  48 * time.Hour,
		Now:          time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC),
		OnPhase:      func(p Phase) { *phases = append(*phases, p) },
	}
}

func TestSetupLoad(t *testing.T) {
	var phases []Phase
	s := setupFor(t, &phases, "lohisoftbot")
	l, err := s.Load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(phases, []Phase{PhaseRobots, PhaseIPList}) {
		t.Errorf("phases %v, want robots then ip-list", phases)
	}
	if l.Robots.For("example.com").Decide("X", "/private/a").Allowed || l.Identity == nil || l.OptOuts["lohisoftbot"] == nil {
		t.Errorf("loaded %+v, want robots.txt, the identity and lohisoftbot's opt-outs", l)
	}

	// Without identity settings (a merge) nothing but robots.txt is
	// loaded; without profiles the opt-outs wait for them.
	phases = nil
	s.Identity, s.Profiles = nil, nil
	l, err = s.Load(context.Background())
	if err != nil || l.Identity != nil || l.OptOuts != nil || !slices.Equal(phases, []Phase{PhaseRobots}) {
		t.Errorf("no identity, no profiles: %+v, %v, phases %v", l, err, phases)
	}
	oo, err := s.OptOuts(builtinProfiles(t, "googlebot"))
	if err != nil || oo["googlebot"] == nil {
		t.Errorf("OptOuts once the crawlers are known: %v, %v", oo, err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := setupFor(t, &phases, "lohisoftbot").Load(ctx); !errors.Is(err, interrupt.ErrInterrupted) {
		t.Errorf("cancelled: %v, want interrupt.ErrInterrupted", err)
	}
}

// TestSetupCheck: every value is checked before anything is fetched, as
// a usage error naming its flag.
func TestSetupCheck(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(s *Setup)
		crawl []string
		want  string
	}{
		{"dns timeout", func(s *Setup) { s.Identity.DNSTimeout = 0 }, nil, "--dns-timeout 0s"},
		{"resolver", func(s *Setup) { s.Identity.Resolvers = []string{"dns.example"} }, nil, `--resolver "dns.example"`},
		{"ip list of two crawlers", func(s *Setup) {}, []string{"googlebot", "bingbot"}, "with 2 crawlers"},
		{"robots value", func(s *Setup) { s.Robots = []string{"a.txt", "b.txt"} }, nil, "--robots"},
		{"robots URL offline", func(s *Setup) { s.Robots = []string{"https://example.com/robots.txt"} }, nil, "--offline forbids fetching --robots URL"},
		{"opted out", func(s *Setup) { s.OptedOut = []string{"example.com"} }, nil, `--opted-out "example.com": not SITE=TIME`},
		{"opt-out time", func(s *Setup) { s.OptedOut = []string{"example.com=soon"} }, nil, "--opted-out"},
	} {
		crawl := tc.crawl
		if crawl == nil {
			crawl = []string{"lohisoftbot"}
		}
		var phases []Phase
		s := setupFor(t, &phases, crawl...)
		tc.edit(s)
		_, err := s.Load(context.Background())
		if fail.KindOf(err) != fail.Usage || !strings.Contains(err.Error(), tc.want) || len(phases) != 0 {
			t.Errorf("%s: %v (phases %v), want a usage error with %q before any load", tc.name, err, phases, tc.want)
		}
	}
}
