//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package verify

import (
	"context"
	"net"
	"slices"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// TestDNSPlantedAnswerIgnored plays a forger who knows the next query's
// id, letter case and question, and plants its answer on an idle socket
// before the query is sent: the socket is emptied before use, so the
// planted answer is thrown away (and counted), and the real one taken.
func TestDNSPlantedAnswerIgnored(t *testing.T) {
	l, addr := newDNSPortLog(t, "a.example. 300 IN A 192.0.2.1", "b.example. 300 IN A 192.0.2.2")
	dnsSocketsFor(addr).maxAge = time.Hour
	var calls atomic.Uint32
	r := dnsTestResolver(l.dnsTestZone, 0, addr)
	r.rand = func(b []byte) {
		clear(b)
		b[1] = byte(calls.Add(1)) // ids 1, 2, ...; names in lower case
	}
	l.setAfter(func(w dns.ResponseWriter, req *dns.Msg) {
		if req.Id != 1 {
			return
		}
		forged := new(dns.Msg)
		forged.SetQuestion("b.example.", dns.TypeA)
		forged.Id = 2
		forged.Response = true
		forged.Answer = append(forged.Answer, &dns.A{Hdr: dns.RR_Header{Name: "b.example.", Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 300}, A: net.IPv4(203, 0, 113, 66)})
		w.WriteMsg(forged)
	})
	if got := r.lookup(context.Background(), "a.example", dns.TypeA); got.Err != nil {
		t.Fatal(got.Err)
	}
	// The forged packet went out after the answer; wait until it is in
	// the idle socket's queue.
	for deadline := time.Now().Add(dnsTestHang); ; time.Sleep(time.Millisecond) {
		p := dnsSocketsFor(addr)
		p.mu.Lock()
		queued := len(p.idle) == 1 && dnsPending(t, p.idle[0]) > 0
		p.mu.Unlock()
		if queued {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the planted packet never reached the idle socket")
		}
	}
	got := r.lookup(context.Background(), "b.example", dns.TypeA)
	if got.Err != nil || !slices.Equal(got.Values, []string{"192.0.2.2"}) {
		t.Fatalf("b.example: got %+v, want the real 192.0.2.2, not the planted answer", got)
	}
	if r.ignored.Load() != 1 {
		t.Errorf("%d packets ignored, want the planted one", r.ignored.Load())
	}
	if a, b := l.portsOf("a.example"), l.portsOf("b.example"); len(a) != 1 || len(b) != 1 || a[0] == b[0] {
		t.Errorf("ports %v then %v: the socket that received a planted packet was used again", a, b)
	}
}

// dnsPending returns how many packets wait in s's queue, without taking
// them.
func dnsPending(t *testing.T, s *dnsSocket) int {
	t.Helper()
	n := 0
	err := s.rc.Read(func(fd uintptr) bool {
		var b [1]byte
		_, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		if err == nil {
			n = 1
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}
