package watch

import (
	"context"
	"net/netip"
	"sync"
	"time"

	"github.com/lohisoft/lohibot-audit/verify"
)

// Defaults of VerifierChecker.
const (
	// DefaultGenerationSize is how many addresses one verifier judges
	// before a fresh one takes over.
	DefaultGenerationSize = 4096
)

// VerifierChecker is a Checker over verify.Verifier values. A Verifier
// keeps each result for its lifetime, which suits a run that ends but
// neither re-judging nor months of following: so each verifier judges at
// most Size addresses, or for at most MaxAge, before a new one from New
// takes over. Answers outlive the verifiers in the DNS cache that New
// gives them, each for its TTL.
type VerifierChecker struct {
	// New makes a verifier; SetNew replaces it (a reloaded IP list).
	New func() *verify.Verifier
	// Size and MaxAge bound a verifier's work; zero means
	// DefaultGenerationSize and DefaultVerdictTTL / 2.
	Size   int
	MaxAge time.Duration
	// Now is the clock; nil means time.Now.
	Now func() time.Time

	mu   sync.Mutex
	cur  *verify.Verifier
	born time.Time
	// done are the addresses the current verifier has judged: it would
	// give the same answer again, so judging one again takes a new one.
	done map[netip.Addr]bool
}

// SetNew replaces the factory; the next check uses a verifier it makes.
func (c *VerifierChecker) SetNew(f func() *verify.Verifier) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.New, c.cur = f, nil
}

// Verifier returns the verifier in use (for its warnings).
func (c *VerifierChecker) Verifier() *verify.Verifier {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.current(netip.Addr{})
}

// current returns the verifier to judge a with.
func (c *VerifierChecker) current(a netip.Addr) *verify.Verifier {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	size, age := c.Size, c.MaxAge
	if size <= 0 {
		size = DefaultGenerationSize
	}
	if age <= 0 {
		age = DefaultVerdictTTL / 2
	}
	t := now()
	if c.cur == nil || len(c.done) >= size || t.Sub(c.born) >= age || c.done[a] {
		c.cur, c.born, c.done = c.New(), t, map[netip.Addr]bool{}
	}
	return c.cur
}

// Check verifies a with the verifier of the current generation.
func (c *VerifierChecker) Check(ctx context.Context, a netip.Addr) verify.Result {
	c.mu.Lock()
	v := c.current(a)
	c.done[a] = true
	c.mu.Unlock()
	return v.Verify(ctx, []netip.Addr{a})[0]
}

// Listed reports whether a is in the IP list of the verifier in use: give
// it to JudgeOptions.Prefer, so that the crawler's published addresses
// are judged first.
func (c *VerifierChecker) Listed(a netip.Addr) bool {
	v := c.Verifier()
	return v != nil && v.List.Contains(a)
}
