// Package dnstest serves DNS on loopback for tests: a real miekg/dns
// server on 127.0.0.1, UDP and TCP on one port, with its own ServeMux, so
// that tests can run in parallel.
package dnstest

import (
	"net"
	"testing"

	"github.com/miekg/dns"
)

// Serve serves h on 127.0.0.1, UDP and TCP on one port, until the test
// ends, and returns the HOST:PORT.
func Serve(t testing.TB, h dns.Handler) string {
	t.Helper()
	mux := dns.NewServeMux()
	mux.Handle(".", h)
	var pc net.PacketConn
	var l net.Listener
	for try := 0; ; try++ {
		var err error
		if pc, err = net.ListenPacket("udp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		if l, err = net.Listen("tcp", pc.LocalAddr().String()); err == nil {
			break
		}
		pc.Close()
		if try == 10 {
			t.Fatal(err)
		}
	}
	udp := &dns.Server{PacketConn: pc, Handler: mux}
	tcp := &dns.Server{Listener: l, Handler: mux}
	go udp.ActivateAndServe()
	go tcp.ActivateAndServe()
	t.Cleanup(func() { udp.Shutdown(); tcp.Shutdown() })
	return pc.LocalAddr().String()
}
