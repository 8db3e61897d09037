package cmd

import (
	"testing"

	"github.com/lohisoft/lohibot-audit/internal/dnstest"
	"github.com/miekg/dns"
)

// serveDNS serves h on 127.0.0.1, UDP and TCP on one port, until the test
// ends, and returns the HOST:PORT.
func serveDNS(t *testing.T, h dns.Handler) string {
	t.Helper()
	return dnstest.Serve(t, h)
}
