package crowdsec

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// The shape of what this package pushes (see the package doc for why).
const (
	// ScenarioPrefix starts the scenario of every decision pushed:
	// ScenarioPrefix + "spoofed-" + the crawler's name.
	ScenarioPrefix = "lohibot-audit/"
	// Origin is the origin of every decision pushed: CrowdSec's origin for
	// decisions a person or a tool adds, which cscli decisions list shows
	// and which the Local API does not share with CrowdSec's Central API
	// unless the console's share_manual_decisions is on.
	Origin = "cscli"
	// TypeBan is the decision type pushed.
	TypeBan = "ban"
	// ScopeIP and ScopeRange are CrowdSec's scopes for one address and
	// for a CIDR range.
	ScopeIP    = "Ip"
	ScopeRange = "Range"
)

// Limits on the free text of an alert.
const (
	maxMessage = 1000
)

// Scenario is the scenario of the decisions against the spoofers of the
// crawler named crawler.
func Scenario(crawler string) string { return ScenarioPrefix + "spoofed-" + crawler }

// Evidence is why one address is banned: what it claimed and what
// verification found. Every string in it may come from a stranger (a log
// line, a PTR record); alerts carry them escaped and clipped.
type Evidence struct {
	// Addr is the address that claimed the crawler.
	Addr netip.Addr
	// Crawler is the crawler's name.
	Crawler string
	// Reason is the verdict's reason (no-ptr, ptr-mismatch,
	// forward-mismatch, not-in-ip-list).
	Reason string
	// PTR and Forward are the names and addresses DNS gave.
	PTR, Forward []string
	// Hits, FirstSeen and LastSeen describe the requests seen from it;
	// zero when not known.
	Hits                int64
	FirstSeen, LastSeen time.Time
	// UserAgent is one User-Agent it sent.
	UserAgent string
}

// Ban is one decision to push: a spoofing address (scope Ip) or a range
// that holds some (scope Range), the crawler they claimed, and the
// evidence for each address in it.
type Ban struct {
	// Prefix is a single address or a range; the zero value is invalid.
	Prefix netip.Prefix
	// Crawler names the crawler, for the scenario.
	Crawler string
	// Evidence is that of the spoofing addresses the decision covers, the
	// first the one its message tells of.
	Evidence []Evidence
}

// Scope is CrowdSec's scope for b: Ip for a single address, else Range.
func (b Ban) Scope() string {
	if b.Prefix.IsSingleIP() {
		return ScopeIP
	}
	return ScopeRange
}

// Value is the decision's value: the address, or the range in CIDR form.
func (b Ban) Value() string {
	if b.Prefix.IsSingleIP() {
		return b.Prefix.Addr().String()
	}
	return b.Prefix.String()
}

// Message is the alert's message: the evidence in one line, at most 1000
// bytes of ASCII, naming the program's version. It is the whole evidence:
// alerts carry no metadata, as the Local API (1.4) reads an alert's
// metadata back row by row and lists alerts three times slower with it.
func (b Ban) Message(version string) string {
	var s strings.Builder
	s.WriteString("lohibot-audit")
	if version != "" {
		s.WriteString(" " + clean(version, 40))
	}
	s.WriteString(": ")
	if len(b.Evidence) == 0 {
		fmt.Fprintf(&s, "%s claimed to be %s and is not", b.Value(), clean(b.Crawler, 40))
		return s.String()
	}
	e := b.Evidence[0]
	if b.Scope() == ScopeRange {
		fmt.Fprintf(&s, "%s holds %s, which", b.Value(), e.Addr)
	} else {
		s.WriteString(e.Addr.String())
	}
	fmt.Fprintf(&s, " claimed to be %s", clean(e.Crawler, 40))
	if e.Hits > 0 {
		fmt.Fprintf(&s, " in %d request%s", e.Hits, plural(e.Hits))
	}
	if !e.FirstSeen.IsZero() {
		fmt.Fprintf(&s, " (%s to %s)", e.FirstSeen.UTC().Format(time.RFC3339), e.LastSeen.UTC().Format(time.RFC3339))
	}
	s.WriteString(" and is not: ")
	s.WriteString(clean(e.Reason, 40))
	s.WriteString(", PTR ")
	s.WriteString(cleanList(e.PTR, 200))
	s.WriteString(", forward ")
	s.WriteString(cleanList(e.Forward, 200))
	if e.UserAgent != "" {
		s.WriteString(", User-Agent ")
		s.WriteString(strconv.QuoteToASCII(clip(e.UserAgent, 200)))
	}
	if n := len(b.Evidence) - 1; n > 0 {
		fmt.Fprintf(&s, "; and %d more address%s", n, pluralES(n))
	}
	return clip(s.String(), maxMessage)
}

// Alert is one alert as POST /v1/alerts takes it, with its decisions:
// every field the Local API requires is set.
type Alert struct {
	Capacity        int32      `json:"capacity"`
	Decisions       []Decision `json:"decisions"`
	Events          []struct{} `json:"events"` // none: an empty list, as the Local API requires one
	EventsCount     int32      `json:"events_count"`
	Leakspeed       string     `json:"leakspeed"`
	Message         string     `json:"message"`
	Scenario        string     `json:"scenario"`
	ScenarioHash    string     `json:"scenario_hash"`
	ScenarioVersion string     `json:"scenario_version"`
	Simulated       bool       `json:"simulated"`
	Source          Source     `json:"source"`
	StartAt         string     `json:"start_at"`
	StopAt          string     `json:"stop_at"`
}

// Source is what an alert is about.
type Source struct {
	Scope string `json:"scope"`
	Value string `json:"value"`
	IP    string `json:"ip,omitempty"`
	Range string `json:"range,omitempty"`
}

// Decision is a decision as the Local API takes and gives it. Duration is
// a Go duration ("168h0m0s"); in answers, the time left ("-1.5s" once
// expired). Until, in answers of newer Local APIs, is its end.
type Decision struct {
	ID        int64  `json:"id,omitempty"`
	Duration  string `json:"duration"`
	Origin    string `json:"origin"`
	Scenario  string `json:"scenario"`
	Scope     string `json:"scope"`
	Type      string `json:"type"`
	Value     string `json:"value"`
	Simulated bool   `json:"simulated,omitempty"`
	Until     string `json:"until,omitempty"`
}

// NewAlert is the alert that bans b for ttl, made at now, naming the
// program's version in its message: one decision of type ban, origin
// Origin and scenario Scenario(b.Crawler), its source the banned address
// or range.
func NewAlert(b Ban, ttl time.Duration, now time.Time, version string) Alert {
	scenario := Scenario(b.Crawler)
	at := now.UTC().Format(time.RFC3339)
	src := Source{Scope: b.Scope(), Value: b.Value()}
	if src.Scope == ScopeIP {
		src.IP = src.Value
	} else {
		src.Range = src.Value
	}
	return Alert{
		Decisions: []Decision{{
			Duration: ttl.String(),
			Origin:   Origin,
			Scenario: scenario,
			Scope:    b.Scope(),
			Type:     TypeBan,
			Value:    b.Value(),
		}},
		Events:      []struct{}{},
		EventsCount: 1,
		Leakspeed:   "0",
		Message:     b.Message(version),
		Scenario:    scenario,
		Source:      src,
		StartAt:     at,
		StopAt:      at,
	}
}

// clean escapes control and non-ASCII bytes of s as \xHH and clips it to n
// bytes: text from strangers made safe for a terminal that shows it.
func clean(s string, n int) string {
	if len(s) > n {
		s = s[:n+1] // enough to know it is cut
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '\\' {
			fmt.Fprintf(&b, "\\x%02x", c)
			continue
		}
		b.WriteByte(c)
	}
	return clip(b.String(), n)
}

// cleanList is the items cleaned and joined with spaces, "none" when
// there are none, at most n bytes.
func cleanList(items []string, n int) string {
	if len(items) == 0 {
		return "none"
	}
	parts := make([]string, len(items))
	for i, it := range items {
		parts[i] = clean(it, n)
	}
	return clip(strings.Join(parts, " "), n)
}

func plural(n int64) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func pluralES(n int) string {
	if n == 1 {
		return ""
	}
	return "es"
}
