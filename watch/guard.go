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
	if r.Verdict != verify.Spoofed || !r.Addr.IsValid() {
		return netip.Addr{}, "verdict"
	}
	plan, err := emit.NewPlan(g.input(r.Addr))
	if err != nil {
		return netip.Addr{}, err.Error()
	}
	if len(plan.Block) == 1 && plan.Block[0].IsSingleIP() {
		return plan.Block[0].Addr(), ""
	}
	if len(plan.Skipped) > 0 {
		return netip.Addr{}, string(plan.Skipped[0].Reason)
	}
	return netip.Addr{}, "invalid"
}

// input is the plan's input for the spoofing address a: the IP lists, the
// genuine addresses known now and the never-block prefixes.
func (g *Guard) input(a netip.Addr) emit.Input {
	g.mu.Lock()
	// Every crawler's addresses as one: none may be blocked.
	c := emit.CrawlerInput{Spoofed: []netip.Addr{a}, Listed: g.list}
	never := g.never
	proxies := g.proxies
	g.mu.Unlock()
	if g.genuine != nil {
		c.Genuine = g.genuine()
	}
	return emit.Input{Mode: emit.BlockSpoofed, Crawlers: []emit.CrawlerInput{c}, NeverBlock: never, Proxies: proxies}
}
