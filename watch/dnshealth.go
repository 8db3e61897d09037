package watch

import (
	"slices"
	"sync"

	"github.com/lohisoft/lohibot-audit/verify"
	"github.com/lohisoft/lohibot-audit/watchstate"
)

// dnsBounds are the buckets of the DNS latency histogram, in seconds:
// from a loopback resolver's answer to a timeout's.
var dnsBounds = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10}

// DNSHealth follows how the resolvers fare, from every query the
// verifiers send (verify.Verifier.OnQuery): queries and failures per
// resolver, whether each answered its last query, and a histogram of the
// time queries took. It is safe for concurrent use.
type DNSHealth struct {
	mu        sync.Mutex
	servers   []string
	resolvers map[string]*watchstate.ResolverStatus
	counts    []uint64 // per bucket, not cumulative; the last is +Inf
	count     uint64
	sum       float64
}

// NewDNSHealth returns a DNSHealth of the resolvers given (others are
// added as they are asked).
func NewDNSHealth(servers []string) *DNSHealth {
	h := &DNSHealth{resolvers: map[string]*watchstate.ResolverStatus{}, counts: make([]uint64, len(dnsBounds)+1)}
	for _, s := range servers {
		h.resolver(s)
	}
	return h
}

// resolver returns the status of s, made when new; h.mu is held.
func (h *DNSHealth) resolver(s string) *watchstate.ResolverStatus {
	r := h.resolvers[s]
	if r == nil {
		r = &watchstate.ResolverStatus{Server: s, Up: true}
		h.resolvers[s] = r
		h.servers = append(h.servers, s)
	}
	return r
}

// Observe counts one query.
func (h *DNSHealth) Observe(q verify.DNSQuery) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := h.resolver(q.Server)
	r.Queries++
	if q.Err != nil {
		r.Failures++
		r.Up = false
		r.LastFailure = q.At
		r.LastError = q.Err.Error()
	} else {
		r.Up = true
		r.LastAnswer = q.At
	}
	sec := q.Duration.Seconds()
	i, _ := slices.BinarySearch(dnsBounds, sec)
	h.counts[i]++
	h.count++
	h.sum += sec
}

// Status returns the resolvers' status (in the order first known) and
// the latency histogram.
func (h *DNSHealth) Status() watchstate.DNSStatus {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := watchstate.DNSStatus{Resolvers: make([]watchstate.ResolverStatus, 0, len(h.servers))}
	for _, name := range h.servers {
		s.Resolvers = append(s.Resolvers, *h.resolvers[name])
	}
	s.Latency = watchstate.Histogram{Bounds: slices.Clone(dnsBounds), Counts: make([]uint64, len(dnsBounds)), Count: h.count, Sum: h.sum}
	var cum uint64
	for i := range dnsBounds {
		cum += h.counts[i]
		s.Latency.Counts[i] = cum
	}
	return s
}
