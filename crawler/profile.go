// Package crawler describes the crawlers the tool audits: what a crawler
// calls itself (User-Agent tokens, its robots.txt token), how to verify it
// (forward-confirmed reverse DNS suffixes, published IP lists and a
// built-in fallback list, whether it uses IPv6) and what it promises about
// its conduct (robots.txt, a page budget, pauses, backoff, no login
// bypass).
//
// A [Profile] holds all of that for one crawler, with its category (what
// it is for) and its operator's contact. LohiSoftBot's profile is built
// in and is the default; the search engines' and the AI companies'
// crawlers are built in from their operators' published verification
// methods (see [BuiltinNames]), their lists with a dated snapshot each
// ([ListSnapshot]); any other crawler is described by a YAML file (see
// [ParseFile]). A PTR suffix must belong to one owner: the Public Suffix
// List and a short list of cloud zones decide.
package crawler

import (
	"errors"
	"fmt"
	"net/mail"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Profile is everything the tool knows about one crawler. Profiles are
// values: build them with [Builtin], [ParseFile] or a literal, then call
// [Profile.Validate] (ParseFile and Builtin return valid profiles).
type Profile struct {
	// Name names the crawler in reports and rule names: [a-z0-9-]+.
	Name string
	// Category says what the crawler is for, in the words of
	// [CategorySearch], [CategoryAITraining] and the like, or another
	// [a-z0-9-]+ name; Validate makes "" [CategoryOther]. Reports show it,
	// and --crawler CATEGORY picks the built-in profiles of one.
	Category string
	// Contact is the e-mail address the operator publishes for site
	// owners (exclusion requests, questions), or "" when none is known.
	Contact string
	// Tokens are the User-Agent product tokens that claim the crawler,
	// matched anywhere in the User-Agent without regard to ASCII case.
	Tokens []string
	// RobotsToken is the product token its robots.txt groups name (RFC
	// 9309 §2.2.1); it defaults to Tokens[0].
	RobotsToken string
	// FCrDNS are the domain suffixes its PTR names end in, at a label
	// boundary (lower case, without leading or trailing dots). Empty: the
	// crawler is verified by its IP lists only.
	FCrDNS []string
	// IPLists are the HTTPS URLs of its published IP lists; their union
	// decides.
	IPLists []string
	// BuiltinIPs is the last fallback list, used when no published list
	// can be had. It may be empty.
	BuiltinIPs []netip.Prefix
	// BuiltinIPsDate is when BuiltinIPs were published (the date of the
	// page they were taken from); zero when not known.
	BuiltinIPsDate time.Time
	// IPv6 says whether the crawler may use IPv6. When false, an IPv6
	// client claiming it and not in a list is spoofed without DNS.
	IPv6 bool
	// Conduct is what it promises; a promise not made is not checked.
	Conduct Conduct
	// Source says where the profile came from: "built-in" or a file path.
	Source string
}

// Conduct is the promises a crawler makes about its behaviour. The zero
// value promises nothing.
type Conduct struct {
	// Robots: it obeys robots.txt (RFC 9309).
	Robots bool
	// RobotsNotPromised: its operator says it may ignore robots.txt (a
	// fetcher acting on a person's request, a crawler under an agreement
	// with the site). Like a promise not made, it is not checked, and
	// reports say "not promised" for it, so that no one reads its pages
	// as violations. Never set with Robots.
	RobotsNotPromised bool
	// Budget, when set, is the most pages it fetches from one site within
	// a window.
	Budget *Budget
	// MinPause, when above zero, is the least time between two of its
	// requests to one site (one request at a time with a pause).
	MinPause time.Duration
	// Backoff, when set, promises to slow down after a 429 or 5xx answer,
	// for as long as Retry-After says or, when none is logged, at least
	// Backoff.Min.
	Backoff *Backoff
	// NoAuthBypass: it never gets past logins or bot protection.
	NoAuthBypass bool
}

// Budget is a page budget: at most Pages pages per site within Window.
type Budget struct {
	Pages  int
	Window time.Duration
}

// Backoff is a backoff promise.
type Backoff struct {
	Min time.Duration
}

// Limits on profiles.
const (
	// MaxTokens is the most User-Agent tokens one profile may have.
	MaxTokens = 16
	// MaxTokenLen is the longest User-Agent token.
	MaxTokenLen = 64
	// MaxNameLen is the longest profile name.
	MaxNameLen = 32
	// MaxIPLists is the most IP list URLs one profile may name.
	MaxIPLists = 8
	// minBits4 and minBits6 are the widest built-in prefixes accepted, as
	// for published lists: a crawler's range is never a large part of the
	// Internet.
	minBits4 = 16
	minBits6 = 32
)

// ErrInvalid is wrapped by every validation error.
var ErrInvalid = errors.New("invalid crawler profile")

// fieldError is a validation error about one field ("tokens",
// "conduct.budget.pages"), so that a file's error can name its line.
type fieldError struct {
	field string
	err   error
}

func (e *fieldError) Error() string { return e.name() + ": " + e.err.Error() }

// name is the field as a user writes it: "fcrdns" for "fcrdns.2", the
// third item of the list (whose index picks its line in a file).
func (e *fieldError) name() string {
	if i := strings.LastIndexByte(e.field, '.'); i >= 0 && e.field[i+1:] != "" && strings.Trim(e.field[i+1:], "0123456789") == "" {
		return e.field[:i]
	}
	return e.field
}

func bad(field, format string, a ...any) error {
	return &fieldError{field: field, err: fmt.Errorf(format, a...)}
}

var nameRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`)

// Title is what people call the crawler in text: its first User-Agent
// token, as its User-Agent writes it ("LohiSoftBot"), or its name when it
// has no token.
func (p *Profile) Title() string {
	if len(p.Tokens) > 0 {
		return p.Tokens[0]
	}
	return p.Name
}

// DefaultProfile returns a new copy of the default profile: the crawler
// of a run, and of a report, that names none.
func DefaultProfile() *Profile {
	p, _ := Builtin(Default)
	return p
}

// DefaultTitle is the Title of the default profile.
func DefaultTitle() string { return DefaultProfile().Title() }

// Validate checks p and normalises it in place: suffixes in lower case
// without dots at either end, prefixes masked, RobotsToken defaulted. The
// error names the first field that is wrong.
func (p *Profile) Validate() error {
	if err := p.validate(); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return nil
}

func (p *Profile) validate() error {
	if err := checkName(p.Name); err != nil {
		return &fieldError{"name", err}
	}
	if p.Category == "" {
		p.Category = CategoryOther
	}
	if err := checkCategory(p.Category); err != nil {
		return &fieldError{"category", err}
	}
	if p.Contact != "" {
		a, err := checkContact(p.Contact)
		if err != nil {
			return &fieldError{"contact", err}
		}
		p.Contact = a
	}
	if len(p.Tokens) == 0 {
		return bad("tokens", "give at least one User-Agent product token, such as [ExampleBot]")
	}
	if len(p.Tokens) > MaxTokens {
		return bad("tokens", "%d tokens; at most %d", len(p.Tokens), MaxTokens)
	}
	for _, t := range p.Tokens {
		if err := checkToken(t); err != nil {
			return &fieldError{"tokens", err}
		}
	}
	if p.RobotsToken == "" {
		p.RobotsToken = ProductToken(p.Tokens[0])
	}
	if err := checkRobotsToken(p.RobotsToken); err != nil {
		return &fieldError{"robots_token", err}
	}
	for i, s := range p.FCrDNS {
		n, err := normSuffix(s)
		if err == nil {
			err = checkSuffixOwner(n)
		}
		if err != nil {
			return &fieldError{fmt.Sprintf("fcrdns.%d", i), err}
		}
		p.FCrDNS[i] = n
	}
	slices.Sort(p.FCrDNS)
	p.FCrDNS = slices.Compact(p.FCrDNS)
	if len(p.IPLists) > MaxIPLists {
		return bad("ip_lists", "%d lists; at most %d", len(p.IPLists), MaxIPLists)
	}
	for _, u := range p.IPLists {
		if err := checkListURL(u); err != nil {
			return &fieldError{"ip_lists", err}
		}
	}
	for i, q := range p.BuiltinIPs {
		m, err := checkPrefix(q)
		if err != nil {
			return &fieldError{"builtin_ips", err}
		}
		p.BuiltinIPs[i] = m
	}
	slices.SortFunc(p.BuiltinIPs, comparePrefix)
	p.BuiltinIPs = slices.Compact(p.BuiltinIPs)
	if len(p.FCrDNS) == 0 && len(p.IPLists) == 0 && len(p.BuiltinIPs) == 0 {
		return bad("name", "no way to verify %s: give fcrdns suffixes, ip_lists or builtin_ips", p.Name)
	}
	c := p.Conduct
	if c.Robots && c.RobotsNotPromised {
		return bad("conduct.robots", "both promised and not promised; give true, false or not-promised")
	}
	if c.Budget != nil {
		if c.Budget.Pages < 1 {
			return bad("conduct.budget.pages", "%d; give 1 or more", c.Budget.Pages)
		}
		if c.Budget.Window <= 0 {
			return bad("conduct.budget.window", "%s; give a duration above 0, such as 24h", c.Budget.Window)
		}
	}
	if c.MinPause < 0 {
		return bad("conduct.min_pause", "%s; give a duration of 0 or more", c.MinPause)
	}
	if c.Backoff != nil && c.Backoff.Min < 0 {
		return bad("conduct.backoff.min", "%s; give a duration of 0 or more", c.Backoff.Min)
	}
	return nil
}

// checkCategory accepts what a name is ([a-z0-9-]+) that no built-in
// profile is called: --crawler takes both.
func checkCategory(s string) error {
	if err := checkName(s); err != nil {
		return err
	}
	if _, ok := builtins[s]; ok {
		return fmt.Errorf("%q is the name of a built-in profile; give a category such as %s", s, CategoryAITraining)
	}
	return nil
}

// checkContact accepts one bare e-mail address (addr-spec, RFC 5322) and
// returns it.
func checkContact(s string) (string, error) {
	a, err := mail.ParseAddress(s)
	if err != nil || a.Name != "" || a.Address != strings.TrimSpace(s) {
		return "", fmt.Errorf("%q: give one e-mail address, such as crawler@example.net", clip(s))
	}
	return a.Address, nil
}

func checkName(s string) error {
	switch {
	case s == "":
		return errors.New("missing; give a short name such as examplebot")
	case len(s) > MaxNameLen:
		return fmt.Errorf("%q: longer than %d characters", clip(s), MaxNameLen)
	case !nameRE.MatchString(s):
		return fmt.Errorf("%q: use lower-case letters, digits and inner dashes only, such as examplebot", clip(s))
	}
	return nil
}

// checkToken accepts printable ASCII without spaces: what a product token
// in a User-Agent header can be.
func checkToken(t string) error {
	if len(t) < 3 {
		return fmt.Errorf("%q: too short to tell a crawler (3 characters at least)", clip(t))
	}
	if len(t) > MaxTokenLen {
		return fmt.Errorf("%q: longer than %d characters", clip(t), MaxTokenLen)
	}
	for i := 0; i < len(t); i++ {
		if c := t[i]; c <= ' ' || c >= 0x7f || c == '"' || c == '\\' {
			return fmt.Errorf("%q: a token is printable ASCII without spaces, quotes or backslashes", clip(t))
		}
	}
	return nil
}

// ProductToken returns the robots.txt product token at the start of s
// (RFC 9309 §2.2.1): its leading run of ASCII letters, "_" and "-", after
// leading white space. "LohiSoftBot/1.0 (+https://lohisoft.com/bot)" gives
// "LohiSoftBot"; a string that does not start with such a character gives
// "". robots.txt groups and the crawler asking about them are matched by it.
func ProductToken(s string) string {
	s = strings.TrimLeft(s, " \t")
	i := 0
	for i < len(s) && isRobotsByte(s[i]) {
		i++
	}
	return s[:i]
}

func isRobotsByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == '-'
}

func checkRobotsToken(t string) error {
	if t == "" {
		return errors.New("missing: the first token starts with no letter; give robots_token, such as ExampleBot")
	}
	if len(t) > MaxTokenLen {
		return fmt.Errorf("%q: longer than %d characters", clip(t), MaxTokenLen)
	}
	for i := 0; i < len(t); i++ {
		if !isRobotsByte(t[i]) {
			return fmt.Errorf("%q: a robots.txt product token has only letters, '_' and '-' (RFC 9309)", clip(t))
		}
	}
	return nil
}

// normSuffix checks a PTR suffix: a DNS name of two labels or more (a bare
// top-level domain would make half the Internet genuine).
func normSuffix(s string) (string, error) {
	n := strings.ToLower(strings.Trim(strings.TrimSpace(s), "."))
	if n == "" {
		return "", fmt.Errorf("%q: empty suffix", clip(s))
	}
	if len(n) > 253 {
		return "", fmt.Errorf("%q: longer than a DNS name can be", clip(s))
	}
	labels := strings.Split(n, ".")
	if len(labels) < 2 {
		return "", fmt.Errorf("%q: give a domain of two labels or more, such as crawl.example.net", clip(s))
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' {
			return "", fmt.Errorf("%q: not a valid domain name", clip(s))
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return "", fmt.Errorf("%q: not a valid domain name", clip(s))
			}
		}
	}
	return n, nil
}

func checkListURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || u.User != nil {
		return fmt.Errorf("%q: not a URL such as https://example.net/bot/ips.json", clip(s))
	}
	if u.Scheme != "https" {
		return fmt.Errorf("%q: lists are fetched over https only", clip(s))
	}
	return nil
}

func checkPrefix(q netip.Prefix) (netip.Prefix, error) {
	if !q.IsValid() {
		return netip.Prefix{}, errors.New("an invalid prefix")
	}
	a := q.Addr()
	if a.Is4In6() {
		bits := q.Bits() - 96
		if bits < 0 {
			return netip.Prefix{}, fmt.Errorf("%s: not an IPv4 range", q)
		}
		q = netip.PrefixFrom(a.Unmap(), bits)
	}
	q = netip.PrefixFrom(q.Addr().WithZone(""), q.Bits()).Masked()
	if min := map[bool]int{true: minBits4, false: minBits6}[q.Addr().Is4()]; q.Bits() < min {
		return netip.Prefix{}, fmt.Errorf("%s: wider than /%d; a crawler's range is never that large", q, min)
	}
	return q, nil
}

func comparePrefix(a, b netip.Prefix) int {
	if c := a.Addr().Compare(b.Addr()); c != 0 {
		return c
	}
	return a.Bits() - b.Bits()
}

// ParsePrefix parses an address or a CIDR, as builtin_ips entries are
// written.
func ParsePrefix(s string) (netip.Prefix, error) {
	s = strings.TrimSpace(s)
	if strings.Contains(s, "/") {
		return netip.ParsePrefix(s)
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// clip shortens s for an error message and escapes what is not printable.
func clip(s string) string {
	const max = 40
	if len(s) > max {
		cut := max
		for cut > 0 && s[cut]&0xc0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

// TokenGroups are the User-Agent tokens of each of profiles, in order (a
// nil profile claims none): the groups a parse.TokenSet is built of, a
// claim of profiles[i] being bit i.
func TokenGroups(profiles []*Profile) [][]string {
	groups := make([][]string, len(profiles))
	for i, p := range profiles {
		if p != nil {
			groups[i] = p.Tokens
		}
	}
	return groups
}

// Names returns the names of profiles, in order.
func Names(profiles []*Profile) []string {
	names := make([]string, len(profiles))
	for i, p := range profiles {
		names[i] = p.Name
	}
	return names
}
