package verify

import (
	"time"

	"github.com/miekg/dns"
)

// DNSAnswer is one DNS lookup made to judge an address: the evidence a
// verdict rests on, as the resolver gave it. A verdict by FCrDNS has the
// PTR lookup of the address first, then the forward lookups of the names
// under the crawler's suffixes, in the order they were asked. Its values
// are written by strangers (anyone can publish any PTR): escape them
// before printing.
type DNSAnswer struct {
	// Name is the name asked, in lower case with the trailing dot
	// (98.58.139.79.in-addr.arpa.); Type the record type (PTR, A, AAAA).
	Name string `json:"name" yaml:"name"`
	Type string `json:"type" yaml:"type"`
	// Rcode is the answer's response code (NOERROR, NXDOMAIN); empty when
	// no answer came (Error says why).
	Rcode string `json:"rcode,omitempty" yaml:"rcode,omitempty"`
	// Answer holds the PTR names (lower case, without the trailing dot)
	// or the addresses, CNAMEs followed; empty, not nil, for none. A PTR
	// answer keeps the names a verdict can use (see Result.PTR).
	Answer []string `json:"answer" yaml:"answer"`
	// TTL is how long the answer may be used from Asked, in seconds: the
	// least TTL of the records used, a negative answer's SOA minimum, and
	// never above a day; 0 for a failed lookup.
	TTL uint32 `json:"ttl" yaml:"ttl"`
	// Resolver is the server (HOST:PORT) that answered.
	Resolver string `json:"resolver,omitempty" yaml:"resolver,omitempty"`
	// Asked is when the question was asked (by this run, or by an earlier
	// one when Cached); zero when a cache entry did not keep it.
	Asked time.Time `json:"asked,omitzero" yaml:"asked,omitempty"`
	// Cached says the answer came from the cache directory.
	Cached bool `json:"cached,omitempty" yaml:"cached,omitempty"`
	// Error says why DNS could not answer, when it could not.
	Error string `json:"error,omitempty" yaml:"error,omitempty"`
}

// Expires is when the answer stops being evidence: Asked plus TTL. A
// failed lookup, and an answer whose asking time is unknown, expire at
// once (the zero time).
func (a *DNSAnswer) Expires() time.Time {
	if a.Error != "" || a.Asked.IsZero() {
		return time.Time{}
	}
	return a.Asked.Add(time.Duration(a.TTL) * time.Second)
}

// newDNSAnswer is the evidence of the lookup l of (name, qtype), asked at
// asked.
func newDNSAnswer(name string, qtype uint16, l dnsLookup, asked time.Time) *DNSAnswer {
	a := &DNSAnswer{
		Name:     dns.CanonicalName(name),
		Type:     dns.TypeToString[qtype],
		Answer:   []string{},
		Resolver: l.Server,
		Asked:    asked.UTC(),
	}
	if l.Err != nil {
		a.Error = l.Err.Error()
		return a
	}
	a.Rcode = dnsRcodeName(l.Rcode)
	a.TTL = min(l.TTL, uint32(dnsMaxTTL/time.Second))
	for _, v := range l.Values {
		if qtype == dns.TypePTR {
			v = fcrdnsNorm(v)
		}
		a.Answer = append(a.Answer, v)
	}
	return a
}

// EvidenceExpires is when the first of r's DNS answers stops being
// evidence (see DNSAnswer.Expires), or the zero time when r rests on no
// DNS answer (an IP list, --offline) or on one that is already no
// evidence (a failed lookup). ok is false when r has no DNS answer.
func (r *Result) EvidenceExpires() (t time.Time, ok bool) {
	for i, a := range r.DNS {
		e := a.Expires()
		if i == 0 || e.Before(t) {
			t = e
		}
	}
	return t, len(r.DNS) > 0
}
