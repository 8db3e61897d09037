// Package conduct checks what a genuine crawler did against the promises
// of SPEC §4: robots.txt obeyed and fetched, a page budget, a pause
// between requests and one request at a time, backoff after 429 and 5xx
// answers, and no credentials. [Check] takes the crawler's hits ([Hit],
// one per logged request, in any order, from several files and sites)
// and returns the [Violation]s with their evidence and one [SiteReport]
// per site. A [Checker] runs the same checks over logs too large for
// memory: shown every hit twice (Measure, then Anchor), it takes the logs
// as [Source]s, each nearly in time order, merges them by time (each held
// back up to [Disorder] to put it in order) and checks each site's hits
// one by one, keeping only what the checks' windows need (see "What is
// kept" below). The live [Tracker] steps through the same checks.
//
// The hits must be the genuine crawler's only: a spoofed or unverified
// address is never held to the crawler's promises. All addresses of the
// crawler count together. The result depends only on the hits and the
// [Config]: the same hits in another order give the same output (for a
// Checker, the same logs in which no line is further than Disorder out
// of place). A hit that appears twice (same file and line, as when a file
// is given twice) counts once. Config.MaxViolations bounds the violations
// listed per site and kind (the first ones, in the report's order); every
// one is counted.
//
// # What is checked, and how exactly
//
// A site is a hit's Site. A page is any request whose Path is not
// exactly "/robots.txt" (a request line that did not parse is a page too).
// Requests are ordered by start time, then file, then line.
//
// Each violation must be provable from the log: a log's timestamps have a
// resolution (usually a second), and a violation is reported only when it
// holds wherever in its unit each time really lies. A timestamp's unit is
// the hit's Resolution, or, when that is finer or unset, the coarsest
// unit that every timestamp of the file is a multiple of; a duration's
// unit is found the same way. So with times to the second and no
// durations, two requests logged in the same second are less than 1s
// apart (a pause violation with --min-pause 1s), while requests logged one
// second apart are not, since they may be up to 2s apart. A logged time is
// the start (Apache %t) or the end (nginx $time_local) of a request; with
// a duration the other end is derived, and without one the request's
// start is at or before its logged time and its end at or after it. For
// the checks that order requests or measure hours (budget, robots-not-
// fetched, robots-unavailable, backoff's "after the response", auth's
// "earlier"), a request without a logged duration is taken to have lasted
// less than its time unit.
//
// The checks, per site:
//
//   - robots: a page (origin-form path, "/...") that every robots.txt the
//     crawler may have held when it asked for the page disallows for
//     cfg.Token, whatever the answer's status. The versions are those of
//     cfg.RobotsHistory(site) (dated versions, each in force from its
//     time), else the one file of cfg.Robots(site), in force for ever. What
//     the crawler may hold comes from its /robots.txt requests before the
//     page: the last one answered 2xx that surely ended before the page
//     started gave it the versions in force while it ran (one that may
//     have ended before the page may have instead); one answered 4xx gave
//     it "allow all" (RFC 9309 §2.3.1.3) for 24h; 3xx and 5xx answers
//     change nothing. With no such request in the 24h before the page, it
//     may hold any version in force within those 24h (RFC 9309 §2.4). The
//     detail quotes the deciding line and, for dated versions, names the
//     version (Violation.RobotsVersion) and the request it was fetched by,
//     if any. Pages not held against the crawler although the version in
//     force at their time disallows them, and pages not judged (after a
//     4xx, before the first version or within 24h of it with no request,
//     without a time among dated versions), are counted in
//     SiteReport.RobotsNotes. Skipped without a robots.txt.
//   - opt-out: a page that surely started after cfg.OptedOut(site) plus
//     OptOutGrace: the site asked the crawler's operator to leave it out
//     of the crawl. Skipped for a page without a time.
//   - robots-not-fetched: a crawl is a run of pages with no quiet time of
//     more than an hour between them (so a crawl that resumes after a
//     longer pause must again rest on a robots.txt fetched within 24h).
//     The crawl's first page is a violation when no /robots.txt request to
//     the site (any status, any method) started before it and ended
//     within the 24h before it. A crawl is judged only when the logs
//     cover the 24h before it (cfg.Covered; without it, the earliest
//     LogStart or hit in the files that hold this site's hits must be that
//     old), because robots.txt may have been fetched before the logs
//     begin or in a part of them that is missing. A crawl that cannot be
//     judged is no violation, and the check is then listed as skipped.
//   - robots-unavailable: a page that started after a /robots.txt answer
//     with a 5xx status ended, when every other /robots.txt answer (any
//     status but 5xx, including an unlogged one) that may have ended before
//     the page started ended before that 5xx one: RFC 9309 §2.3.1.4 makes
//     an unreachable robots.txt a complete disallow. One violation per
//     page. A copy fetched before the 5xx does not excuse the page (the
//     SPEC applies §2.3.1.4 as it stands, not §2.4's cache). Pages 30 days
//     or more into an outage (counted from its first 5xx in the logs) are
//     not flagged, as the RFC then lets a crawler go back to a cached
//     copy.
//   - budget: more than Budget pages (any status) whose start times all lie
//     within one BudgetWindow. The window slides: the violation is the
//     first page that makes Budget+1 within a window, and its detail gives
//     how many pages that window, anchored at its first page, holds. The
//     next window starts after that one, so each window is one violation.
//   - concurrency: a request that started before an earlier one ended.
//     One violation per request, naming the other request. Listed as
//     skipped when a request of the site has no logged duration: such a
//     request can be shown to overlap only a request that spans it whole,
//     and two without durations never. Line order is not used: servers
//     write a line when its request ends, so it says nothing of starts.
//   - pause: a request that started less than MinPause after the earlier
//     request that ended last, unless it is already a concurrency
//     violation.
//   - backoff: after a 429 or 5xx answer (to any path), the first request
//     that provably started after that answer, when it started before the
//     answer's Retry-After ran out: delta-seconds counted from the end of
//     the answer, or an HTTP-date (RFC 9110 §10.2.3). With no Retry-After
//     logged (the field absent, "-", or unreadable), MinBackoff applies.
//     "Retry-After: 0" asks for no wait. One violation per request.
//   - auth: a request with a remote user (credentials were sent), and a 2xx
//     for a page whose same path (query included) earlier answered 401 or
//     403 to the crawler; each 401/403 is answered by at most one such
//     violation. /robots.txt is left out of the second part: its 403 means
//     "no restrictions" (RFC 9309 §2.3.1.3), not a login.
//
// A hit has a time when its Resolution is above zero, as the log reader
// sets it (a time in year 1, the zero time.Time, is a time like any
// other). A site whose hits lack a time gets only the robots and
// remote-user checks; the time checks are listed as skipped. A check listed in
// checks_skipped was not (or not fully) checked for that site; violations
// found in the part that could be checked are still reported.
//
// # What is kept
//
// Per site: for the robots check, the /robots.txt requests whose order
// with the pages to come is not settled (maxRobotsKept; past it, which
// version the crawler held is unknown and only pages every version
// disallows are violations) and at most 16 candidates for the last one
// done, and a count per kind of robots note; the pages of the budget window under way (Budget+1 at most,
// 48 bytes each), the requests that may still be running (maxActive), the
// 429 and 5xx answers waiting for the next request (scanLimit), the first
// page of the crawl under way and two facts of the /robots.txt requests
// before it, the /robots.txt answers and pages whose order is not settled
// yet (maxRobotsKept; past it robots-not-fetched or robots-unavailable
// stops for the site, said in a warning and in checks_skipped), and the
// paths whose 401 or 403 waits for a 2xx (maxDeniedPaths, the oldest
// forgotten past it, said the same way: a later 2xx for a forgotten path
// is not seen). Per log: the hits of the last Disorder (at most 65,536).
// Past maxSitesAtOnce sites, Run checks them a share at a time, reading
// the sources once per share. A hit that comes after hits of its site
// that started more than Disorder later is counted and checked for
// robots.txt and credentials, but left out of its site's time checks,
// which are listed as skipped (not fully checked), and a warning names
// its file and line.
//
// # Strings from outside
//
// [Violation].Path and Violation.IP are the raw logged values (printers
// escape them for terminals; JSON keeps them exact). Detail is always one
// printable line: every string it quotes from a log or a robots.txt is
// quoted with [strconv.Quote] (control characters, invalid UTF-8 and
// non-printing runes escaped), cut at 200 bytes, and file names in it go
// through [parse.EscapeControl].
package conduct
