package audit

import (
	"errors"
	"slices"
	"testing"
)

func TestRecheckCrawlers(t *testing.T) {
	one := &Report{}
	chosen := builtinProfiles(t, "googlebot")
	names, profiles, err := RecheckCrawlers(one, chosen, false)
	if err != nil || !slices.Equal(names, []string{"googlebot"}) || profiles[0] != chosen[0] {
		t.Errorf("report of one crawler: %v %v %v", names, profiles, err)
	}
	var cc *ChosenCountError
	if _, _, err := RecheckCrawlers(one, builtinProfiles(t, "googlebot", "bingbot"), true); !errors.As(err, &cc) || cc.Chosen != 2 {
		t.Errorf("two chosen for a report of one: %v", err)
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
	if _, _, err := RecheckCrawlers(several, builtinProfiles(t, "lohisoftbot"), true); !errors.As(err, &nc) {
		t.Errorf("a crawler the report lacks: %v", err)
	}
	several.Summary.Crawlers = append(several.Summary.Crawlers, CrawlerSummary{Name: "acme-bot"})
	var nb *NotBuiltinError
	if _, _, err := RecheckCrawlers(several, nil, false); !errors.As(err, &nb) || nb.Crawler != "acme-bot" ||
		err.Error() != "the report's crawler acme-bot is not built in" {
		t.Errorf("a crawler not built in: %v", err)
	}
}
