package emit

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strings"

	"github.com/lohisoft/lohibot-audit/internal/ipfmt"
)

// DefaultCloudflareListPrefix starts the names of the lists that rules
// for several crawlers refer to, unless CloudflareOptions.ListName gives
// another prefix.
const DefaultCloudflareListPrefix = "lohibot"

// cfCrawlerLists names one crawler's lists: set for the mode's address set
// (PREFIX_NAME_spoofed in block-spoofed mode, PREFIX_NAME_crawler in the
// others) and exempt for the addresses its token rule spares
// (PREFIX_NAME_exempt), the crawler's '-' written '_'.
func cfCrawlerLists(prefix, name string, m Mode) (set, exempt string, err error) {
	base := prefix + "_" + strings.ReplaceAll(name, "-", "_")
	set = base + "_crawler"
	if m == BlockSpoofed {
		set = base + "_spoofed"
	}
	exempt = base + "_exempt"
	for _, n := range []string{set, exempt} {
		if !cfListName.MatchString(n) {
			return "", "", fmt.Errorf("%w: cloudflare list name %q for crawler %s is longer than 50 characters: give a shorter --cloudflare-list-name", ErrBadOption, n, name)
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

// cfCrawlerExpression builds the rule of crawler c. With listed set, the
// mode's address set is always its list; otherwise it goes inline unless
// that makes the expression too long, when it moves to its list, and then
// the exempt set to its own list too.
func cfCrawlerExpression(p *Plan, c *CrawlerPlan, prefix string, listed bool) (cfCrawlerRule, error) {
	r := cfCrawlerRule{crawler: c}
	setList, exemptList, err := cfCrawlerLists(prefix, c.Name, p.Mode)
	if err != nil {
		return r, err
	}
	set := c.crawlerSet(p.Mode)
	setItems := cfNamedList{name: setList, items: set, comment: cfCrawlerComment(p.Mode, c.Name)}
	exemptItems := cfNamedList{name: exemptList, items: c.Exempt, comment: "lohibot-audit block-spoofed: " + c.Name + " crawler address, spared from the token rule"}
	build := func(setRef, exemptRef string) string {
		if p.Mode != BlockSpoofed {
			return "ip.src in " + setRef
		}
		claims := make([]string, len(c.Tokens))
		for i, t := range c.Tokens {
			claims[i] = "lower(http.user_agent) contains " + cfQuote(t)
		}
		token := strings.Join(claims, " or ")
		if len(claims) > 1 {
			token = "(" + token + ")"
		}
		token += " and not ip.src in " + exemptRef
		if setRef == "" {
			return token
		}
		return "(" + token + ") or ip.src in " + setRef
	}
	if p.Mode == BlockSpoofed && len(c.Exempt) == 0 {
		return r, fmt.Errorf("%w: %s has no genuine address and an empty IP list: a rule blocking its tokens from every other address would block the crawler itself", ErrNoCrawlerAddresses, c.Name)
	}
	if p.Mode != BlockSpoofed && len(set) == 0 && !listed {
		return r, fmt.Errorf("%w: no %s address left to match", ErrNoCrawlerAddresses, c.Name)
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

// cloudflareCrawlers writes the Cloudflare output of a Plan for several
// crawlers: one rule per crawler, in the crawlers' order. The list output
// is a JSON object from list name to that list's items, for every list a
// rule refers to and every crawler's address-set list.
func cloudflareCrawlers(w io.Writer, in Input, o CloudflareOptions, out CloudflareOutput, p *Plan) error {
	prefix := o.ListName
	if prefix == "" {
		prefix = DefaultCloudflareListPrefix
	}
	listed := o.ListName != "" || out == CloudflareList
	if p.Mode == BlockSpoofed {
		if err := needTokens(p.Crawlers); err != nil {
			return err
		}
	}
	rules := make([]cfCrawlerRule, len(p.Crawlers))
	empty := 0
	for i := range p.Crawlers {
		c := &p.Crawlers[i]
		r, err := cfCrawlerExpression(p, c, prefix, listed)
		if err != nil && !(errors.Is(err, ErrNoCrawlerAddresses) && p.Mode != BlockSpoofed) {
			return err
		}
		if err != nil {
			empty++
			p.Notes = append(p.Notes, fmt.Sprintf("%s: no address left to match: no rule for it", c.Name))
			r = cfCrawlerRule{crawler: c}
		}
		rules[i] = r
	}
	if empty == len(rules) {
		return fmt.Errorf("%w: no crawler address left to match", ErrNoCrawlerAddresses)
	}
	total := 0
	for _, r := range rules {
		for _, l := range r.lists {
			total += len(l.items)
			if out != CloudflareList && o.ListName == "" {
				p.Notes = append(p.Notes, fmt.Sprintf("%s: the %s do not fit in a %d-character expression: the rule refers to the list $%s; upload it with --cloudflare-output list",
					r.crawler.Name, plural(len(l.items), "address", "addresses"), CloudflareMaxExpression, l.name))
			}
		}
	}
	if total > CloudflareMaxListItems {
		return fmt.Errorf("%w: %d addresses in the lists, more than the %d items an account's lists may hold", ErrListTooLong, total, CloudflareMaxListItems)
	}

	switch out {
	case CloudflareList:
		lists := map[string][]cfListItem{}
		for _, r := range rules {
			for _, l := range r.lists {
				items := make([]cfListItem, len(l.items))
				for i, q := range l.items {
					items[i] = cfListItem{IP: ipfmt.Prefix(q), Comment: l.comment}
				}
				lists[l.name] = items
			}
		}
		return writeJSON(w, lists)
	case CloudflareExpression:
		var b strings.Builder
		for _, r := range rules {
			if r.expr != "" {
				b.WriteString(r.expr + "\n")
			}
		}
		_, err := io.WriteString(w, b.String())
		return err
	}
	rs := cfRuleset{Description: cfRulesetDescription(in, p.Mode)}
	for _, r := range rules {
		if r.expr == "" {
			continue
		}
		c := r.crawler
		n := plural(len(c.crawlerSet(p.Mode)), "address", "addresses")
		rule := cfRule{Expression: r.expr, Enabled: true, Action: "block"}
		switch p.Mode {
		case BlockSpoofed:
			rule.Description = fmt.Sprintf("lohibot-audit %s: block %s claims (User-Agent %s) from addresses that are not the crawler's, and all requests from %s seen spoofing it",
				c.Name, c.Name, strings.Join(c.Tokens, ", "), n)
		case BlockBot:
			rule.Description = fmt.Sprintf("lohibot-audit %s: block the %s crawler's %s", c.Name, c.Name, n)
		case AllowBot:
			rule.Action = "skip"
			rule.ActionParameters = &cfActionParameters{Ruleset: "current", Phases: cfSkipPhases, Products: cfSkipProducts}
			rule.Description = fmt.Sprintf("lohibot-audit %s: let the %s crawler's %s skip the remaining custom rules, managed rules, rate limiting and bot rules", c.Name, c.Name, n)
		}
		if len(rule.Description) > CloudflareMaxDescription {
			rule.Description = rule.Description[:CloudflareMaxDescription-3] + "..."
		}
		rs.Rules = append(rs.Rules, rule)
	}
	return writeJSON(w, rs)
}
