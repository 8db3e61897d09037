package audit

import (
	"fmt"

	"github.com/lohisoft/lohibot-audit/crawler"
)

// RecheckCrawlers returns the names and profiles of the crawlers a
// recheck of rep asks about again. For a report of several crawlers
// (summary.crawlers) they are ReportCrawlers' of those chosen when given,
// else of every one it holds, each of which must then be built in (else a
// *NotBuiltinError); for a report of one crawler, the one chosen (the
// first: the default when none was given; a *ChosenCountError when more
// were given).
func RecheckCrawlers(rep *Report, chosen []*crawler.Profile, given bool) ([]string, []*crawler.Profile, error) {
	if len(rep.Summary.Crawlers) == 0 {
		if given && len(chosen) > 1 {
			return nil, nil, &ChosenCountError{Chosen: len(chosen)}
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
		return nil, nil, err
	}
	for i, p := range profiles {
		if p == nil {
			return nil, nil, &NotBuiltinError{Crawler: names[i]}
		}
	}
	return names, profiles, nil
}

// ChosenCountError is RecheckCrawlers' error for more than one crawler
// chosen for a report of one.
type ChosenCountError struct{ Chosen int }

func (e *ChosenCountError) Error() string {
	return fmt.Sprintf("the report audits one crawler, not %d", e.Chosen)
}

// NotBuiltinError is RecheckCrawlers' error for a crawler of the report
// that is not built in and whose profile was not given.
type NotBuiltinError struct{ Crawler string }

func (e *NotBuiltinError) Error() string {
	return "the report's crawler " + e.Crawler + " is not built in"
}
