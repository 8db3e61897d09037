package verify

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/miekg/dns"
)

// Queries on the wire, and the UDP sockets they go out on.
//
// DNS answers are written by strangers: over UDP anyone who can guess a
// query's source port, id and question can race the resolver's answer
// with a forged one. Each query therefore carries a fresh random id (16
// bits) and a random letter case of its name ("0x20", RFC draft
// vixie-dnsext-dns0x20: one bit per letter, about ten for an in-addr.arpa
// name) from crypto/rand, goes out from a kernel-chosen random port on a
// socket connected to the resolver (the kernel delivers nothing from
// elsewhere), and only a packet that is a response with that id and that
// question, byte for byte, is read as its answer; any other is ignored
// and the real one waited for.
//
// A socket is kept for more queries (a new socket per query cost about a
// tenth of watch's CPU at botnet rates) under rules that keep what a
// forger must guess as it was:
//   - a socket serves one query at a time;
//   - it goes back to the pool only when its query got its answer and
//     nothing else came (a forged, late or stray packet retires it, and
//     so does a timeout: the late answer stays away from the next query);
//   - before it is used again, whatever arrived while it was idle is
//     read and thrown away (a forger cannot plant answers ahead of a
//     query), and a pending error retires it;
//   - it is used for at most dnsSocketMaxUses queries and dnsSocketMaxAge,
//     the time a query could wait on one socket before (the timeout): its
//     port is no longer known, nor findable, than a port was.
//
// A resolver that does not echo the letter case of questions (a few
// forwarders lower-case them) is noticed at its first answer: its answers
// are then matched without case, as before 0x20. Over TCP, which cannot
// be forged off-path, case is never compared.

// Bounds of a UDP socket's reuse.
const (
	dnsSocketMaxUses = 128
	dnsSocketMaxAge  = 2 * time.Second
	// dnsSocketMaxIdle bounds the idle sockets kept per resolver.
	dnsSocketMaxIdle = 256
	// dnsCaseRelearn is how many answers in a row that echoed the
	// question in another letter case, from a resolver that echoed it
	// exactly before, make it count as one that does not (it was
	// replaced, say); each of them was ignored meanwhile.
	dnsCaseRelearn = 16
)

// Whether a resolver echoes the letter case of questions (dnsServer.echo).
const (
	dnsEchoUnknown int32 = iota
	dnsEchoExact
	dnsEchoFolded
)

// dnsQuery is one question on the wire: packed once per lookup, sent on
// each attempt with a fresh random id and letter case (arm).
type dnsQuery struct {
	// name is the name asked, as given; qtype its type.
	name  string
	qtype uint16
	// wire is the query: header, question, EDNS0 OPT record. The name
	// is at wire[12:nameEnd], type and class follow.
	wire    []byte
	nameEnd int
	// mixed says the last arm put at least one letter in upper case.
	mixed bool
	// rand fills b with random bytes (crypto/rand.Read; tests replace
	// it); rnd is arm's buffer for them: the id, and one bit for each
	// byte of a name of up to 256.
	rand func(b []byte)
	rnd  [2 + 32]byte
	// buf holds wire: a name of up to 255 bytes, with the header,
	// type, class and OPT record.
	buf [12 + 255 + 4 + 11]byte
}

// newDNSQuery packs the question (name, qtype, class IN), recursion
// desired, with an EDNS0 OPT record of buffer size dnsUDPSize: what
// dns.Msg packs for SetQuestion, RecursionDesired and SetEdns0, in one
// allocation.
func newDNSQuery(name string, qtype uint16, random func([]byte)) (*dnsQuery, error) {
	q := &dnsQuery{name: name, qtype: qtype, rand: random}
	if q.rand == nil {
		q.rand = dnsRandom
	}
	wire := q.buf[:]
	wire[2] = 0x01 // RD
	wire[5] = 1    // one question
	wire[11] = 1   // one additional record: OPT
	end, err := dns.PackDomainName(dns.Fqdn(name), wire, 12, nil, false)
	if err == nil && end-12 > 255 {
		// PackDomainName packs longer names when the buffer allows.
		err = dns.ErrLongDomain
	}
	if err != nil {
		return nil, fmt.Errorf("cannot ask about %q: %w", name, err)
	}
	wire = wire[:end+4+11]
	binary.BigEndian.PutUint16(wire[end:], qtype)
	binary.BigEndian.PutUint16(wire[end+2:], dns.ClassINET)
	opt := wire[end+4:]
	// Root owner, type OPT, the buffer size as its class, TTL 0
	// (extended rcode, version, flags), no data.
	opt[0] = 0
	binary.BigEndian.PutUint16(opt[1:], dns.TypeOPT)
	binary.BigEndian.PutUint16(opt[3:], dnsUDPSize)
	q.wire, q.nameEnd = wire, end
	return q, nil
}

// dnsRandom is crypto/rand.Read, which never fails.
func dnsRandom(b []byte) { rand.Read(b) }

// arm gives the query a fresh random id and letter case.
func (q *dnsQuery) arm() {
	name := q.wire[12:q.nameEnd]
	b := q.rnd[:2+(len(name)+7)/8]
	q.rand(b)
	q.wire[0], q.wire[1] = b[0], b[1]
	bits := b[2:]
	q.mixed = false
	for i, c := range name {
		lower := c | 0x20
		if lower < 'a' || lower > 'z' {
			continue
		}
		if bits[i/8]>>(i%8)&1 == 1 {
			name[i] = lower &^ 0x20
			q.mixed = true
		} else {
			name[i] = lower
		}
	}
}

// id is the query's id as last armed.
func (q *dnsQuery) id() uint16 { return uint16(q.wire[0])<<8 | uint16(q.wire[1]) }

// match reports whether the packet p answers q as sent: a response with
// q's id and one question, q's type and class, and q's name byte for byte
// (exact) or but for the letter case (folded).
func (q *dnsQuery) match(p []byte) (exact, folded bool) {
	end := q.nameEnd + 4
	if len(p) < end || p[0] != q.wire[0] || p[1] != q.wire[1] || p[2]&0x80 == 0 || p[4] != 0 || p[5] != 1 {
		return false, false
	}
	if !bytes.Equal(p[q.nameEnd:end], q.wire[q.nameEnd:end]) {
		return false, false
	}
	got, want := p[12:q.nameEnd], q.wire[12:q.nameEnd]
	if bytes.Equal(got, want) {
		return true, true
	}
	// Label lengths (at most 63) and other bytes compare as they are,
	// ASCII letters without case: the labels are the same only if every
	// length is.
	for i := range got {
		a, b := got[i], want[i]
		if a == b {
			continue
		}
		if a|0x20 != b|0x20 || a|0x20 < 'a' || a|0x20 > 'z' {
			return false, false
		}
	}
	return false, true
}

// dnsAnswers reports whether resp, unpacked, is a response to q.
func dnsAnswers(q *dnsQuery, resp *dns.Msg) bool {
	if !resp.Response || resp.Id != q.id() || len(resp.Question) != 1 {
		return false
	}
	b := resp.Question[0]
	return b.Qtype == q.qtype && b.Qclass == dns.ClassINET && dnsEqualFold(q.name, b.Name)
}

// dnsEqualFold compares two names in presentation form without ASCII
// case.
func dnsEqualFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range len(a) {
		x, y := a[i], b[i]
		if x == y {
			continue
		}
		if x|0x20 != y|0x20 || x|0x20 < 'a' || x|0x20 > 'z' {
			return false
		}
	}
	return true
}

// accept decides whether a UDP answer that matched q (exact or folded)
// is taken, as far as letter case goes, and learns whether s echoes it.
func (r *dnsResolver) accept(s *dnsServer, q *dnsQuery, exact bool) bool {
	if exact {
		if q.mixed {
			s.echo.CompareAndSwap(dnsEchoUnknown, dnsEchoExact)
			s.caseMisses.Store(0)
		}
		return true
	}
	// The name came back in another case.
	if !q.mixed {
		// Sent in lower case, answered with capitals: not a lower-casing
		// forwarder, and not what was asked.
		return s.echo.Load() != dnsEchoExact
	}
	switch s.echo.Load() {
	case dnsEchoExact:
		if s.caseMisses.Add(1) == dnsCaseRelearn {
			s.echo.Store(dnsEchoFolded)
			if r.warn != nil {
				r.warn(fmt.Sprintf("dns: resolver %s no longer echoes the letter case of questions; its answers are matched without case (0x20 off)", s.addr))
			}
		}
		return false
	case dnsEchoUnknown:
		s.echo.CompareAndSwap(dnsEchoUnknown, dnsEchoFolded)
	}
	return true
}

// dnsSocket is a UDP socket connected to one resolver.
type dnsSocket struct {
	c    *net.UDPConn
	rc   syscall.RawConn
	born time.Time
	uses int
	buf  [dnsUDPSize]byte
	// drain is dnsDrainFunc(s), made once; drained and drainOK are its
	// outcome.
	drain   func(fd uintptr) bool
	drained int
	drainOK bool
}

func (s *dnsSocket) close() { s.c.Close() }

// dnsSockets are the idle sockets to one resolver, shared by every
// resolver of the process that asks it.
type dnsSockets struct {
	addr  string
	raddr *net.UDPAddr // nil when addr is not an IP address and port
	// maxAge is dnsSocketMaxAge (tests set it before the first query).
	maxAge time.Duration
	mu     sync.Mutex
	idle   []*dnsSocket
	sweep  *time.Timer
}

var (
	dnsSocketsMu sync.Mutex
	dnsSocketsOf = map[string]*dnsSockets{}
)

// dnsSocketsFor returns the sockets to the resolver at addr (HOST:PORT).
func dnsSocketsFor(addr string) *dnsSockets {
	dnsSocketsMu.Lock()
	defer dnsSocketsMu.Unlock()
	p := dnsSocketsOf[addr]
	if p == nil {
		p = &dnsSockets{addr: addr, maxAge: dnsSocketMaxAge}
		if ap, err := netip.ParseAddrPort(addr); err == nil {
			p.raddr = net.UDPAddrFromAddrPort(ap)
		}
		dnsSocketsOf[addr] = p
	}
	return p
}

// get returns an idle socket, emptied of what came while it was idle, or
// a new one. Packets thrown away are counted in ignored.
func (p *dnsSockets) get(ctx context.Context, ignored *atomic.Int64) (*dnsSocket, error) {
	for {
		p.mu.Lock()
		n := len(p.idle)
		if n == 0 {
			p.mu.Unlock()
			break
		}
		s := p.idle[n-1]
		p.idle[n-1] = nil
		p.idle = p.idle[:n-1]
		p.mu.Unlock()
		if time.Since(s.born) >= p.maxAge {
			s.close()
			continue
		}
		k, ok := dnsDrain(s)
		if k > 0 {
			ignored.Add(int64(k))
		}
		if !ok || k > 0 {
			// Something came to it while idle (a stray or planted
			// packet, an ICMP error): its port may be known.
			s.close()
			continue
		}
		return s, nil
	}
	var c net.Conn
	var err error
	if p.raddr != nil {
		c, err = net.DialUDP("udp", nil, p.raddr)
	} else {
		// A host name: resolved at each dial.
		var d net.Dialer
		c, err = d.DialContext(ctx, "udp", p.addr)
	}
	if err != nil {
		return nil, err
	}
	uc, ok := c.(*net.UDPConn)
	if !ok {
		c.Close()
		return nil, fmt.Errorf("%s: not a udp socket", p.addr)
	}
	s := &dnsSocket{c: uc, born: time.Now()}
	if dnsCanDrain {
		if s.rc, err = uc.SyscallConn(); err != nil {
			uc.Close()
			return nil, err
		}
		s.drain = dnsDrainFunc(s)
	}
	return s, nil
}

// put takes back a socket whose query got its answer and nothing else,
// unless it has served its time.
func (p *dnsSockets) put(s *dnsSocket) {
	s.uses++
	if !dnsCanDrain || s.uses >= dnsSocketMaxUses || time.Since(s.born) >= p.maxAge {
		s.close()
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.idle) >= dnsSocketMaxIdle {
		s.close()
		return
	}
	p.idle = append(p.idle, s)
	if p.sweep == nil {
		p.sweep = time.AfterFunc(p.maxAge, p.sweepIdle)
	}
}

// sweepIdle closes the idle sockets that have served their time, so that
// none outlives dnsSocketMaxAge by much when queries stop.
func (p *dnsSockets) sweepIdle() {
	p.mu.Lock()
	defer p.mu.Unlock()
	keep := p.idle[:0]
	for _, s := range p.idle {
		if time.Since(s.born) >= p.maxAge {
			s.close()
			continue
		}
		keep = append(keep, s)
	}
	clear(p.idle[len(keep):])
	p.idle = keep
	if len(keep) == 0 {
		p.sweep = nil
		return
	}
	p.sweep.Reset(p.maxAge / 4)
}

// aLongTimeAgo is a read deadline that ends a read at once.
var aLongTimeAgo = time.Unix(1, 0)

// exchangeUDP sends q to s over UDP and reads until the answer comes or
// a ends the query. Packets that do not answer q are counted in ignored
// (and in r.ignored) and skipped.
func (r *dnsResolver) exchangeUDP(a *dnsAbort, s *dnsServer, q *dnsQuery) (resp *dns.Msg, ignored int, err error) {
	if err := a.why(); err != nil {
		return nil, 0, err
	}
	ctx := context.Background()
	if s.sockets.raddr == nil {
		// The dial resolves a host name: an abort ends it.
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		if err := a.attach(nil, cancel); err != nil {
			return nil, 0, err
		}
	}
	sock, err := s.sockets.get(ctx, r.ignored)
	if err != nil {
		return nil, 0, err
	}
	if err := a.attach(sock.c, nil); err != nil {
		s.sockets.put(sock)
		return nil, 0, err
	}
	clean := false
	defer func() {
		if clean {
			s.sockets.put(sock)
		} else {
			sock.close()
		}
	}()
	if _, err := sock.c.Write(q.wire); err != nil {
		a.detach()
		return nil, 0, err
	}
	for {
		n, err := sock.c.Read(sock.buf[:])
		if err != nil {
			a.detach()
			return nil, ignored, err
		}
		p := sock.buf[:n]
		if exact, folded := q.match(p); folded && r.accept(s, q, exact) {
			m := new(dns.Msg)
			if m.Unpack(p) == nil && dnsAnswers(q, m) {
				// Reused only if its deadline was never touched and
				// nothing else came.
				clean = !a.detach() && ignored == 0
				return m, ignored, nil
			}
		}
		ignored++
		r.ignored.Add(1)
	}
}

// exchangeTCP sends q to s over TCP and reads its answer until a ends the
// query or ctx is done. An answer that does not match q is an error (over
// TCP only the server can have sent it); the letter case of its name is
// not compared.
func exchangeTCP(ctx context.Context, a *dnsAbort, s *dnsServer, q *dnsQuery) (*dns.Msg, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if err := a.attach(nil, cancel); err != nil {
		return nil, err
	}
	defer a.detach()
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", s.addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if err := a.attach(c, cancel); err != nil {
		return nil, err
	}
	co := &dns.Conn{Conn: c}
	if _, err := co.Write(q.wire); err != nil {
		return nil, err
	}
	p, err := co.ReadMsgHeader(nil)
	if err != nil {
		return nil, err
	}
	if _, folded := q.match(p); !folded {
		return nil, dnsTCPMismatch{}
	}
	m := new(dns.Msg)
	if err := m.Unpack(p); err != nil {
		return nil, err
	}
	if !dnsAnswers(q, m) {
		return nil, dnsTCPMismatch{}
	}
	return m, nil
}
