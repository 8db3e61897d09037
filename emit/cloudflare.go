package emit

import (
	"bytes"
	"encoding/json"
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

// Cloudflare writes Cloudflare rules as o.Output says and returns the Plan
// it wrote. IPv6 entries of the block set are widened to their /64 (the
// whole /64 is checked against the safety rules). In BlockSpoofed mode the
// rule blocks requests whose User-Agent contains the product token
// (case-insensitively) from any address but the crawler's, and every
// request from the spoofing addresses; in BlockBot mode it blocks the
// crawler's addresses; in AllowBot mode it is a skip rule for them.
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
	if len(p.Crawlers) > 0 {
		return p, cloudflareCrawlers(w, in, o, out, p)
	}
	set := p.crawlerSet()
	if len(set) > CloudflareMaxListItems && (out == CloudflareList || o.ListName != "") {
		return nil, fmt.Errorf("%w: %d addresses, more than the %d items an account's lists may hold", ErrListTooLong, len(set), CloudflareMaxListItems)
	}

	if out == CloudflareList {
		items := make([]cfListItem, len(set))
		comment := cfListComment(p.Mode)
		for i, q := range set {
			items[i] = cfListItem{IP: ipfmt.Prefix(q), Comment: comment}
		}
		return p, writeJSON(w, items)
	}

	expr, listName, err := cfExpression(p, o.ListName)
	if err != nil {
		return nil, err
	}
	if listName != "" && o.ListName == "" {
		p.Notes = append(p.Notes, fmt.Sprintf("the %s do not fit in a %d-character expression: the rule refers to the list $%s; upload it with --cloudflare-output list (or name another with --cloudflare-list-name)",
			plural(len(set), "address", "addresses"), CloudflareMaxExpression, listName))
	}
	if out == CloudflareExpression {
		_, err := io.WriteString(w, expr+"\n")
		return p, err
	}

	rule := cfRule{Expression: expr, Enabled: true}
	switch p.Mode {
	case BlockSpoofed:
		rule.Action = "block"
		rule.Description = fmt.Sprintf("lohibot-audit: block %s claims from addresses that are not the crawler's, and all requests from %s seen spoofing it", Token, plural(len(set), "address", "addresses"))
	case BlockBot:
		rule.Action = "block"
		rule.Description = fmt.Sprintf("lohibot-audit: block the %s crawler's %s", Token, plural(len(set), "address", "addresses"))
	case AllowBot:
		rule.Action = "skip"
		rule.ActionParameters = &cfActionParameters{Ruleset: "current", Phases: cfSkipPhases, Products: cfSkipProducts}
		rule.Description = fmt.Sprintf("lohibot-audit: let the %s crawler's %s skip the remaining custom rules, managed rules, rate limiting and bot rules", Token, plural(len(set), "address", "addresses"))
	}
	rs := cfRuleset{
		Description: cfRulesetDescription(in, p.Mode),
		Rules:       []cfRule{rule},
	}
	return p, writeJSON(w, rs)
}

// cfListComment is the comment every list item carries.
func cfListComment(m Mode) string { return cfCrawlerComment(m, Token) }

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

// cfExpression builds the rule expression. With listName set, the mode's
// address set is "$listName"; otherwise it goes inline unless that makes
// the expression too long, when it becomes the mode's default list. It
// returns the list the expression refers to, if any.
func cfExpression(p *Plan, listName string) (expr, usedList string, err error) {
	build := func(setRef string) (string, error) {
		switch p.Mode {
		case BlockSpoofed:
			if len(p.Exempt) == 0 {
				return "", fmt.Errorf("%w: no genuine address and an empty IP list: a rule blocking %s from every other address would block the crawler itself", ErrNoCrawlerAddresses, Token)
			}
			token := "lower(http.user_agent) contains " + cfQuote(tokenLower) + " and not ip.src in " + cfInline(p.Exempt)
			if setRef == "" {
				return token, nil
			}
			return "(" + token + ") or ip.src in " + setRef, nil
		default:
			if setRef == "" {
				return "", fmt.Errorf("%w: no crawler address left to match", ErrNoCrawlerAddresses)
			}
			return "ip.src in " + setRef, nil
		}
	}
	set := p.crawlerSet()
	if listName != "" {
		e, err := build("$" + listName)
		return e, listName, err
	}
	inline := ""
	if len(set) > 0 {
		inline = cfInline(set)
	}
	e, err := build(inline)
	if err != nil {
		return "", "", err
	}
	if len(e) <= CloudflareMaxExpression {
		return e, "", nil
	}
	name := DefaultCloudflareListName(p.Mode)
	if len(set) > CloudflareMaxListItems {
		return "", "", fmt.Errorf("%w: %d addresses, more than the %d items an account's lists may hold", ErrListTooLong, len(set), CloudflareMaxListItems)
	}
	e, err = build("$" + name)
	if err != nil {
		return "", "", err
	}
	if len(e) > CloudflareMaxExpression {
		return "", "", fmt.Errorf("%w: %d characters with the crawler's %s inline", ErrExpressionTooLong, len(e), plural(len(p.Exempt), "address", "addresses"))
	}
	return e, name, nil
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
