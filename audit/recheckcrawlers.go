package audit

import (
	"fmt"

	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/internal/fail"
)

// RecheckCrawlers returns the names and profiles of the crawlers a
// recheck of rep asks about again. For a report of several crawlers
// (summary.crawlers) they are ReportCrawlers' of those chosen when given,
// else of every one it holds, each of which must then be built in; for a
// report of one crawler, the one chosen (the first: the default when none
// was given). Its errors are usage errors (internal/fail) worded for
// --crawler: more than one chosen for a report of one, one chosen that
// the report does not audit (a *NoCrawlerError), or one of the report's
// not built in and not given.
func RecheckCrawlers(rep *Report, chosen []*crawler.Profile, given bool) ([]string, []*crawler.Profile, error) {
	if len(rep.Summary.Crawlers) == 0 {
		if given && len(chosen) > 1 {
			return nil, nil, fail.Usagef("the report audits one crawler; give one --crawler, not %d", len(chosen))
		}
		p := chosen[0]
		return []string{p.Name}, []*crawler.Profile{p}, nil
	}
	var pick []*crawler.Profile
	if given {
		pick = chosen
	}
	names, profiles, err := ReportCrawlers(rep, pick)
	if err != nil {
		return nil, nil, fail.New(fail.Usage, err, "")
	}
	for i, p := range profiles {
		if p == nil {
			return nil, nil, fail.Hinted(fmt.Errorf("the report's crawler %s is not built in", names[i]),
				"give its profile file with --crawler FILE")
		}
	}
	return names, profiles, nil
}
