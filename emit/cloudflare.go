package emit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"regexp"
	"strings"

	"github.com/lohisoft/lohibot-audit/internal/ipfmt"
)

// Limits and names of the Cloudflare output.
const (
	// CloudflareMaxExpression is the longest rule expression Cloudflare
	// accepts, in characters.
	CloudflareMaxExpression = 4096
	// CloudflareMaxListItems is the number of custom list items an account
	// may hold across all its lists (the default limit; larger plans may
	// have more, and may ask for it).
	CloudflareMaxListItems = 10000
	// CloudflareMaxDescription bounds the descriptions this package writes.
	CloudflareMaxDescription = 500
	// CloudflarePhase is the phase whose entry point ruleset the ruleset
	// output is the body of.
	CloudflarePhase = "http_request_firewall_custom"
	// cloudflareV6Bits is how wide an IPv6 block entry is made: Cloudflare
	// lists take IPv6 ranges of /64 at the longest (and IPv4 ranges of /8
	// at the widest), and a /64 is one subscriber's network.
	cloudflareV6Bits = 64
)

// CloudflareOutput chooses what the Cloudflare emitter writes.
type CloudflareOutput string

// The Cloudflare outputs.
const (
	// CloudflareRuleset is the JSON body for
	// PUT /zones/{zone_id}/rulesets/phases/http_request_firewall_custom/entrypoint.
	CloudflareRuleset CloudflareOutput = "ruleset"
	// CloudflareList is the JSON array of Lists API items
	// ([{"ip","comment"}]) for PUT /accounts/{account_id}/rules/lists/{list_id}/items.
	CloudflareList CloudflareOutput = "list"
	// CloudflareExpression is the bare rule expression, for the dashboard's
	// expression editor.
	CloudflareExpression CloudflareOutput = "expression"
)

// ParseCloudflareOutput returns the output named s; the empty string is
// CloudflareRuleset.
func ParseCloudflareOutput(s string) (CloudflareOutput, error) {
	switch CloudflareOutput(s) {
	case "":
		return CloudflareRuleset, nil
	case CloudflareRuleset, CloudflareList, CloudflareExpression:
		return CloudflareOutput(s), nil
	}
	return "", fmt.Errorf("%w: unknown cloudflare output %q: use ruleset, list or expression", ErrBadOption, s)
}

// CloudflareOptions shape the Cloudflare output. The zero value writes the
// ruleset with addresses inline where they fit.
type CloudflareOptions struct {
	// Output is what to write; the zero value is CloudflareRuleset.
	Output CloudflareOutput
	// ListName, when set, makes the expression match the mode's address set
	// with "ip.src in $ListName" (a custom list uploaded with the list
	// output) instead of inline. When empty, addresses go inline, and only
	// when they do not fit in CloudflareMaxExpression does the expression
	// refer to DefaultCloudflareListName; the Plan's Notes say so.
	ListName string
	// Matches makes the token rule use the matches operator (a regular
	// expression; Cloudflare's Business and Enterprise plans), so that a
	// User-Agent token matches as a product token, as the audit reads
	// claims. Without it the rule uses contains, which every plan has and
	// which also matches a token inside a longer word ("NotGPTBotX"): it
	// may block such a request from an address that is not the crawler's,
	// never one from the crawler's own.
	Matches bool
}

// DefaultCloudflareListName is the list an expression refers to when its
// addresses do not fit inline and no list name was given.
func DefaultCloudflareListName(m Mode) string {
	if m == BlockSpoofed || m == "" {
		return "lohibot_spoofed"
	}
	return "lohibot_crawler"
}

// cfListName is Cloudflare's rule for list names.
var cfListName = regexp.MustCompile(`^[a-z0-9_]{1,50}$`)

// cfSkipPhases and cfSkipProducts are what the allow-bot skip rule skips
// besides the remaining custom rules: the phases and products Cloudflare
// documents as skippable from a custom rule (the previous-version products
// rateLimit and waf left out).
var (
	cfSkipPhases   = []string{"http_ratelimit", "http_request_firewall_managed", "http_request_sbfm"}
	cfSkipProducts = []string{"bic", "hot", "securityLevel", "uaBlock", "zoneLockdown"}
)

// cfRuleset is the body of PUT .../rulesets/phases/{phase}/entrypoint.
type cfRuleset struct {
	Description string   `json:"description"`
	Rules       []cfRule `json:"rules"`
}

// cfRule is one rule of a ruleset.
type cfRule struct {
	Action           string              `json:"action"`
	ActionParameters *cfActionParameters `json:"action_parameters,omitempty"`
	Expression       string              `json:"expression"`
	Description      string              `json:"description"`
	Enabled          bool                `json:"enabled"`
}

// cfActionParameters are the skip action's parameters.
type cfActionParameters struct {
	Ruleset  string   `json:"ruleset,omitempty"`
	Phases   []string `json:"phases,omitempty"`
	Products []string `json:"products,omitempty"`
}

// cfListItem is one item of an IP list.
type cfListItem struct {
	IP      string `json:"ip"`
	Comment string `json:"comment"`
}

// DefaultCloudflareListPrefix starts the names of the lists that rules
// naming their crawlers refer to, unless CloudflareOptions.ListName gives
// another prefix.
const DefaultCloudflareListPrefix = "lohibot"

// Cloudflare writes Cloudflare rules as o.Output says and returns the Plan
// it wrote: one rule per crawler, in the crawlers' order. IPv6 entries of
// the block set are widened to their /64 (the whole /64 is checked against
// the safety rules). In BlockSpoofed mode a crawler's rule blocks requests
// whose User-Agent contains one of its tokens (case-insensitively; with
// o.Matches, as a product token) from any address but the crawler's, and every request from the addresses
// seen spoofing it; in BlockBot mode it blocks the crawler's addresses; in
// AllowBot mode it is a skip rule for them.
//
// A set that does not fit in the expression moves to a list. Rules that
// name their crawlers (Input.Named) refer to the lists PREFIX_NAME_spoofed
// (or _crawler) and PREFIX_NAME_exempt, the exempt set moving too when it
// does not fit, and the list output is an object from list name to items;
// the rules of one crawler that name none refer to the list o.ListName, or
// DefaultCloudflareListName, keep the exempt set inline, and the list
// output is that one list's items.
func Cloudflare(w io.Writer, in Input, o CloudflareOptions) (*Plan, error) {
	out, err := ParseCloudflareOutput(string(o.Output))
	if err != nil {
		return nil, err
	}
	if o.ListName != "" && !cfListName.MatchString(o.ListName) {
		return nil, fmt.Errorf("%w: cloudflare list name %q: use 1 to 50 lower-case letters, digits and _", ErrBadOption, o.ListName)
	}
	p, err := newPlan(in, planLimits{v6Bits: cloudflareV6Bits, minBits4: 8, minBits6: 4})
	if err != nil {
		return nil, err
	}
	// In the list output, or with a list named, the address sets always
	// go to their lists.
	listed := o.ListName != "" || out == CloudflareList
	if p.Mode == BlockSpoofed {
		if err := p.needTokens(); err != nil {
			return nil, err
		}
	}
	rules := make([]cfCrawlerRule, len(p.Crawlers))
	empty := 0
	for i := range p.Crawlers {
		c := &p.Crawlers[i]
		r, err := cfCrawlerExpression(p, c, o.ListName, listed, o.Matches)
		if err != nil && !(errors.Is(err, ErrNoCrawlerAddresses) && p.Mode != BlockSpoofed) {
			return nil, err
		}
		if err != nil {
			empty++
			p.Notes = append(p.Notes, fmt.Sprintf("%s: no address left to match: no rule for it", p.label(c)))
			r = cfCrawlerRule{crawler: c}
		}
		rules[i] = r
	}
	if empty == len(rules) {
		return nil, fmt.Errorf("%w: no crawler address left to match", ErrNoCrawlerAddresses)
	}
	total := 0
	for _, r := range rules {
		for _, l := range r.lists {
			total += len(l.items)
			if out != CloudflareList && o.ListName == "" {
				p.Notes = append(p.Notes, cfListNote(p, r.crawler, l))
			}
		}
	}
	if total > CloudflareMaxListItems {
		return nil, fmt.Errorf("%w: %d addresses in the lists, more than the %d items an account's lists may hold", ErrListTooLong, total, CloudflareMaxListItems)
	}

	switch out {
	case CloudflareList:
		items := func(l cfNamedList) []cfListItem {
			out := make([]cfListItem, len(l.items))
			for i, q := range l.items {
				out[i] = cfListItem{IP: ipfmt.Prefix(q), Comment: l.comment}
			}
			return out
		}
		if !p.named {
			return p, writeJSON(w, items(rules[0].lists[0]))
		}
		lists := map[string][]cfListItem{}
		for _, r := range rules {
			for _, l := range r.lists {
				lists[l.name] = items(l)
			}
		}
		return p, writeJSON(w, lists)
	case CloudflareExpression:
		var b strings.Builder
		for _, r := range rules {
			if r.expr != "" {
				b.WriteString(r.expr + "\n")
			}
		}
		_, err := io.WriteString(w, b.String())
		return p, err
	}
	rs := cfRuleset{Description: cfRulesetDescription(in, p.Mode)}
	for _, r := range rules {
		if r.expr == "" {
			continue
		}
		rule := cfRule{Expression: r.expr, Enabled: true, Action: "block", Description: cfRuleDescription(p, r.crawler)}
		if p.Mode == AllowBot {
			rule.Action = "skip"
			rule.ActionParameters = &cfActionParameters{Ruleset: "current", Phases: cfSkipPhases, Products: cfSkipProducts}
		}
		rs.Rules = append(rs.Rules, rule)
	}
	return p, writeJSON(w, rs)
}

// cfRuleDescription is the description of crawler c's rule: under the
// crawler's name when the rules name their crawlers.
func cfRuleDescription(p *Plan, c *CrawlerPlan) string {
	n := plural(len(c.crawlerSet(p.Mode)), "address", "addresses")
	var d string
	switch {
	case !p.named && p.Mode == BlockSpoofed:
		d = fmt.Sprintf("lohibot-audit: block %s claims from addresses that are not the crawler's, and all requests from %s seen spoofing it", p.title, n)
	case !p.named && p.Mode == BlockBot:
		d = fmt.Sprintf("lohibot-audit: block the %s crawler's %s", p.title, n)
	case !p.named:
		d = fmt.Sprintf("lohibot-audit: let the %s crawler's %s skip the remaining custom rules, managed rules, rate limiting and bot rules", p.title, n)
	case p.Mode == BlockSpoofed:
		d = fmt.Sprintf("lohibot-audit %s: block %s claims (User-Agent %s) from addresses that are not the crawler's, and all requests from %s seen spoofing it",
			c.Name, c.Name, strings.Join(c.Tokens, ", "), n)
	case p.Mode == BlockBot:
		d = fmt.Sprintf("lohibot-audit %s: block the %s crawler's %s", c.Name, c.Name, n)
	default:
		d = fmt.Sprintf("lohibot-audit %s: let the %s crawler's %s skip the remaining custom rules, managed rules, rate limiting and bot rules", c.Name, c.Name, n)
	}
	if len(d) > CloudflareMaxDescription {
		d = d[:CloudflareMaxDescription-3] + "..."
	}
	return d
}

// cfListNote says that a rule refers to a list the user must upload.
func cfListNote(p *Plan, c *CrawlerPlan, l cfNamedList) string {
	n := plural(len(l.items), "address", "addresses")
	if !p.named {
		return fmt.Sprintf("the %s do not fit in a %d-character expression: the rule refers to the list $%s; upload it with --cloudflare-output list (or name another with --cloudflare-list-name)",
			n, CloudflareMaxExpression, l.name)
	}
	return fmt.Sprintf("%s: the %s do not fit in a %d-character expression: the rule refers to the list $%s; upload it with --cloudflare-output list",
		c.Name, n, CloudflareMaxExpression, l.name)
}

// cfRulesetDescription is the provenance of the ruleset: what made it,
// when, and from which inputs; at most CloudflareMaxDescription characters,
// the generated marker always among them.
func cfRulesetDescription(in Input, m Mode) string {
	d := fmt.Sprintf("lohibot-audit %s, mode %s, %s; inputs: %s; IP list: %s",
		in.versionString(), m, in.generatedString(), in.sourcesString(5), in.ipListString())
	if len(d) > CloudflareMaxDescription {
		d = d[:CloudflareMaxDescription-3] + "..."
	}
	return d
}

// cfCrawlerLists names one crawler's lists: set for the mode's address set
// and exempt for the addresses its token rule spares. Rules that name
// their crawlers use PREFIX_NAME_spoofed (PREFIX_NAME_crawler in the other
// modes) and PREFIX_NAME_exempt, the crawler's '-' written '_', PREFIX
// being name or DefaultCloudflareListPrefix; the rules of one crawler that
// name none use name, or DefaultCloudflareListName, for the set and no
// exempt list ("").
func cfCrawlerLists(p *Plan, c *CrawlerPlan, name string) (set, exempt string, err error) {
	if !p.named {
		if name == "" {
			name = DefaultCloudflareListName(p.Mode)
		}
		return name, "", nil
	}
	if name == "" {
		name = DefaultCloudflareListPrefix
	}
	base := name + "_" + strings.ReplaceAll(c.Name, "-", "_")
	set = base + "_crawler"
	if p.Mode == BlockSpoofed {
		set = base + "_spoofed"
	}
	exempt = base + "_exempt"
	for _, n := range []string{set, exempt} {
		if !cfListName.MatchString(n) {
			return "", "", fmt.Errorf("%w: cloudflare list name %q for crawler %s is longer than 50 characters: give a shorter --cloudflare-list-name", ErrBadOption, n, c.Name)
		}
	}
	return set, exempt, nil
}

// cfCrawlerRule is one crawler's rule: its expression and the lists it
// refers to, by name, with their items.
type cfCrawlerRule struct {
	crawler *CrawlerPlan
	expr    string
	lists   []cfNamedList
}

// cfNamedList is a list a rule refers to.
type cfNamedList struct {
	name    string
	items   []netip.Prefix
	comment string
}

// cfCrawlerExpression builds the rule of crawler c, its lists named after
// name (see cfCrawlerLists). With listed set, the mode's address set is
// always its list; otherwise it goes inline unless that makes the
// expression too long, when it moves to its list, and then the exempt set
// to its own list too, when there is one. With matches set, its tokens
// are matched with a regular expression, else with contains.
func cfCrawlerExpression(p *Plan, c *CrawlerPlan, name string, listed, matches bool) (cfCrawlerRule, error) {
	r := cfCrawlerRule{crawler: c}
	setList, exemptList, err := cfCrawlerLists(p, c, name)
	if err != nil {
		return r, err
	}
	set := c.crawlerSet(p.Mode)
	setItems := cfNamedList{name: setList, items: set, comment: cfCrawlerComment(p.Mode, p.label(c))}
	exemptItems := cfNamedList{name: exemptList, items: c.Exempt, comment: "lohibot-audit block-spoofed: " + c.Name + " crawler address, spared from the token rule"}
	build := func(setRef, exemptRef string) string {
		if p.Mode != BlockSpoofed {
			return "ip.src in " + setRef
		}
		token := "lower(http.user_agent) matches " + cfRaw(tokenRegexp(c.Tokens))
		if !matches {
			toks := substringTokens(c.Tokens)
			claims := make([]string, len(toks))
			for i, t := range toks {
				claims[i] = "lower(http.user_agent) contains " + cfQuote(t)
			}
			token = strings.Join(claims, " or ")
			if len(claims) > 1 {
				token = "(" + token + ")"
			}
		}
		token += " and not ip.src in " + exemptRef
		if setRef == "" {
			return token
		}
		return "(" + token + ") or ip.src in " + setRef
	}
	if p.Mode == BlockSpoofed && len(c.Exempt) == 0 {
		return r, fmt.Errorf("%w: %s has no genuine address and an empty IP list: a rule blocking its tokens from every other address would block the crawler itself", ErrNoCrawlerAddresses, p.label(c))
	}
	if p.Mode != BlockSpoofed && len(set) == 0 && !listed {
		return r, fmt.Errorf("%w: no %s address left to match", ErrNoCrawlerAddresses, p.label(c))
	}
	inlineSet, inlineExempt := "", ""
	if len(set) > 0 {
		inlineSet = cfInline(set)
	}
	if p.Mode == BlockSpoofed {
		inlineExempt = cfInline(c.Exempt)
	}
	if !listed {
		if r.expr = build(inlineSet, inlineExempt); len(r.expr) <= CloudflareMaxExpression {
			return r, nil
		}
	}
	r.lists = []cfNamedList{setItems}
	if r.expr = build("$"+setList, inlineExempt); len(r.expr) <= CloudflareMaxExpression {
		return r, nil
	}
	if exemptList == "" {
		return r, fmt.Errorf("%w: %d characters with the crawler's %s inline", ErrExpressionTooLong, len(r.expr), plural(len(c.Exempt), "address", "addresses"))
	}
	r.lists = append(r.lists, exemptItems)
	if r.expr = build("$"+setList, "$"+exemptList); len(r.expr) > CloudflareMaxExpression {
		return r, fmt.Errorf("%w: %d characters for %s with its sets in lists", ErrExpressionTooLong, len(r.expr), c.Name)
	}
	return r, nil
}

// cfCrawlerComment is the comment of the items of a crawler's list.
func cfCrawlerComment(m Mode, name string) string {
	switch m {
	case BlockBot:
		return "lohibot-audit block-bot: " + name + " crawler address"
	case AllowBot:
		return "lohibot-audit allow-bot: " + name + " crawler address"
	}
	return "lohibot-audit block-spoofed: claimed to be " + name + " without being it"
}

// cfInline writes prefixes as an inline list: {a b c}.
func cfInline(ps []netip.Prefix) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, q := range ps {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(ipfmt.Prefix(q))
	}
	b.WriteByte('}')
	return b.String()
}

// cfQuote writes s as a quoted string of the Rules language: backslash and
// double quote escaped with a backslash (the only escapes Cloudflare
// documents for quoted strings), control bytes left out.
func cfQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	writeBackslashEscaped(&b, s)
	b.WriteByte('"')
	return b.String()
}

// cfRaw writes s as a raw string of the Rules language, r"…", in which no
// byte is special: the way Cloudflare advises to write a regular
// expression. s must hold no double quote (tokenRegexp's do not).
func cfRaw(s string) string {
	return `r"` + s + `"`
}

// writeBackslashEscaped writes s with '"' and '\\' escaped by a backslash
// and control bytes left out: the quoting that Cloudflare's Rules language
// and ModSecurity's SecRule arguments share.
func writeBackslashEscaped(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"' || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < 0x20 || c == 0x7f:
		default:
			b.WriteByte(c)
		}
	}
}

// writeJSON writes v as indented JSON and a newline.
func writeJSON(w io.Writer, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(buf.Bytes())
	return err
}
