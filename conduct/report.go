package conduct

import "time"

// SiteReport is what the genuine crawler did on one site (SPEC §5's
// sites entry). Its JSON field names are a documented contract.
type SiteReport struct {
	Site          string   `json:"site" yaml:"site"`
	Pages         int64    `json:"pages" yaml:"pages"`
	RobotsFetches int64    `json:"robots_fetches" yaml:"robots_fetches"`
	ChecksSkipped []string `json:"checks_skipped" yaml:"checks_skipped"`
	// NotPromised are the checks of promises the crawler's operator says
	// it does not make (robots.txt for a fetcher acting on a person's
	// request): never checked, never violations, and not "skipped".
	NotPromised []string `json:"not_promised,omitempty" yaml:"not_promised,omitempty"`
	// RobotsNotes say which pages the robots check did not hold against
	// the crawler, and why: allowed by a robots.txt version it may still
	// have held (RFC 9309 §2.4), after a 4xx answer to /robots.txt, before
	// the first version (SPEC §15). Nil when there are none.
	RobotsNotes []string `json:"robots_notes,omitempty" yaml:"robots_notes,omitempty"`

	// Extensions beyond SPEC §5.
	ClaimedHits int64 `json:"claimed_hits" yaml:"claimed_hits"`
	// Violations counts every violation of the site, listed or not.
	Violations int `json:"violations" yaml:"violations"`
	// ViolationsLeftOut counts, per kind, the violations not listed past
	// Config.MaxViolations (SPEC §4); nil when none was left out.
	ViolationsLeftOut map[string]int `json:"violations_left_out,omitempty" yaml:"violations_left_out,omitempty"`

	// Crawler is the crawler of the row, when --crawler named the
	// crawlers (SPEC §10: a row per crawler and site).
	Crawler string `json:"crawler,omitempty" yaml:"crawler,omitempty"`
}

// Violation is one broken promise, with its evidence (SPEC §5's
// violations entry). Its JSON field names are a documented contract.
type Violation struct {
	Kind   string    `json:"kind" yaml:"kind"`
	Site   string    `json:"site" yaml:"site"`
	IP     string    `json:"ip" yaml:"ip"`
	Time   time.Time `json:"time" yaml:"time"`
	File   string    `json:"file" yaml:"file"`
	Line   int64     `json:"line" yaml:"line"`
	Path   string    `json:"path" yaml:"path"`
	Detail string    `json:"detail" yaml:"detail"`

	// Crawler is the crawler that broke the promise, when --crawler
	// named the crawlers (SPEC §10).
	Crawler string `json:"crawler,omitempty" yaml:"crawler,omitempty"`

	// RobotsLine and RobotsRule are, for a robots violation decided by a
	// rule, the deciding robots.txt line's 1-based number and its text as
	// written, without its comment ("Disallow: /private/"); zero and empty
	// otherwise (SPEC §12).
	RobotsLine int    `json:"robots_line,omitempty" yaml:"robots_line,omitempty"`
	RobotsRule string `json:"robots_rule,omitempty" yaml:"robots_rule,omitempty"`
	// RobotsVersion is, for a robots violation judged by dated robots.txt
	// versions, the version that decided: its name and the time it came
	// into force (SPEC §15).
	RobotsVersion string `json:"robots_version,omitempty" yaml:"robots_version,omitempty"`
}
