package audit

import (
	"iter"
	"slices"
	"time"

	"github.com/lohisoft/lohibot-audit/conduct"
	"github.com/lohisoft/lohibot-audit/verify"
)

// Report is the result of an audit, as printed by `logs --format json`.
// Its JSON field names are a documented contract (SPEC §5).
//
// A report made by [Audit.Report] leaves IPs empty and makes its addresses
// one at a time when they are read, so that a report of a million
// addresses is never held whole: read them with [Report.AllIPs] and
// [Report.NumIPs], which serve IPs for any other report (one decoded from
// JSON, or built by hand).
type Report struct {
	Tool    string `json:"tool" yaml:"tool"`
	Version string `json:"version" yaml:"version"`
	// SchemaVersion is the version of the report's layout that
	// docs/report.schema.json describes: SchemaVersion, raised when a
	// field is removed, renamed or changes its meaning (added fields keep
	// it). 0 in a report made before it was written.
	SchemaVersion     int           `json:"schema_version" yaml:"schema_version"`
	Summary           Summary       `json:"summary" yaml:"summary"`
	IPs               []IPReport    `json:"ips" yaml:"ips"`
	Sites             []SiteReport  `json:"sites" yaml:"sites"`
	Violations        []Violation   `json:"violations" yaml:"violations"`
	MalformedExamples []Malformed   `json:"malformed_examples" yaml:"malformed_examples"`
	Warnings          []string      `json:"warnings" yaml:"warnings"`
	Inputs            []InputReport `json:"inputs,omitempty" yaml:"inputs,omitempty"`
	// IPLists are the IP lists in force, each with what identifies it
	// (SPEC §15 evidence): one per list of each crawler.
	IPLists     []ListEvidence `json:"ip_lists,omitempty" yaml:"ip_lists,omitempty"`
	GeneratedAt time.Time      `json:"generated_at" yaml:"generated_at"`

	lazy *ipView // the addresses, when made one at a time
	// parts are the reports of several crawlers, when merged (see Merge):
	// their addresses are the report's, crawler by crawler.
	parts []*Report
}

// NumIPs returns how many addresses the report holds.
func (r *Report) NumIPs() int {
	if r.parts != nil {
		n := 0
		for _, p := range r.parts {
			n += p.NumIPs()
		}
		return n
	}
	if r.lazy != nil {
		return len(r.lazy.order)
	}
	return len(r.IPs)
}

// AllIPs yields the report's addresses in order: numerically, IPv4 first,
// then clients that are not addresses.
func (r *Report) AllIPs() iter.Seq[IPReport] {
	if r.parts != nil {
		return func(yield func(IPReport) bool) {
			for _, p := range r.parts {
				for ip := range p.AllIPs() {
					if !yield(ip) {
						return
					}
				}
			}
		}
	}
	if r.lazy != nil {
		return r.lazy.all()
	}
	return slices.Values(r.IPs)
}

// IPList returns the report's addresses as one slice: for small reports
// and tests, as it holds them all at once. For a report not made by
// [Audit.Report] it is IPs itself.
func (r *Report) IPList() []IPReport {
	if r.lazy == nil && r.parts == nil {
		return r.IPs
	}
	out := make([]IPReport, 0, r.NumIPs())
	for ip := range r.AllIPs() {
		out = append(out, ip)
	}
	return out
}

// Summary holds the report's totals.
type Summary struct {
	Files          int    `json:"files" yaml:"files"`
	Lines          int64  `json:"lines" yaml:"lines"`
	Malformed      int64  `json:"malformed" yaml:"malformed"`
	ClaimedHits    int64  `json:"claimed_hits" yaml:"claimed_hits"`
	GenuineHits    int64  `json:"genuine_hits" yaml:"genuine_hits"`
	SpoofedHits    int64  `json:"spoofed_hits" yaml:"spoofed_hits"`
	UnverifiedHits int64  `json:"unverified_hits" yaml:"unverified_hits"`
	Violations     int    `json:"violations" yaml:"violations"`
	LogFormat      string `json:"log_format" yaml:"log_format"`
	// ViolationsLeftOut counts the violations counted in Violations but
	// not listed, past --max-violations per site and kind (SPEC §4; the
	// sites say which kinds).
	ViolationsLeftOut int    `json:"violations_left_out,omitempty" yaml:"violations_left_out,omitempty"`
	IPListSource      string `json:"ip_list_source" yaml:"ip_list_source"`

	// Extensions beyond SPEC §5.
	Bytes       int64 `json:"bytes" yaml:"bytes"`
	FilteredOut int64 `json:"filtered_out" yaml:"filtered_out"` // claimed hits outside --since/--until
	// MalformedClaims counts malformed lines that carry the product token:
	// claims that could not be read as requests (no verdict, no rule).
	MalformedClaims int64 `json:"malformed_claims" yaml:"malformed_claims"`
	// Comments counts the lines that start with '#' (AWStats' and W3C
	// logs' headers): neither requests nor malformed.
	Comments int64 `json:"comments,omitempty" yaml:"comments,omitempty"`
	// TimeZone is the zone its times without a UTC offset were read in,
	// when its format logs such times.
	TimeZone     string `json:"time_zone,omitempty" yaml:"time_zone,omitempty"`
	UnclaimedHit int64  `json:"unclaimed_hits_from_listed_ips" yaml:"unclaimed_hits_from_listed_ips"`
	Incomplete   bool   `json:"incomplete" yaml:"incomplete"` // an input could not be read whole

	// Crawlers are the totals per crawler, when --crawler named them
	// (SPEC §10).
	Crawlers []CrawlerSummary `json:"crawlers,omitempty" yaml:"crawlers,omitempty"`
}

// CrawlerSummary is one crawler's totals (SPEC §10 summary.crawlers).
type CrawlerSummary struct {
	Name string `json:"name" yaml:"name"`
	// Category is what the crawler is for (crawler.Profile.Category:
	// search, ai-training, ai-search, user-triggered, …); "" when the
	// report was made without its profile.
	Category       string `json:"category,omitempty" yaml:"category,omitempty"`
	ClaimedHits    int64  `json:"claimed_hits" yaml:"claimed_hits"`
	GenuineHits    int64  `json:"genuine_hits" yaml:"genuine_hits"`
	SpoofedHits    int64  `json:"spoofed_hits" yaml:"spoofed_hits"`
	UnverifiedHits int64  `json:"unverified_hits" yaml:"unverified_hits"`
	Violations     int    `json:"violations" yaml:"violations"`
	// ViolationsLeftOut is as in Summary.
	ViolationsLeftOut int `json:"violations_left_out,omitempty" yaml:"violations_left_out,omitempty"`
}

// SchemaVersion is the version of the report's layout this program
// writes (Report.SchemaVersion).
const SchemaVersion = 1

// IPReport is one address that claimed to be the crawler.
type IPReport struct {
	IP string `json:"ip" yaml:"ip"`
	// Crawler is the crawler the address claimed to be, when --crawler
	// named the crawlers (SPEC §10).
	Crawler  string         `json:"crawler,omitempty" yaml:"crawler,omitempty"`
	Verdict  verify.Verdict `json:"verdict" yaml:"verdict"`
	Method   string         `json:"method" yaml:"method"`
	Reason   string         `json:"reason" yaml:"reason"`
	PTR      []string       `json:"ptr" yaml:"ptr"`
	Forward  []string       `json:"forward" yaml:"forward"`
	InIPList bool           `json:"in_ip_list" yaml:"in_ip_list"`
	Hits     int64          `json:"hits" yaml:"hits"`
	// FirstSeen and LastSeen are the times of its first and last hits;
	// left out when none of its hits has a time (and by verify, which
	// reads no log).
	FirstSeen  time.Time `json:"first_seen,omitzero" yaml:"first_seen,omitempty"`
	LastSeen   time.Time `json:"last_seen,omitzero" yaml:"last_seen,omitempty"`
	UserAgents []string  `json:"user_agents" yaml:"user_agents"`
	Warnings   []string  `json:"warnings,omitempty" yaml:"warnings,omitempty"`
	// DNSFailure says why DNS could not answer (a DNSFailure constant),
	// when it could not: why an address stayed unverified.
	DNSFailure string `json:"dns_failure,omitempty" yaml:"dns_failure,omitempty"`
	// Proxy names the proxy the address is, when Reason is proxy: a CDN
	// ("cloudflare"), a --trusted-proxy value ("private",
	// "203.0.113.0/24"), or "--trust-xff" (SPEC §13).
	Proxy string `json:"proxy,omitempty" yaml:"proxy,omitempty"`
	// DNS are the lookups the verdict rests on, each with its answer, TTL,
	// resolver and the time asked (SPEC §15 evidence): the PTR lookup,
	// then the forward ones. Empty when DNS was not asked.
	DNS []verify.DNSAnswer `json:"dns,omitempty" yaml:"dns,omitempty"`
}

// EvidenceExpired reports whether the DNS answers ip's verdict rests on
// no longer hold at now: one has passed its TTL, or failed, or does not
// say when it was asked. A verdict without DNS answers (an IP list's,
// --offline's) has no DNS evidence to expire.
func (ip *IPReport) EvidenceExpired(now time.Time) bool {
	for i := range ip.DNS {
		if e := ip.DNS[i].Expires(); !e.After(now) {
			return true
		}
	}
	return false
}

// ListEvidence is one IP list in force, as a report names it: where it
// came from, when it was fetched, its own creationTime and the SHA-256 of
// the list as served, so that the very list that decided can be found
// again.
type ListEvidence struct {
	// Crawler is the crawler whose list it is, when the report names its
	// crawlers.
	Crawler string `json:"crawler,omitempty" yaml:"crawler,omitempty"`
	// Source is the list's URL or file, or "built-in".
	Source string `json:"source" yaml:"source"`
	// Fetched is when it was fetched (or last confirmed unchanged); zero
	// for files and the built-in list.
	Fetched time.Time `json:"fetched,omitzero" yaml:"fetched,omitempty"`
	// CreationTime is the list's own creationTime, when it has one (the
	// built-in list: the date of the page it was taken from).
	CreationTime time.Time `json:"creation_time,omitzero" yaml:"creation_time,omitempty"`
	// SHA256 is the hex SHA-256 of the list as served; empty for the
	// built-in list and for a cached copy kept before digests were.
	SHA256 string `json:"sha256,omitempty" yaml:"sha256,omitempty"`
	// Prefixes is how many prefixes it holds.
	Prefixes int `json:"prefixes" yaml:"prefixes"`
}

// ListEvidenceOf returns the evidence of each list l is made of, with
// crawler named (or "").
func ListEvidenceOf(crawler string, l *verify.IPList) []ListEvidence {
	var out []ListEvidence
	for _, p := range l.Each() {
		if p.Source == verify.IPListSourceNone {
			continue
		}
		out = append(out, ListEvidence{Crawler: crawler, Source: p.Source, Fetched: p.Fetched,
			CreationTime: p.CreationTime, SHA256: p.SHA256, Prefixes: len(p.Prefixes)})
	}
	return out
}

// dnsEvidence copies a result's DNS answers into a report entry.
func dnsEvidence(answers []*verify.DNSAnswer) []verify.DNSAnswer {
	if len(answers) == 0 {
		return nil
	}
	out := make([]verify.DNSAnswer, len(answers))
	for i, a := range answers {
		out[i] = *a
		out[i].Answer = slices.Clone(a.Answer)
		for j, v := range out[i].Answer {
			out[i].Answer[j] = validUTF8(v)
		}
		out[i].Name = validUTF8(a.Name)
	}
	return out
}

// SiteReport is what the genuine crawler did on one site.
type SiteReport = conduct.SiteReport

// Violation is one broken promise, with its evidence.
type Violation = conduct.Violation

// Malformed is an example of a line that did not match the log format.
type Malformed struct {
	File string `json:"file" yaml:"file"`
	Line int64  `json:"line" yaml:"line"`
	Text string `json:"text" yaml:"text"`
	// Reason says where the line left the format (an extension: it is
	// how an operator sees that --log-format is wrong).
	Reason string `json:"reason" yaml:"reason"`
}

// InputReport describes one input file.
type InputReport struct {
	File      string `json:"file" yaml:"file"`
	LogFormat string `json:"log_format" yaml:"log_format"`
	Lines     int64  `json:"lines" yaml:"lines"`
	Malformed int64  `json:"malformed" yaml:"malformed"`
	Bytes     int64  `json:"bytes" yaml:"bytes"`
	Gzip      bool   `json:"gzip,omitempty" yaml:"gzip,omitempty"`
	// FirstTime and LastTime are the times on the input's first and last
	// well-formed lines.
	FirstTime time.Time `json:"first_time" yaml:"first_time"`
	LastTime  time.Time `json:"last_time" yaml:"last_time"`
	// MalformedClaims counts malformed lines carrying the product token.
	MalformedClaims int64 `json:"malformed_claims" yaml:"malformed_claims"`
	// Comments counts the lines that start with '#' (AWStats' and W3C
	// logs' headers): neither requests nor malformed.
	Comments int64 `json:"comments,omitempty" yaml:"comments,omitempty"`
	// TimeZone is the zone its times without a UTC offset were read in,
	// when its format logs such times.
	TimeZone string `json:"time_zone,omitempty" yaml:"time_zone,omitempty"`
	// Site is the site of lines without a virtual host, and HostLogged
	// says whether the format records the virtual host; together they
	// say which sites the input covers.
	Site       string `json:"-" yaml:"-"`
	HostLogged bool   `json:"-" yaml:"-"`
	Error      string `json:"error,omitempty" yaml:"error,omitempty"`
	// ClientField says which field gave the clients of the claimed hits
	// (SPEC §13): "address" (the connecting address as logged), a
	// real-client header read behind a trusted proxy ("x-forwarded-for",
	// "cf-connecting-ip", "true-client-ip", "x-real-ip"), or several,
	// comma-separated. RealClientHits counts the claimed hits whose client
	// came from a header.
	ClientField    string `json:"client_field,omitempty" yaml:"client_field,omitempty"`
	RealClientHits int64  `json:"real_client_hits,omitempty" yaml:"real_client_hits,omitempty"`
}

// IPReportOf returns r as a report entry (SPEC §5) with no hits.
func IPReportOf(r verify.Result) IPReport {
	rep := IPReport{
		IP:         r.Addr.String(),
		Verdict:    r.Verdict,
		Method:     r.Method,
		Reason:     r.Reason,
		PTR:        slices.Clone(r.PTR),
		Forward:    slices.Clone(r.Forward),
		InIPList:   r.InIPList,
		UserAgents: []string{},
		Warnings:   slices.Clone(r.Warnings),
		DNSFailure: r.DNSFailure,
		Proxy:      r.Proxy,
		DNS:        dnsEvidence(r.DNS),
	}
	if rep.PTR == nil {
		rep.PTR = []string{}
	}
	if rep.Forward == nil {
		rep.Forward = []string{}
	}
	if !r.Addr.IsValid() {
		rep.IP = ""
	}
	return rep
}
