// Package render turns the facts of an audit into reports: one Renderer
// per output format (`--format`), found with Lookup and listed by Names.
// table and markdown are for people (Text, Table: cells escaped, tables
// fitted to a terminal's width), json and yaml are the documented report
// (SPEC §5) written a piece at a time, csv has one row per address.
// Commands with other output (verify, ips show) give a Document to the
// same renderers.
//
// WriteHTML writes the report of `logs --format html` (SPEC §12): one
// self-contained HTML file with inline CSS and inline SVG, no script, and a
// Content-Security-Policy that forbids every network load. Its input is a
// Page, a plain model of the report's facts (SPEC §5) that depends on no
// other package of this module, plus a Timeline per site and crawler that
// an audit fills while it streams, in bounded memory.
//
// Every string in a Page is treated as hostile: it is HTML-escaped by
// html/template, control characters, bidi controls and invalid UTF-8 are
// shown as visible escapes (\x1b, \u202e, \xff), and long strings are cut
// for display.
package render

import (
	"iter"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/audit/timeline"
)

// Page is everything the HTML report shows. The zero value is an empty
// report; nil slices and a nil Addresses are "none".
//
// The page groups Sites, Violations and Timelines by their site and crawler
// names, which must therefore be spelled alike in all three (with one
// crawler, the same name or "" everywhere). Each pair that has a drawn
// timeline or a violation gets a section: the pairs of Sites first, in
// their order, then the others sorted.
type Page struct {
	// Title heads the page; empty means "lohibot-audit report".
	Title string
	// Tool and Version name the program that made the report.
	Tool, Version string
	// GeneratedAt is when the report was made (SPEC §8); it is shown in
	// UTC. The zero time is not shown.
	GeneratedAt time.Time

	Summary Summary
	// Crawlers are the per-crawler totals (SPEC §10, summary.crawlers).
	// With fewer than two the page shows no crawler column or label.
	Crawlers []CrawlerSummary

	// Addresses are the addresses that claimed a crawler, in any order
	// (the page sorts them by hits). It is iterated once. It is a sequence
	// rather than a slice so that an audit with a million addresses can
	// hand them over without a second copy in memory.
	Addresses iter.Seq[Address]

	// Sites are the per-site and per-crawler rows, in the order the page
	// shows them.
	Sites []Site
	// Violations are the conduct violations, in any order: the page
	// groups them by site and crawler and numbers them by time.
	Violations []Violation
	// Malformed are the examples of lines that did not match the format.
	Malformed []Malformed
	// Warnings are the run's warnings, shown as given (escaped).
	Warnings []string

	// Timelines are the requests per site and crawler to draw; a site
	// without one is listed without a drawing.
	Timelines []*timeline.Timeline

	Limits Limits
}

// Limits bound what the page shows, so that large audits stay small and
// quick to open. A zero field takes its default.
type Limits struct {
	// TopAddresses is how many addresses (by hits) get a full table row
	// with their evidence; the rest are listed compactly in a collapsed
	// section. Default 100.
	TopAddresses int
	// ListedAddresses is how many of the rest are listed at all; past it
	// the page gives their count only. Default 200,000.
	ListedAddresses int
	// Violations is how many violation rows the page holds in all; past it
	// the page counts the rest per kind. Default 5,000.
	Violations int
	// Timelines is how many site timelines are drawn; the rest of the
	// sites are listed without a drawing. Default 50.
	Timelines int
}

// Summary holds the report's totals (SPEC §5 summary).
type Summary struct {
	Files          int
	Lines          int64
	Malformed      int64
	ClaimedHits    int64
	GenuineHits    int64
	SpoofedHits    int64
	UnverifiedHits int64
	Violations     int
	// ViolationsLeftOut counts the violations counted but not listed
	// (SPEC §4, --max-violations).
	ViolationsLeftOut int
	LogFormat         string
	IPListSource      string
	// Incomplete says an input could not be read whole: what was read is
	// reported, and the page says the report is partial.
	Incomplete bool
}

// CrawlerSummary is one crawler's totals (SPEC §10).
type CrawlerSummary struct {
	Name           string
	Category       string
	ClaimedHits    int64
	GenuineHits    int64
	SpoofedHits    int64
	UnverifiedHits int64
	Violations     int
	// ViolationsLeftOut is as in Summary.
	ViolationsLeftOut int
}

// Address is one address that claimed a crawler, with the evidence of its
// verdict (SPEC §3 and §5 ips[]).
type Address struct {
	IP      string
	Crawler string
	// Verdict is "genuine", "spoofed" or "unverified"; anything else is
	// shown as given.
	Verdict string
	Method  string
	Reason  string
	// DNSFailure says why DNS could not answer (SPEC §5 dns_failure:
	// timeout, servfail, …), "" when it answered or was not asked.
	DNSFailure string
	PTR        []string
	Forward    []string
	InIPList   bool
	Hits       int64
	// FirstSeen and LastSeen are zero when no log was read.
	FirstSeen, LastSeen time.Time
	UserAgents          []string
	Warnings            []string
}

// Site is what one crawler did on one site (SPEC §5 sites[]).
type Site struct {
	Site          string
	Crawler       string
	Pages         int64
	RobotsFetches int64
	ChecksSkipped []string
	// NotPromised are the checks of promises the crawler's operator says
	// it does not make: shown as "not promised", never as violations.
	NotPromised []string
	ClaimedHits int64
	Violations  int
	// ViolationsLeftOut counts per kind the violations counted in
	// Violations but not listed (SPEC §4, --max-violations).
	ViolationsLeftOut map[string]int
}

// ChecksText is what a site row says of the checks not run: those
// skipped, then "not promised: …" for those its crawler does not promise;
// "" when every check ran.
func ChecksText(skipped, notPromised []string) string {
	s := strings.Join(skipped, ", ")
	if len(notPromised) > 0 {
		if s != "" {
			s += "; "
		}
		s += "not promised: " + strings.Join(notPromised, ", ")
	}
	return s
}

// Violation is one broken promise with its evidence (SPEC §4, §5
// violations[]).
type Violation struct {
	Kind    string
	Crawler string
	Site    string
	IP      string
	Time    time.Time
	File    string
	Line    int64
	Path    string
	Detail  string
	// RobotsLine and RobotsRule are the deciding robots.txt line's number
	// and text, for a robots violation when the audit knows them; the page
	// shows them in their own column. Zero and empty otherwise (the detail
	// then carries the evidence).
	RobotsLine int
	RobotsRule string
}

// Malformed is an example of a line that did not match the log format.
type Malformed struct {
	File   string
	Line   int64
	Text   string
	Reason string
}
