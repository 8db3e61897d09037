package audit

import (
	"errors"
	"slices"
	"testing"

	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/internal/fail"
)

func TestRecheckCrawlers(t *testing.T) {
	one := &Report{}
	chosen := builtinProfiles(t, "googlebot")
	names, profiles, err := RecheckCrawlers(one, chosen, false)
	if err != nil || !slices.Equal(names, []string{"googlebot"}) || profiles[0] != chosen[0] {
		t.Errorf("report of one crawler: %v %v %v", names, profiles, err)
	}

	several := &Report{}
	several.Summary.Crawlers = []CrawlerSummary{{Name: "googlebot"}, {Name: "bingbot"}}
	names, _, err = RecheckCrawlers(several, builtinProfiles(t, "lohisoftbot"), false)
	if err != nil || !slices.Equal(names, []string{"googlebot", "bingbot"}) {
		t.Errorf("none given: every crawler of the report, got %v %v", names, err)
	}
	names, _, err = RecheckCrawlers(several, builtinProfiles(t, "bingbot"), true)
	if err != nil || !slices.Equal(names, []string{"bingbot"}) {
		t.Errorf("bingbot given: got %v %v", names, err)
	}
	var nc *NoCrawlerError
	if _, _, err := RecheckCrawlers(several, builtinProfiles(t, "lohisoftbot"), true); !errors.As(err, &nc) || fail.KindOf(err) != fail.Usage {
		t.Errorf("a crawler the report lacks: %v, want a usage error with a *NoCrawlerError", err)
	}
}

// TestRecheckCrawlersErrors checks that each error is a usage error worded
// for --crawler, with its hint.
func TestRecheckCrawlersErrors(t *testing.T) {
	several := &Report{}
	several.Summary.Crawlers = []CrawlerSummary{{Name: "googlebot"}, {Name: "acme-bot"}}
	for _, tc := range []struct {
		name      string
		rep       *Report
		chosen    []string
		given     bool
		msg, hint string
	}{
		{"two chosen for a report of one", &Report{}, []string{"googlebot", "bingbot"}, true,
			"the report audits one crawler; give one --crawler, not 2", ""},
		{"a crawler the report lacks", several, []string{"bingbot"}, true,
			"the report has no crawler bingbot: it audits googlebot, acme-bot", ""},
		{"a crawler not built in", several, nil, false,
			"the report's crawler acme-bot is not built in", "give its profile file with --crawler FILE"},
	} {
		var chosen []*crawler.Profile
		if len(tc.chosen) > 0 {
			chosen = builtinProfiles(t, tc.chosen...)
		}
		_, _, err := RecheckCrawlers(tc.rep, chosen, tc.given)
		if err == nil || err.Error() != tc.msg || fail.KindOf(err) != fail.Usage || fail.HintOf(err) != tc.hint {
			t.Errorf("%s: got %v (kind %v, hint %q), want usage error %q with hint %q", tc.name, err, fail.KindOf(err), fail.HintOf(err), tc.msg, tc.hint)
		}
	}
}
