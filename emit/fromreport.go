package emit

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/internal/logfiles"
	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/lohisoft/lohibot-audit/verify"
)

// ReadReport reads and decodes the JSON report name ("-" is stdin, read
// from stdin). A report that cannot be read, is too large or is not a
// report is a usage error; a cancelled ctx gives ctx's error.
func ReadReport(ctx context.Context, stdin io.Reader, name string) (*audit.Report, error) {
	r := stdin
	if name != "-" {
		fh, err := logfiles.Open(ctx, name)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err != nil {
			return nil, fail.Usagef("cannot read report %s: %v", name, fail.PathCause(err))
		}
		defer fh.Close()
		r = fh
	}
	data, err := logfiles.ReadAll(ctx, r, MaxReportSize+1)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, fail.Usagef("cannot read report %s: %v", name, err)
	}
	if len(data) > MaxReportSize {
		return nil, fail.Usagef("report %s is larger than %d MiB: is it a report?", name, MaxReportSize>>20)
	}
	rep, err := DecodeReport(data)
	switch {
	case errors.Is(err, ErrNotReport):
		err = fmt.Errorf("%s is %w", name, err)
	case err != nil:
		msg, _, _ := strings.Cut(err.Error(), "\n")
		err = fmt.Errorf("report %s is %s", name, msg)
	}
	if err != nil {
		return nil, fail.Hinted(err, "give the output of 'lohibot-audit logs --format json'")
	}
	return rep, nil
}

// FromReport fills in from rep, the report read from name (- is stdin,
// named so): its addresses and verdicts, the proxies s trusts, and the crawlers
// (ReportCrawlers), each with its IP lists loaded as s says (fetched,
// cached or built in; offline fetches nothing). It returns the warnings
// to say, in order; the report's own are an earlier run's and say so.
func (in *Input) FromReport(ctx context.Context, rep *audit.Report, name string, values []string, s *verify.Settings) ([]string, error) {
	if name == "-" {
		name = "stdin"
	}
	in.Sources = []string{"report " + name}
	dir, warn := s.Cache()
	proxies, warnings, err := s.Proxies(dir)
	if err != nil {
		return nil, err
	}
	in.Proxies = proxies
	named := len(values) > 0 || len(rep.Summary.Crawlers) > 0
	profiles, err := crawler.Resolve(nil)
	if err != nil {
		return warnings, err
	}
	names, crawlerWarnings := crawler.Names(profiles), []string(nil)
	if named {
		if names, profiles, crawlerWarnings, err = ReportCrawlers(rep, name, values); err != nil {
			return warnings, err
		}
	}
	var known []*crawler.Profile
	for _, p := range profiles {
		if p != nil {
			known = append(known, p)
		}
	}
	override, err := s.ListOverride(len(known))
	if err != nil {
		return warnings, err
	}
	if warn != "" {
		warnings = append(warnings, warn)
	}
	mode := verify.ListAuto
	if s.Offline {
		mode = verify.ListNoFetch
	}
	loader := s.Loader(dir, mode)
	lists := make([]*verify.IPList, len(profiles))
	for i, p := range profiles {
		if p == nil {
			continue
		}
		ll, err := loader.Load(ctx, p, override)
		if err != nil {
			return warnings, verify.ListFail(err)
		}
		lists[i] = ll.List
		warnings = append(warnings, ll.Warnings...)
	}
	warnings = append(warnings, crawlerWarnings...)
	in.Crawlers = CrawlersOf(names, profiles, lists)
	in.Named = named
	if named {
		in.IPListSource = audit.ListSources(names, lists)
	} else {
		in.IPListSource = lists[0].Source
	}
	for _, w := range rep.Warnings {
		warnings = append(warnings, fmt.Sprintf("report %s: %s", name, w))
	}
	for _, w := range in.AddReport(rep) {
		warnings = append(warnings, fmt.Sprintf("report %s: %s", name, w))
	}
	return warnings, nil
}

// ReportCrawlers chooses the crawlers of rules made from a report of
// several crawlers (audit.ReportCrawlers): those values (--crawler) name,
// or every one the report holds. It returns the names, the profiles (nil
// for a name alone: its rules then hold only the report's addresses of
// it, and a block-spoofed WAF rule needs its profile file) and warnings.
func ReportCrawlers(rep *audit.Report, report string, values []string) ([]string, []*crawler.Profile, []string, error) {
	var chosen []*crawler.Profile
	if len(values) > 0 && len(rep.Summary.Crawlers) > 0 {
		var err error
		if chosen, err = crawler.Resolve(values); err != nil {
			return nil, nil, nil, err
		}
	}
	names, profiles, err := audit.ReportCrawlers(rep, chosen)
	var missing *audit.NoCrawlerError
	switch {
	case errors.Is(err, audit.ErrOneCrawler):
		return nil, nil, nil, fail.Hinted(
			fmt.Errorf("report %s audits one crawler (it has no summary.crawlers), so --crawler cannot choose among its crawlers", report),
			"leave out --crawler, or make the report with 'lohibot-audit logs --crawler NAME... --format json'")
	case errors.As(err, &missing):
		shown := make([]string, len(missing.Audited))
		for i, name := range missing.Audited {
			shown[i] = parse.EscapeControl(name)
		}
		return nil, nil, nil, fail.Usagef("report %s has no crawler %s: it audits %s", report, missing.Crawler, strings.Join(shown, ", "))
	case err != nil:
		return nil, nil, nil, err
	}
	var warnings []string
	for i, p := range profiles {
		if p == nil {
			warnings = append(warnings, fmt.Sprintf("crawler %s is not built in: its rules hold only the report's addresses of it, not its IP lists; give its profile with --crawler FILE (and every other crawler wanted)", parse.EscapeControl(names[i])))
		}
	}
	return names, profiles, warnings, nil
}
