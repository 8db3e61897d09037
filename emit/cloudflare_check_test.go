package emit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
)

// The Cloudflare output is checked against the field shapes of
// Cloudflare's Go SDK (github.com/cloudflare/cloudflare-go, rulesets.go
// and list.go: the json tags below are the SDK's) and against the Rules
// language as Cloudflare documents it: fields, the lower() function, the
// contains, matches and in operators, quoted and raw (r"…") strings,
// inline lists {…} and $list references, not, and, or and parentheses.
// A regular expression is run with Go's engine, whose syntax the
// expressions keep to (Cloudflare runs Rust's regex engine on bytes, as
// wirefilter builds it: Unicode off, a class matches any byte). A small parser and evaluator of that subset
// lets the tests run the expressions on sample requests.

// sdkEntrypoint mirrors cloudflare-go's UpdateEntrypointRulesetParams, the
// body of PUT /zones/{zone_id}/rulesets/phases/{phase}/entrypoint.
type sdkEntrypoint struct {
	Description string    `json:"description,omitempty"`
	Rules       []sdkRule `json:"rules"`
}

// sdkRule mirrors cloudflare-go's RulesetRule (fields a custom rule may
// carry).
type sdkRule struct {
	ID               string                  `json:"id,omitempty"`
	Version          *string                 `json:"version,omitempty"`
	Action           string                  `json:"action"`
	ActionParameters *sdkActionParameters    `json:"action_parameters,omitempty"`
	Expression       string                  `json:"expression"`
	Description      string                  `json:"description,omitempty"`
	Ref              string                  `json:"ref,omitempty"`
	Enabled          *bool                   `json:"enabled,omitempty"`
	Logging          *struct{ Enabled bool } `json:"logging,omitempty"`
}

// sdkActionParameters mirrors the skip-related fields of cloudflare-go's
// RulesetRuleActionParameters.
type sdkActionParameters struct {
	Ruleset  string   `json:"ruleset,omitempty"`
	Phases   []string `json:"phases,omitempty"`
	Products []string `json:"products,omitempty"`
}

// sdkListItem mirrors cloudflare-go's ListItemCreateRequest for IP lists.
type sdkListItem struct {
	IP      *string `json:"ip,omitempty"`
	Comment string  `json:"comment,omitempty"`
}

// Documented values for custom rules (phase http_request_firewall_custom).
var (
	cfDocActions  = []string{"block", "challenge", "js_challenge", "managed_challenge", "log", "skip"}
	cfDocPhases   = []string{"http_ratelimit", "http_request_sbfm", "http_request_firewall_managed"}
	cfDocProducts = []string{"zoneLockdown", "uaBlock", "bic", "hot", "securityLevel", "rateLimit", "waf"}
)

// strictDecode decodes data into v, refusing fields v does not have and
// trailing data.
func strictDecode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// checkCFRuleset validates a ruleset body and returns its rules.
func checkCFRuleset(data []byte) ([]sdkRule, error) {
	var rs sdkEntrypoint
	if err := strictDecode(data, &rs); err != nil {
		return nil, fmt.Errorf("not an entry point ruleset body: %w", err)
	}
	if len(rs.Description) > CloudflareMaxDescription {
		return nil, fmt.Errorf("ruleset description is %d characters", len(rs.Description))
	}
	if len(rs.Rules) == 0 {
		return nil, errors.New("no rules")
	}
	for i, r := range rs.Rules {
		if !slices.Contains(cfDocActions, r.Action) {
			return nil, fmt.Errorf("rule %d: action %q is not a custom rule action", i, r.Action)
		}
		if r.Enabled == nil || !*r.Enabled {
			return nil, fmt.Errorf("rule %d: not enabled", i)
		}
		if len(r.Description) > CloudflareMaxDescription {
			return nil, fmt.Errorf("rule %d: description is %d characters", i, len(r.Description))
		}
		if r.ID != "" || r.Version != nil || r.Ref != "" {
			return nil, fmt.Errorf("rule %d: carries server-side fields", i)
		}
		if (r.Action == "skip") != (r.ActionParameters != nil) {
			return nil, fmt.Errorf("rule %d: action_parameters go with skip and only with skip", i)
		}
		if ap := r.ActionParameters; ap != nil {
			if ap.Ruleset != "" && ap.Ruleset != "current" {
				return nil, fmt.Errorf("rule %d: ruleset %q", i, ap.Ruleset)
			}
			for _, ph := range ap.Phases {
				if !slices.Contains(cfDocPhases, ph) {
					return nil, fmt.Errorf("rule %d: phase %q cannot be skipped", i, ph)
				}
			}
			for _, pr := range ap.Products {
				if !slices.Contains(cfDocProducts, pr) {
					return nil, fmt.Errorf("rule %d: product %q cannot be skipped", i, pr)
				}
			}
		}
		if len(r.Expression) > CloudflareMaxExpression {
			return nil, fmt.Errorf("rule %d: expression is %d characters", i, len(r.Expression))
		}
		if _, err := parseCFExpr(r.Expression); err != nil {
			return nil, fmt.Errorf("rule %d: %w", i, err)
		}
	}
	return rs.Rules, nil
}

// checkCFList validates Lists API items and returns their prefixes.
func checkCFList(data []byte) ([]netip.Prefix, error) {
	var items []sdkListItem
	if err := strictDecode(data, &items); err != nil {
		return nil, fmt.Errorf("not a list of IP list items: %w", err)
	}
	if items == nil {
		return nil, errors.New("null instead of an array")
	}
	if len(items) > CloudflareMaxListItems {
		return nil, fmt.Errorf("%d items", len(items))
	}
	var out []netip.Prefix
	for i, it := range items {
		if it.IP == nil {
			return nil, fmt.Errorf("item %d: no ip", i)
		}
		p, err := cfListPrefix(*it.IP)
		if err != nil {
			return nil, fmt.Errorf("item %d: %w", i, err)
		}
		if it.Comment == "" || len(it.Comment) > CloudflareMaxDescription {
			return nil, fmt.Errorf("item %d: comment of %d characters", i, len(it.Comment))
		}
		out = append(out, p)
	}
	return out, nil
}

// cfListPrefix parses an IP list item as Cloudflare documents them:
// an IPv4 address or /8 to /32 range; an IPv6 range of /4 to /64 (older
// documentation) or up to /128 (newer).
func cfListPrefix(s string) (netip.Prefix, error) {
	if a, err := netip.ParseAddr(s); err == nil {
		if a.Is4() || a.Is6() && !a.Is4In6() && a.Zone() == "" {
			return netip.PrefixFrom(a, a.BitLen()), nil
		}
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return netip.Prefix{}, fmt.Errorf("ip %q is neither an address nor a CIDR range", s)
	}
	if p != p.Masked() {
		return netip.Prefix{}, fmt.Errorf("ip %q has host bits set", s)
	}
	if p.Addr().Is4() && (p.Bits() < 8 || p.Bits() > 32) || p.Addr().Is6() && p.Bits() < 4 {
		return netip.Prefix{}, fmt.Errorf("ip %q: prefix length out of range", s)
	}
	return p, nil
}

// cfNode is a parsed expression: a logical operation or a comparison.
type cfNode struct {
	op          string // "and", "or", "not", "contains", "in"
	left, right *cfNode
	field       string         // the field, for comparisons
	lower       bool           // field wrapped in lower()
	str         string         // contains: the string
	re          *regexp.Regexp // matches: the regular expression
	set         []netip.Prefix
	list        string // in: the $list name, when not inline
}

var cfFields = map[string]string{"http.user_agent": "string", "ip.src": "ip"}

type cfParser struct {
	toks []string
	pos  int
}

// parseCFExpr parses the subset of the Rules language the emitter writes
// and rejects anything else.
func parseCFExpr(s string) (*cfNode, error) {
	toks, err := cfTokens(s)
	if err != nil {
		return nil, err
	}
	p := &cfParser{toks: toks}
	n, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.pos != len(toks) {
		return nil, fmt.Errorf("unexpected %q after the expression", toks[p.pos])
	}
	return n, nil
}

func cfTokens(s string) ([]string, error) {
	var toks []string
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ':
			i++
		case strings.IndexByte("(){}", c) >= 0:
			toks = append(toks, string(c))
			i++
		case c == 'r' && i+1 < len(s) && s[i+1] == '"':
			// A raw string: no escapes, up to the next double quote.
			j := strings.IndexByte(s[i+2:], '"')
			if j < 0 {
				return nil, errors.New("unterminated raw string")
			}
			raw := s[i : i+2+j+1]
			if strings.IndexFunc(raw, func(r rune) bool { return r < 0x20 || r > unicode.MaxASCII }) >= 0 {
				return nil, fmt.Errorf("control or non-ASCII byte in raw string at %d", i)
			}
			toks = append(toks, raw)
			i += len(raw)
		case c == '"':
			j := i + 1
			for ; j < len(s) && s[j] != '"'; j++ {
				if s[j] == '\\' {
					if j+1 >= len(s) || (s[j+1] != '"' && s[j+1] != '\\') {
						return nil, fmt.Errorf("bad escape in string at %d", j)
					}
					j++
				} else if s[j] < 0x20 {
					return nil, fmt.Errorf("control byte in string at %d", j)
				}
			}
			if j >= len(s) {
				return nil, errors.New("unterminated string")
			}
			toks = append(toks, s[i:j+1])
			i = j + 1
		default:
			j := i
			for j < len(s) && strings.IndexByte(" (){}\"", s[j]) < 0 {
				if s[j] > unicode.MaxASCII || s[j] < 0x20 {
					return nil, fmt.Errorf("byte %#x at %d", s[j], j)
				}
				j++
			}
			toks = append(toks, s[i:j])
			i = j
		}
	}
	return toks, nil
}

func (p *cfParser) peek() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return ""
}

func (p *cfParser) next() string {
	t := p.peek()
	p.pos++
	return t
}

func (p *cfParser) expect(t string) error {
	if got := p.next(); got != t {
		return fmt.Errorf("want %q, got %q", t, got)
	}
	return nil
}

func (p *cfParser) or() (*cfNode, error) {
	l, err := p.and()
	for err == nil && p.peek() == "or" {
		p.next()
		var r *cfNode
		if r, err = p.and(); err == nil {
			l = &cfNode{op: "or", left: l, right: r}
		}
	}
	return l, err
}

func (p *cfParser) and() (*cfNode, error) {
	l, err := p.not()
	for err == nil && p.peek() == "and" {
		p.next()
		var r *cfNode
		if r, err = p.not(); err == nil {
			l = &cfNode{op: "and", left: l, right: r}
		}
	}
	return l, err
}

func (p *cfParser) not() (*cfNode, error) {
	if p.peek() == "not" {
		p.next()
		n, err := p.not()
		return &cfNode{op: "not", left: n}, err
	}
	if p.peek() == "(" {
		p.next()
		n, err := p.or()
		if err != nil {
			return nil, err
		}
		return n, p.expect(")")
	}
	return p.comparison()
}

func (p *cfParser) comparison() (*cfNode, error) {
	n := &cfNode{}
	f := p.next()
	if f == "lower" {
		if err := p.expect("("); err != nil {
			return nil, err
		}
		n.lower, f = true, p.next()
		if err := p.expect(")"); err != nil {
			return nil, err
		}
	}
	typ, ok := cfFields[f]
	if !ok {
		return nil, fmt.Errorf("unknown field %q", f)
	}
	if n.lower && typ != "string" {
		return nil, fmt.Errorf("lower() of %s field %s", typ, f)
	}
	n.field, n.op = f, p.next()
	switch {
	case n.op == "contains" && typ == "string":
		s := p.next()
		if len(s) < 2 || s[0] != '"' {
			return nil, fmt.Errorf("contains wants a string, got %q", s)
		}
		n.str = strings.NewReplacer(`\"`, `"`, `\\`, `\`).Replace(s[1 : len(s)-1])
	case n.op == "matches" && typ == "string":
		s := p.next()
		if len(s) < 3 || !strings.HasPrefix(s, `r"`) {
			return nil, fmt.Errorf("matches wants a raw string, got %q", s)
		}
		re, err := regexp.Compile(s[2 : len(s)-1])
		if err != nil {
			return nil, fmt.Errorf("matches: %w", err)
		}
		n.re = re
	case n.op == "in" && typ == "ip":
		if t := p.peek(); strings.HasPrefix(t, "$") {
			p.next()
			if !cfListName.MatchString(t[1:]) {
				return nil, fmt.Errorf("bad list name %q", t)
			}
			n.list = t[1:]
			return n, nil
		}
		if err := p.expect("{"); err != nil {
			return nil, err
		}
		for p.peek() != "}" {
			t := p.next()
			if t == "" {
				return nil, errors.New("unterminated {")
			}
			q, err := netip.ParsePrefix(t)
			if err != nil {
				a, err2 := netip.ParseAddr(t)
				if err2 != nil || a.Zone() != "" {
					return nil, fmt.Errorf("bad address %q in set", t)
				}
				q = netip.PrefixFrom(a, a.BitLen())
			}
			n.set = append(n.set, q)
		}
		p.next()
		if len(n.set) == 0 {
			return nil, errors.New("empty set")
		}
	default:
		return nil, fmt.Errorf("operator %q on %s field %s", n.op, typ, f)
	}
	return n, nil
}

// cfRequest is what an expression is evaluated against.
type cfRequest struct {
	ip netip.Addr
	ua string
}

// eval runs the expression on a request; lists maps list names to items.
func (n *cfNode) eval(r cfRequest, lists map[string][]netip.Prefix) bool {
	switch n.op {
	case "and":
		return n.left.eval(r, lists) && n.right.eval(r, lists)
	case "or":
		return n.left.eval(r, lists) || n.right.eval(r, lists)
	case "not":
		return !n.left.eval(r, lists)
	case "contains", "matches":
		v := r.ua
		if n.lower {
			v = lowerASCII(v)
		}
		if n.re != nil {
			return n.re.MatchString(v)
		}
		return strings.Contains(v, n.str)
	case "in":
		set := n.set
		if n.list != "" {
			set = lists[n.list]
		}
		for _, q := range set {
			if q.Contains(r.ip) {
				return true
			}
		}
	}
	return false
}

// cfLargeInput is largeInput with the fixture's few crawler addresses:
// thousands of spoofers, but a crawler that fits in an expression.
func cfLargeInput(m Mode) Input {
	in := largeInput(m)
	in.one().Genuine = fixtureInput(m).Crawlers[0].Genuine
	return in
}

// TestCloudflareShapes checks every mode's ruleset and list against the
// SDK's field shapes and the documented values and limits.
func TestCloudflareShapes(t *testing.T) {
	inputs := map[string]func(Mode) Input{"fixture": fixtureInput, "hostile": hostileInput, "large": cfLargeInput}
	for _, mode := range Modes {
		for inName, mk := range inputs {
			t.Run(string(mode)+"/"+inName, func(t *testing.T) {
				for _, o := range []CloudflareOptions{{}, {ListName: "site_list"}} {
					var buf bytes.Buffer
					if _, err := Cloudflare(&buf, mk(mode), o); err != nil {
						t.Fatal(err)
					}
					if _, err := checkCFRuleset(buf.Bytes()); err != nil {
						t.Errorf("ruleset (list %q): %v\n%s", o.ListName, err, head(buf.String(), 20))
					}
				}
				var list bytes.Buffer
				if _, err := Cloudflare(&list, mk(mode), CloudflareOptions{Output: CloudflareList}); err != nil {
					t.Fatal(err)
				}
				if _, err := checkCFList(list.Bytes()); err != nil {
					t.Errorf("list: %v", err)
				}
				var expr bytes.Buffer
				if _, err := Cloudflare(&expr, mk(mode), CloudflareOptions{Output: CloudflareExpression}); err != nil {
					t.Fatal(err)
				}
				e := strings.TrimSuffix(expr.String(), "\n")
				if strings.Contains(e, "\n") || len(e) > CloudflareMaxExpression {
					t.Errorf("expression is not one line within %d characters: %d", CloudflareMaxExpression, len(e))
				}
				if _, err := parseCFExpr(e); err != nil {
					t.Errorf("expression: %v\n%s", err, e)
				}
			})
		}
	}
}

// TestCloudflareCheckerRejects shows the checks catch what they must.
func TestCloudflareCheckerRejects(t *testing.T) {
	exprs := []string{
		`http.user_agent contains "x`,
		`ip.src in {1.2.3.4`,
		`ip.src in {1.2.3.999}`,
		`ip.src in {}`,
		`ip.src contains "x"`,
		`lower(ip.src) in {1.2.3.4}`,
		`http.user_agent contains "a" and`,
		`(ip.src in {1.2.3.4}`,
		`ip.src in $Bad-Name`,
		`http.user_agent contains "a\n"`,
		`http.user_agnet contains "a"`,
		`http.user_agent matches "a"`,
		`http.user_agent matches r"a(b"`,
		`http.user_agent matches r"ab`,
		`ip.src matches r"a"`,
	}
	for _, e := range exprs {
		if _, err := parseCFExpr(e); err == nil {
			t.Errorf("parseCFExpr(%q) accepted it", e)
		}
	}
	rulesets := []string{
		`{"rules":[{"action":"block","expression":"ip.src in {1.2.3.4}","enabled":true,"colour":"red"}]}`,
		`{"rules":[{"action":"allow","expression":"ip.src in {1.2.3.4}","enabled":true}]}`,
		`{"rules":[{"action":"block","expression":"ip.src in {1.2.3.4}","enabled":true,"action_parameters":{"ruleset":"current"}}]}`,
		`{"rules":[{"action":"skip","expression":"ip.src in {1.2.3.4}","enabled":true,"action_parameters":{"phases":["http_request_firewall_custom"]}}]}`,
		`{"rules":[{"action":"block","expression":"ip.src in {1.2.3.4}"}]}`,
		`{"rules":[]}`,
	}
	for _, r := range rulesets {
		if _, err := checkCFRuleset([]byte(r)); err == nil {
			t.Errorf("checkCFRuleset accepted %s", r)
		}
	}
	lists := []string{`null`, `[{"ip":"10.0.0.0/4","comment":"x"}]`, `[{"ip":"1.2.3.4/24","comment":"x"}]`, `[{"ip":"1.2.3.4"}]`, `[{"ip":"1.2.3.4","comment":"x","asn":1}]`}
	for _, l := range lists {
		if _, err := checkCFList([]byte(l)); err == nil {
			t.Errorf("checkCFList accepted %s", l)
		}
	}
}

// TestCloudflareSemantics evaluates each mode's expression on requests.
func TestCloudflareSemantics(t *testing.T) {
	crawlerUA := "LohiSoftBot/1.0 (+https://lohisoft.com/bot)"
	browser := "Mozilla/5.0 (X11; Linux x86_64)"
	cases := []struct {
		mode Mode
		ip   string
		ua   string
		want bool
	}{
		{BlockSpoofed, "79.139.58.98", crawlerUA, false},
		{BlockSpoofed, "198.51.100.200", crawlerUA, false}, // genuine, not listed
		{BlockSpoofed, "198.51.100.1", crawlerUA, true},    // an impostor never seen
		{BlockSpoofed, "198.51.100.1", "mozilla/5.0 (compatible; LOHISOFTBOT/2.0)", true},
		{BlockSpoofed, "198.51.100.1", browser, false},
		{BlockSpoofed, "203.0.113.7", browser, true}, // a spoofer seen: everything blocked
		{BlockSpoofed, "2001:db8:bad::99", browser, true},
		{BlockSpoofed, "192.0.2.10", browser, false}, // never-block
		{BlockSpoofed, "10.0.0.5", browser, false},   // private
		{BlockBot, "79.139.58.121", browser, true},
		{BlockBot, "198.51.100.200", crawlerUA, true},
		{BlockBot, "203.0.113.7", crawlerUA, false},
		{AllowBot, "79.139.58.98", crawlerUA, true},
		{AllowBot, "203.0.113.7", crawlerUA, false},
	}
	for _, c := range cases {
		for _, o := range []CloudflareOptions{{Output: CloudflareExpression}, {Output: CloudflareExpression, ListName: "lohibot_list"}} {
			name := fmt.Sprintf("%s/%s/%q/list=%q", c.mode, c.ip, c.ua, o.ListName)
			t.Run(name, func(t *testing.T) {
				in := fixtureInput(c.mode)
				var expr, list bytes.Buffer
				if _, err := Cloudflare(&expr, in, o); err != nil {
					t.Fatal(err)
				}
				if _, err := Cloudflare(&list, in, CloudflareOptions{Output: CloudflareList}); err != nil {
					t.Fatal(err)
				}
				items, err := checkCFList(list.Bytes())
				if err != nil {
					t.Fatal(err)
				}
				n, err := parseCFExpr(strings.TrimSpace(expr.String()))
				if err != nil {
					t.Fatal(err)
				}
				got := n.eval(cfRequest{netip.MustParseAddr(c.ip), c.ua}, map[string][]netip.Prefix{"lohibot_list": items})
				if got != c.want {
					t.Errorf("matches = %v, want %v; expression: %s", got, c.want, expr.String())
				}
			})
		}
	}
}

// TestCloudflareListFallback checks that a block set too long for an
// inline expression moves to the default list, with a note, and that the
// list output holds it.
func TestCloudflareListFallback(t *testing.T) {
	in := cfLargeInput(BlockSpoofed)
	var buf bytes.Buffer
	p, err := Cloudflare(&buf, in, CloudflareOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rules, err := checkCFRuleset(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasSuffix(rules[0].Expression, " or ip.src in $lohibot_spoofed") {
		t.Errorf("expression does not refer to the default list: %.200s", rules[0].Expression)
	}
	if len(p.Notes) != 1 || !strings.Contains(p.Notes[0], "$lohibot_spoofed") {
		t.Errorf("notes = %q, want one naming the list", p.Notes)
	}
	var list bytes.Buffer
	if _, err := Cloudflare(&list, in, CloudflareOptions{Output: CloudflareList}); err != nil {
		t.Fatal(err)
	}
	items, err := checkCFList(list.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != len(p.Block) || len(items) < 3000 {
		t.Errorf("list has %d items, plan blocks %d", len(items), len(p.Block))
	}
}

// TestCloudflareLimits checks the errors past Cloudflare's limits.
func TestCloudflareLimits(t *testing.T) {
	many := Input{Mode: BlockSpoofed, Crawlers: []CrawlerInput{{Tokens: lohiTokens, Listed: prefixes("79.139.58.98/32")}}}
	for i := 0; i <= CloudflareMaxListItems; i++ {
		many.one().Spoofed = append(many.one().Spoofed, netip.AddrFrom4([4]byte{45, 18, byte(i / 256), byte(i)}), netip.AddrFrom4([4]byte{45, 19, byte(i / 256), byte(i)}))
	}
	hugeExempt := Input{Mode: BlockSpoofed}
	for i := 0; i < 400; i++ {
		hugeExempt.one().Genuine = append(hugeExempt.one().Genuine, netip.AddrFrom4([4]byte{192, 0, 2 + byte(i/250), byte(i%250 + 1)}))
	}
	cases := []struct {
		name string
		in   Input
		o    CloudflareOptions
		want error
	}{
		{"list too long", many, CloudflareOptions{Output: CloudflareList}, ErrListTooLong},
		{"ruleset needs too long a list", many, CloudflareOptions{}, ErrListTooLong},
		{"named list too long", many, CloudflareOptions{ListName: "x"}, ErrListTooLong},
		{"exempt set too long", hugeExempt, CloudflareOptions{}, ErrExpressionTooLong},
		{"no crawler addresses", Input{Mode: BlockSpoofed, Crawlers: []CrawlerInput{{Tokens: lohiTokens, Spoofed: addrs("203.0.113.7")}}}, CloudflareOptions{}, ErrNoCrawlerAddresses},
		{"nothing to allow", Input{Mode: AllowBot}, CloudflareOptions{}, ErrNoCrawlerAddresses},
		{"bad list name", fixtureInput(BlockSpoofed), CloudflareOptions{ListName: "Bad-Name"}, ErrBadOption},
		{"long list name", fixtureInput(BlockSpoofed), CloudflareOptions{ListName: strings.Repeat("a", 51)}, ErrBadOption},
		{"bad output", fixtureInput(BlockSpoofed), CloudflareOptions{Output: "terraform"}, ErrBadOption},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			_, err := Cloudflare(&buf, c.in, c.o)
			if !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
			if buf.Len() != 0 {
				t.Errorf("wrote %d bytes despite the error", buf.Len())
			}
		})
	}
}

// TestCloudflareTokenMatching runs the token rules of several crawlers on
// User-Agents from an address that is no crawler's nor a spoofer's. With
// Matches, a request is blocked exactly when the audit reads a claim in
// its User-Agent; with contains (every plan), whenever a token is a
// substring: never less than the audit claims, and more on near misses.
func TestCloudflareTokenMatching(t *testing.T) {
	in := crawlersInput(BlockSpoofed)
	var judges []claimJudges
	for _, c := range in.Crawlers {
		judges = append(judges, newClaimJudges(t, c.Tokens))
	}
	claimed := func(ua string) bool {
		return slices.ContainsFunc(judges, func(j claimJudges) bool { return j.reader(ua) })
	}
	blocked := func(t *testing.T, o CloudflareOptions) func(string) bool {
		var buf bytes.Buffer
		if _, err := Cloudflare(&buf, in, o); err != nil {
			t.Fatal(err)
		}
		rules, err := checkCFRuleset(buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		var nodes []*cfNode
		for _, r := range rules {
			if strings.Contains(r.Expression, " matches ") != o.Matches {
				t.Fatalf("Matches %v, expression %s", o.Matches, r.Expression)
			}
			n, _ := parseCFExpr(r.Expression)
			nodes = append(nodes, n)
		}
		return func(ua string) bool {
			req := cfRequest{netip.MustParseAddr("198.51.100.1"), ua}
			return slices.ContainsFunc(nodes, func(n *cfNode) bool { return n.eval(req, nil) })
		}
	}
	uas := append(slices.Clone(agreementUAs), "Googlebot/2.1", "NotGooglebot", "Googlebot-Image/1.0", "ExampleBot-Image/1.0", "ExampleBot-Imagery/1.0")
	exact, contains := blocked(t, CloudflareOptions{Matches: true}), blocked(t, CloudflareOptions{})
	over := 0
	for _, ua := range uas {
		want := claimed(ua)
		if got := exact(ua); got != want {
			t.Errorf("matches: User-Agent %q blocked %v, the audit claims %v", ua, got, want)
		}
		switch got := contains(ua); {
		case want && !got:
			t.Errorf("contains: User-Agent %q not blocked, though the audit reads a claim", ua)
		case got && !want:
			over++
		}
	}
	if over < 5 {
		t.Errorf("contains over-matched %d User-Agents, want the near misses (NotLohiSoftBotX, …)", over)
	}
}
