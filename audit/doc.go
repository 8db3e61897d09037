// Package audit runs an audit: it reads the access logs, gathers the hits
// of each crawler audited, asks for the verdicts of the addresses that
// claimed to be one, checks each genuine crawler's conduct, and makes the
// report. It stands in the middle of the pipeline: parse reads the lines,
// verify says who is genuine, conduct checks what the genuine crawler
// did; render, emit and watch take the report (or its parts) from here.
//
// # One run, one path
//
// [Run] takes [Options]: the inputs ([Input], opened by the caller), how
// to read them, and the crawlers audited, each a [Subject] (its profile,
// IP list in force, [Audit] and conduct configuration). One crawler is a
// list of one: a run without --crawler audits the default profile as
// its only subject. Named only chooses the report's shape: a report that
// names its crawlers carries summary.crawlers and a crawler on every
// address, site and violation (SPEC §10, see [Merge]); one that does not
// is the report of SPEC §5.
//
// The inputs are read one after another, each by a parse.Reader that
// matches every subject's User-Agent tokens (a group each) and keeps the
// requests of every subject's listed addresses. A claimed hit goes to the
// audit of each crawler it names; a request without a token from a listed
// address is counted (unclaimed_hits_from_listed_ips) by each crawler
// whose list holds it. An input that cannot be opened, or whose format
// cannot be detected, or that breaks off, is said in the warnings and in
// its InputReport, the others are read all the same, and Run returns the
// report with an [*InputError] (exit 3). A cancelled context ends the run
// as soon as the step under way notices, with no report.
//
// Then, per crawler, the addresses that need DNS (those its verifier has
// not settled as it read: see verify.Verifier.Settled) go to the
// [Classifier]; an address left without a verdict is unverified, with
// reason not-checked. Only the hits of addresses found genuine are held
// to the crawler's promises (conduct.Checker, site by site); the hits of
// an address settled as spoofed while reading are counted and not kept.
//
// # Sites
//
// A line that records its virtual host belongs to that site. The lines of
// an input that does not belong to the site [Sites] chooses for it: the
// first --site GLOB=SITE rule whose glob matches the path as given, else
// --site SITE, else the file's base name without rotation suffixes (its
// directory's name when files of several directories share that base
// name, with a warning: see [Sites.Choose]).
//
// # Before the run
//
// [Setup] is what a run checks its crawlers against, as the command line
// gives it: it checks every value a fetch would be made with before any
// is made, then reads robots.txt and the opt-outs and loads the crawlers'
// identity (verify.Settings). A snapshot of the run ([SnapshotTarget]) is
// begun before anything is read, and a merge of snapshots
// ([MergeOptions.Merge]) loads through a Setup without identity: its
// verdicts are the snapshots'.
//
// # Memory
//
// An [Audit] keeps what the report needs compactly: an address costs
// about 75 bytes and up to ten user agents (each cut at 256 bytes, kept
// once however many addresses send it), a kept hit 40 bytes and its path.
// A report made by [Audit.Report] makes its addresses one at a time as
// they are read ([Report.AllIPs]). The HTML report's timelines are kept
// beside the audit, bounded, in package audit/timeline
// ([Options.Timelines]).
//
// # The report
//
// [Report] is the JSON report of SPEC §5: its field names are a
// documented contract. Version and GeneratedAt are the caller's; the rest
// is Run's, IP list sources included. An address whose hits carry no time
// has no first_seen and last_seen.
package audit
