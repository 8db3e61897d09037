package emit

import (
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strings"

	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/verify"
)

// CrawlerInput is one crawler's part of an Input: its name and User-Agent
// tokens, the addresses seen claiming it and its own addresses.
type CrawlerInput struct {
	// Name names the crawler in rule names, comments and list names when
	// the rules name their crawlers (Input.Named): [a-z0-9-]+, at most 32
	// characters, as a crawler profile's.
	Name string
	// Tokens are its User-Agent product tokens (printable ASCII without
	// spaces, quotes or backslashes), matched without regard to case. The
	// block-spoofed rules of Cloudflare and ModSecurity need them
	// (ErrNoTokens); the other rules hold addresses only.
	Tokens []string
	// Spoofed are the addresses seen claiming to be it without being it.
	Spoofed []netip.Addr
	// Genuine are the addresses verified to be it.
	Genuine []netip.Addr
	// Listed is its IP list in force (every list it publishes).
	Listed []netip.Prefix
}

// CrawlerPlan is what the rules of one crawler do.
type CrawlerPlan struct {
	// Name is the crawler's name.
	Name string
	// Tokens are its tokens in lower case, as the rules compare them, in
	// the order given, without duplicates.
	Tokens []string
	// Block are the prefixes its rules block: the addresses seen spoofing
	// it (never one that is any crawler's), or its own addresses in
	// BlockBot mode. Sorted, without overlaps.
	Block []netip.Prefix
	// Exempt are its addresses (its IP list and genuine ones), which its
	// token rule spares in BlockSpoofed mode.
	Exempt []netip.Prefix
	// Allow are its addresses that AllowBot rules let through.
	Allow []netip.Prefix
}

// crawlerSet is the set the mode's rules match on the address alone.
func (c *CrawlerPlan) crawlerSet(m Mode) []netip.Prefix {
	if m == AllowBot {
		return c.Allow
	}
	return c.Block
}

// crawlerNameRE is a crawler profile's name.
var crawlerNameRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$`)

// ErrNoTokens means a crawler's rule must match its User-Agent tokens and
// it has none (a crawler known only by name, from a report).
var ErrNoTokens = errors.New("no user-agent token")

// needTokens returns an error wrapping ErrNoTokens for the first crawler
// without tokens.
func (p *Plan) needTokens() error {
	for i := range p.Crawlers {
		if c := &p.Crawlers[i]; len(c.Tokens) == 0 {
			return fmt.Errorf("%w: the block-spoofed rules of %s match its User-Agent tokens, and none is known", ErrNoTokens, p.label(c))
		}
	}
	return nil
}

// label names crawler c in text: by its name when the rules name their
// crawlers, else (c may then be nil) by its token.
func (p *Plan) label(c *CrawlerPlan) string {
	switch {
	case p.named:
		return c.Name
	case p.title != "":
		return p.title
	}
	return "the crawler"
}

// checkCrawlers checks the crawlers' names (when the rules name them) and
// tokens: they go into rule text, so anything else is refused rather than
// escaped.
func checkCrawlers(cs []CrawlerInput, named bool) error {
	seen := map[string]bool{}
	for _, c := range cs {
		if named {
			if !crawlerNameRE.MatchString(c.Name) {
				return fmt.Errorf("%w: crawler name %q: use 1 to 32 lower-case letters, digits and -", ErrBadOption, c.Name)
			}
			if seen[c.Name] {
				return fmt.Errorf("%w: crawler %s is given twice", ErrBadOption, c.Name)
			}
			seen[c.Name] = true
		}
		for _, t := range c.Tokens {
			if !plainToken(t) {
				return fmt.Errorf("%w: crawler %s: token %q: use printable ASCII without spaces, quotes or backslashes", ErrBadOption, c.Name, t)
			}
		}
	}
	return nil
}

// plainToken reports whether t is a product token that needs no quoting:
// 1 to 64 bytes of printable ASCII other than space, quotes and backslash.
func plainToken(t string) bool {
	if t == "" || len(t) > 64 {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		if c <= ' ' || c >= 0x7f || c == '"' || c == '\'' || c == '\\' {
			return false
		}
	}
	return true
}

// lowerTokens is tokens in lower case, in order, without duplicates.
// "examplebot-image" stays beside "examplebot": as product tokens, the
// first is not the second (parse.TokenSet).
func lowerTokens(tokens []string) []string {
	var lower []string
	for _, t := range tokens {
		if l := strings.ToLower(t); !slices.Contains(lower, l) {
			lower = append(lower, l)
		}
	}
	return lower
}

// substringTokens is tokens without those that hold another: what a
// substring match (Cloudflare's contains) needs to look for, since a
// User-Agent that contains "examplebot-image" contains "examplebot".
func substringTokens(tokens []string) []string {
	var out []string
	for _, t := range tokens {
		if !slices.ContainsFunc(tokens, func(u string) bool { return u != t && strings.Contains(t, u) }) {
			out = append(out, t)
		}
	}
	return out
}

// newPlan is NewPlan within a target's limits: each crawler's share
// planned on its own, no block set holding an address that is any
// crawler's (listed or genuine), and the Plan's sets the union of theirs.
func newPlan(in Input, lim planLimits) (*Plan, error) {
	mode, err := ParseMode(string(in.Mode))
	if err != nil {
		return nil, err
	}
	named := in.named()
	if err := checkCrawlers(in.Crawlers, named); err != nil {
		return nil, err
	}
	crawlers := in.Crawlers
	if len(crawlers) == 0 {
		crawlers = []CrawlerInput{{}}
	}
	shares := make([]share, len(crawlers))
	var all share
	for i, c := range crawlers {
		shares[i] = newShare(c.Genuine, c.Listed)
		all.listed = append(all.listed, shares[i].listed...)
		all.genuine = append(all.genuine, shares[i].genuine...)
	}
	all.listed = collapse(all.listed)
	all.genuine = collapse(all.genuine)
	never := normPrefixes(in.NeverBlock)

	p := &Plan{Mode: mode, named: named}
	if !named && len(crawlers[0].Tokens) > 0 {
		p.title = crawlers[0].Tokens[0]
	}
	var skipped []Skipped
	var block, exempt, allow []netip.Prefix
	for i, c := range crawlers {
		cp := CrawlerPlan{Name: c.Name, Tokens: lowerTokens(c.Tokens)}
		who := ""
		if named {
			who = c.Name
		}
		cp.Block, cp.Exempt, cp.Allow = shares[i].plan(mode, c.Spoofed, all, never, in.Proxies, lim, func(q netip.Prefix, r SkipReason) {
			skipped = append(skipped, Skipped{Prefix: q, Reason: r, Crawler: who})
		})
		block = append(block, cp.Block...)
		exempt = append(exempt, cp.Exempt...)
		allow = append(allow, cp.Allow...)
		p.Crawlers = append(p.Crawlers, cp)
	}
	p.Block, p.Exempt, p.Allow = collapseOwned(block), collapseOwned(exempt), collapseOwned(allow)
	p.Skipped = sortSkipped(skipped)
	return p, nil
}

// crawlerNames joins the names of the crawlers for text: "a", "a or b",
// "a, b or c" (with "and" for and).
func crawlerNames(cs []CrawlerPlan, and string) string {
	names := make([]string, len(cs))
	for i, c := range cs {
		names[i] = c.Name
	}
	if len(names) == 1 {
		return names[0]
	}
	return strings.Join(names[:len(names)-1], ", ") + " " + and + " " + names[len(names)-1]
}

// who names the crawler (or crawlers) the rules are about, for text: by
// their names when the rules name them, else by the crawler's token.
func (p *Plan) who(and string) string {
	if !p.named {
		return p.label(nil)
	}
	return crawlerNames(p.Crawlers, and)
}

// whose names the crawlers whose addresses the rules are about:
// "ExampleBot crawler's" (named by its token), "googlebot crawler's",
// "a and b crawlers'".
func (p *Plan) whose() string {
	if !p.named && p.title == "" {
		return "crawler's"
	}
	if len(p.Crawlers) > 1 {
		return p.who("and") + " crawlers'"
	}
	return p.who("and") + " crawler's"
}

// CrawlersOf are the crawlers of rules made for names, with their
// profiles (nil for a crawler known by name only: no tokens) and their IP
// lists in force (nil: none), all three in the same order.
func CrawlersOf(names []string, profiles []*crawler.Profile, lists []*verify.IPList) []CrawlerInput {
	out := make([]CrawlerInput, len(names))
	for i, name := range names {
		out[i].Name = name
		if profiles[i] != nil {
			out[i].Tokens = profiles[i].Tokens
		}
		if lists[i] != nil {
			out[i].Listed = lists[i].Prefixes
		}
	}
	return out
}
