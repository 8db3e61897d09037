package watch

import (
	"net/netip"
	"sync"

	"github.com/lohisoft/lohibot-audit/emit"
	"github.com/lohisoft/lohibot-audit/proxy"
	"github.com/lohisoft/lohibot-audit/verify"
)

// Guard decides whether a judged address may be acted on. It applies the
// safety rules of SPEC §6 through emit.NewPlan, the code the rule files
// are made with, so that live blocking and `emit` never disagree: an
// address is blocked only when its verdict is spoofed and the plan for it
// alone, with the crawler's IP list, the genuine addresses known now, the
// never-block prefixes and the proxies (CDN edges and trusted proxies,
// never blocked), blocks it. It is safe for concurrent use.
type Guard struct {
	mu      sync.Mutex
	list    []netip.Prefix
	never   []netip.Prefix
	proxies *proxy.Set
	// Genuine returns the addresses judged genuine now; nil means none.
	genuine func() []netip.Addr
	// held reports whether an operator unblocked an address (SetHeld).
	held func(netip.Addr) bool
}

// WhyUnblocked is why Blockable refuses an address an operator unblocked.
const WhyUnblocked = "unblocked by an operator"

// SetHeld gives the guard the addresses an operator unblocked: held
// reports whether one is held out of blocking now. An operator's word
// beats a verdict: such an address is never blocked.
func (g *Guard) SetHeld(held func(netip.Addr) bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.held = held
}

// NewGuard returns a guard with the crawler's IP list, the prefixes never
// to block, and the source of genuine addresses (nil: none).
func NewGuard(list *verify.IPList, never []netip.Prefix, genuine func() []netip.Addr) *Guard {
	g := &Guard{genuine: genuine}
	g.SetList(list, never)
	return g
}

// SetList replaces the IP list and the never-block prefixes (a reload).
func (g *Guard) SetList(list *verify.IPList, never []netip.Prefix) {
	g.SetLists([]*verify.IPList{list}, never)
}

// SetLists is SetList for several crawlers: an address in any one's list
// is never blocked.
func (g *Guard) SetLists(lists []*verify.IPList, never []netip.Prefix) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.list = nil
	for _, l := range lists {
		if l != nil {
			g.list = append(g.list, l.Prefixes...)
		}
	}
	g.never = append([]netip.Prefix(nil), never...)
}

// SetProxies replaces the proxies (nil: the built-in CDN edges).
func (g *Guard) SetProxies(s *proxy.Set) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.proxies = s
}

// Blockable returns the address to block for r and true, or why r is not
// blocked: "verdict" when r is not spoofed, else the emit.SkipReason.
func (g *Guard) Blockable(r verify.Result) (netip.Addr, string) {
	as, whys := g.BlockableAll([]verify.Result{r})
	return as[0], whys[0]
}

// BlockableAll is Blockable for many results at once, with one plan for
// them all: the i-th address is the one to block for rs[i], or invalid
// with the reason in the i-th string. A plan for many spoofing addresses
// decides each as a plan for it alone would: in block-spoofed mode every
// address is checked on its own and blocked as a single address.
func (g *Guard) BlockableAll(rs []verify.Result) ([]netip.Addr, []string) {
	out := make([]netip.Addr, len(rs))
	whys := make([]string, len(rs))
	spoofed := make([]netip.Addr, 0, len(rs))
	g.mu.Lock()
	held := g.held
	g.mu.Unlock()
	for i, r := range rs {
		if r.Verdict != verify.Spoofed || !r.Addr.IsValid() {
			whys[i] = "verdict"
			continue
		}
		if held != nil && held(r.Addr.Unmap().WithZone("")) {
			whys[i] = WhyUnblocked
			continue
		}
		spoofed = append(spoofed, r.Addr)
	}
	if len(spoofed) == 0 {
		return out, whys
	}
	plan, err := emit.NewPlan(g.input(spoofed...))
	if err != nil {
		for i := range rs {
			if whys[i] == "" {
				whys[i] = err.Error()
			}
		}
		return out, whys
	}
	single := func(a netip.Addr) netip.Prefix { a = a.Unmap().WithZone(""); return netip.PrefixFrom(a, a.BitLen()) }
	block := make(map[netip.Prefix]bool, len(plan.Block))
	for _, p := range plan.Block {
		if p.IsSingleIP() {
			block[p] = true
		}
	}
	skipped := make(map[netip.Prefix]string, len(plan.Skipped))
	for _, s := range plan.Skipped {
		if _, ok := skipped[s.Prefix]; !ok {
			skipped[s.Prefix] = string(s.Reason)
		}
	}
	for i, r := range rs {
		if whys[i] != "" {
			continue
		}
		q := single(r.Addr)
		switch {
		case block[q]:
			out[i] = q.Addr()
		case skipped[q] != "":
			whys[i] = skipped[q]
		default:
			whys[i] = "invalid"
		}
	}
	return out, whys
}

// input is the plan's input for the spoofing addresses: the IP lists, the
// genuine addresses known now and the never-block prefixes.
func (g *Guard) input(spoofed ...netip.Addr) emit.Input {
	g.mu.Lock()
	// Every crawler's addresses as one: none may be blocked.
	c := emit.CrawlerInput{Spoofed: spoofed, Listed: g.list}
	never := g.never
	proxies := g.proxies
	g.mu.Unlock()
	if g.genuine != nil {
		c.Genuine = g.genuine()
	}
	return emit.Input{Mode: emit.BlockSpoofed, Crawlers: []emit.CrawlerInput{c}, NeverBlock: never, Proxies: proxies}
}
