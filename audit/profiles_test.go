package audit

import (
	"errors"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/conduct"
	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/verify"
)

func builtinProfiles(t *testing.T, names ...string) []*crawler.Profile {
	t.Helper()
	out := make([]*crawler.Profile, len(names))
	for i, name := range names {
		p, ok := crawler.Builtin(name)
		if !ok {
			t.Fatalf("no built-in crawler %s", name)
		}
		out[i] = p
	}
	return out
}

func TestSubjectsOf(t *testing.T) {
	profiles := builtinProfiles(t, "lohisoftbot", "googlebot")
	id := verify.NewIdentity(&verify.Verifier{Offline: true}, profiles, nil)
	since := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	until := since.Add(48 * time.Hour)
	pause := 3 * time.Second
	cs := SubjectsOf(id, since, until, conduct.Overrides{MinPause: &pause})
	if len(cs) != 2 {
		t.Fatalf("got %d crawlers, want 2", len(cs))
	}
	lohiAddr := netip.MustParseAddr("79.139.58.98")
	for i, c := range cs {
		p := profiles[i]
		if c.Profile != p || c.List != id.Lists[i] || c.Audit == nil || !c.Audit.Since.Equal(since) ||
			!c.Audit.Until.Equal(until) || c.Audit.Settled == nil {
			t.Errorf("crawler %d: got %+v, want %s's audit of the period with its list", i, c, p.Name)
		}
		// Its conduct is its promises with the override: LohiSoftBot keeps
		// its budget, Googlebot promises none.
		want := conduct.ConfigOf(p, conduct.Overrides{MinPause: &pause})
		if c.Conduct.Token != want.Token || c.Conduct.Budget != want.Budget || c.Conduct.MinPause != pause || c.Conduct.MinBackoff != want.MinBackoff {
			t.Errorf("%s: conduct %+v, want %+v", p.Name, c.Conduct, want)
		}
	}
	if cs[0].Conduct.Budget != 20 || cs[1].Conduct.Budget != 0 {
		t.Errorf("budgets %d and %d, want LohiSoftBot's 20 and none for Googlebot", cs[0].Conduct.Budget, cs[1].Conduct.Budget)
	}
	// Each is listed by its own list: LohiSoftBot's built-in address is
	// not Googlebot's.
	set := newAuditSet(&Options{Subjects: cs})
	if !set.lists[0].Contains(lohiAddr) || set.lists[1].Contains(lohiAddr) || !set.listed.Contains(lohiAddr) {
		t.Errorf("%s listed: lohisoftbot %v, googlebot %v, any %v; want true, false, true", lohiAddr,
			set.lists[0].Contains(lohiAddr), set.lists[1].Contains(lohiAddr), set.listed.Contains(lohiAddr))
	}
}

// TestAuditSetClaims: the log readers of a run match each subject's
// tokens as its own group, in the subjects' order.
func TestAuditSetClaims(t *testing.T) {
	var subjects []Subject
	for _, p := range builtinProfiles(t, "lohisoftbot", "googlebot", "bingbot") {
		subjects = append(subjects, Subject{Profile: p})
	}
	claims := newAuditSet(&Options{Subjects: subjects}).claims
	for ua, want := range map[string]uint64{
		"Mozilla/5.0 (compatible; LohiSoftBot/1.0)":                  1,
		"Mozilla/5.0 (compatible; googlebot/2.1)":                    2,
		"Mozilla/5.0 (compatible; bingbot/2.0) Googlebot":            6,
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) Firefox/123.0":    0,
		"Mozilla/5.0 (compatible; BINGBOT/2.0; LOHISOFTBOT tester)":  5,
		"Mozilla/5.0 (compatible; BINGBOT/2.0; +LOHISOFTBOT tester)": 4, // "+LOHISOFTBOT" is another token
		"Mozilla/5.0 (compatible; bingbot2; NotGooglebot)":           0,
	} {
		if got := claims.Match([]byte(ua)); got != want {
			t.Errorf("Match(%q) = %b, want %b", ua, got, want)
		}
	}
	if none := newAuditSet(&Options{}).claims; none != nil {
		t.Errorf("no subject: claims %v, want none", none)
	}
}

func TestListSources(t *testing.T) {
	got := ListSources([]string{"lohisoftbot", "other"}, []*verify.IPList{{Source: "https://lohisoft.com/bot/ips.json"}, nil})
	if want := "lohisoftbot: https://lohisoft.com/bot/ips.json; other: none"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestReportCrawlers(t *testing.T) {
	rep := &Report{}
	if _, _, err := ReportCrawlers(rep, nil); !errors.Is(err, ErrOneCrawler) {
		t.Errorf("report of one crawler: err %v, want ErrOneCrawler", err)
	}
	rep.Summary.Crawlers = []CrawlerSummary{{Name: "googlebot"}, {Name: "acme-bot"}, {Name: "lohisoftbot"}}
	names, profiles, err := ReportCrawlers(rep, nil)
	if err != nil || !slices.Equal(names, []string{"googlebot", "acme-bot", "lohisoftbot"}) || len(profiles) != 3 {
		t.Fatalf("every crawler: got %v, %v, %v", names, profiles, err)
	}
	if profiles[0] == nil || profiles[0].Name != "googlebot" || profiles[1] != nil || profiles[2] == nil || profiles[2].Name != "lohisoftbot" {
		t.Errorf("profiles %v: want googlebot's, none for acme-bot (not built in), lohisoftbot's", profiles)
	}
	chosen := builtinProfiles(t, "lohisoftbot")
	names, profiles, err = ReportCrawlers(rep, chosen)
	if err != nil || !slices.Equal(names, []string{"lohisoftbot"}) || len(profiles) != 1 || profiles[0] != chosen[0] {
		t.Errorf("chosen lohisoftbot: got %v, %v, %v", names, profiles, err)
	}
	var missing *NoCrawlerError
	_, _, err = ReportCrawlers(rep, builtinProfiles(t, "lohisoftbot", "bingbot"))
	if !errors.As(err, &missing) || missing.Crawler != "bingbot" || !slices.Equal(missing.Audited, []string{"googlebot", "acme-bot", "lohisoftbot"}) {
		t.Errorf("chosen bingbot, not in the report: err %v", err)
	}
}

func TestNoCrawlerErrorEscapesNames(t *testing.T) {
	err := &NoCrawlerError{Crawler: "bingbot", Audited: []string{"a\x1b[2Jb", "googlebot"}}
	if got := err.Error(); slices.Contains([]byte(got), 0x1b) {
		t.Errorf("error %q holds an escape character", got)
	}
}
