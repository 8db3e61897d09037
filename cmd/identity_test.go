package cmd

import (
	"bytes"
	"context"
	"encoding/json"
	"net/netip"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/internal/testutil"
	"github.com/lohisoft/lohibot-audit/verify"
	"github.com/miekg/dns"
)

// identityWatchWriter is a stderr that can be written from several
// goroutines and closes seen when a write contains its marker.
type identityWatchWriter struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	marker string
	seen   chan struct{}
	once   sync.Once
}

func (w *identityWatchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if bytes.Contains(p, []byte(w.marker)) {
		w.once.Do(func() { close(w.seen) })
	}
	return w.buf.Write(p)
}

func (w *identityWatchWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestVerifyCommandProgress runs `verify` with stderr on a terminal, with a
// resolver that holds its answers until the progress line is drawn.
func TestVerifyCommandProgress(t *testing.T) {
	stderr := &identityWatchWriter{marker: "dns: 0 of 2 addresses verified", seen: make(chan struct{})}
	z, _ := startIdentityDNS(t)
	resolver := serveDNS(t, dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		select {
		case <-stderr.seen:
		case <-time.After(20 * time.Second): // a hang: the test fails below
		}
		z.ServeDNS(w, r)
	}))
	var stdout bytes.Buffer
	env := &Env{Stdout: &stdout, Stderr: stderr, StderrTTY: true, Getenv: func(string) string { return "" }}
	code := Run(context.Background(), env, []string{"verify", "--format", "json", "--resolver", resolver, "--no-cache",
		"--ip-list", testutil.TempFile(t, "ips.json", `["192.0.2.1"]`), "79.139.58.98", "203.0.113.7"})
	select {
	case <-stderr.seen:
	default:
		t.Fatalf("no progress line on a terminal; stderr %q", stderr.String())
	}
	if code != 0 || !strings.Contains(stdout.String(), `"genuine"`) {
		t.Fatalf("exit %d, stdout %s", code, stdout.String())
	}
	if got := stderr.String(); !strings.HasPrefix(got, "\r\x1b[Kdns: 0 of 2 addresses verified") || !strings.HasSuffix(got, "\r\x1b[K") {
		t.Errorf("stderr %q: want the progress line drawn, then cleared", got)
	}
}

func TestDNSConcurrencyFlag(t *testing.T) {
	z, resolver := startIdentityDNS(t)
	list := testutil.TempFile(t, "ips.json", `["192.0.2.1"]`)
	base := []string{"--format", "json", "--resolver", resolver, "--no-cache", "--ip-list", list}
	cfg := func(content string) string { return testutil.TempFile(t, "config.yaml", content) }
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"verify", append([]string{"verify", "--dns-concurrency", "1"}, append(base, "79.139.58.98")...), 0, ""},
		{"zero", append([]string{"verify", "--dns-concurrency", "0"}, append(base, "79.139.58.98")...), 2, "--dns-concurrency 0: give a number from 1 to 1024"},
		{"too many", append([]string{"verify", "--dns-concurrency", "5000"}, append(base, "79.139.58.98")...), 2, "--dns-concurrency 5000"},
		{"not a number", append([]string{"verify", "--dns-concurrency", "many"}, append(base, "79.139.58.98")...), 2, "dns-concurrency"},
		{"config file", append([]string{"verify", "--config", cfg("dns-concurrency: 0\n")}, append(base, "79.139.58.98")...), 2, "--dns-concurrency 0"},
		{"config file, flag wins", append([]string{"verify", "--config", cfg("dns-concurrency: 0\n"), "--dns-concurrency", "8"}, append(base, "79.139.58.98")...), 0, ""},
		{"logs", append([]string{"logs", "--dns-concurrency", "-1"}, append(base, os.DevNull)...), 2, "--dns-concurrency -1"},
		{"emit", append([]string{"emit", "nftables", "--dns-concurrency", "-1"}, append(base[2:], os.DevNull)...), 2, "--dns-concurrency -1"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := identityRun(t, &Env{}, tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.stderr) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, tc.code, tc.stderr)
			}
		})
	}
	if z.count() == 0 {
		t.Error("the resolver was never asked")
	}
}

// TestVerifyCommandUnverifiedWarning checks that addresses left unverified
// by DNS are tried twice, counted by why in a warning, and carry the
// reason in the JSON.
func TestVerifyCommandUnverifiedWarning(t *testing.T) {
	z, resolver := startIdentityDNS(t) // 9.113.0.203 answers SERVFAIL
	refused := serveDNS(t, dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetRcode(r, dns.RcodeRefused)
		w.WriteMsg(m)
	}))
	list := testutil.TempFile(t, "ips.json", `["79.139.58.98"]`)
	code, stdout, stderr := identityRun(t, &Env{}, "verify", "--format", "json", "--resolver", resolver, "--no-cache",
		"--ip-list", list, "79.139.58.98", "203.0.113.9")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got struct{ IPs []audit.IPReport }
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatal(err)
	}
	var bad audit.IPReport
	for _, ip := range got.IPs {
		if ip.IP == "203.0.113.9" {
			bad = ip
		}
	}
	if bad.Verdict != verify.Unverified || bad.DNSFailure != verify.DNSFailureServFail || !strings.Contains(stdout, `"dns_failure": "servfail"`) {
		t.Errorf("203.0.113.9: %+v, want unverified with dns_failure servfail", bad)
	}
	want := "dns: 1 address stays unverified, DNS could not answer for them (servfail 1); nftables rules never block unverified addresses, but the cloudflare and modsecurity block-spoofed rules stop them"
	if strings.Count(stderr, "stays unverified") != 1 || !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks, once, %q:\n%s", want, stderr)
	}
	// Asked in the first pass and again in the second; the genuine
	// address once.
	if n := z.count(); n != 4 {
		t.Errorf("%d questions, want 4 (PTR and A of the crawler, the SERVFAIL PTR twice)", n)
	}

	code, _, stderr = identityRun(t, &Env{}, "verify", "--format", "json", "--resolver", refused, "--no-cache",
		"--ip-list", list, "203.0.113.9", "203.0.113.10", "79.139.58.98")
	if code != 0 || !strings.Contains(stderr, "dns: 2 addresses stay unverified, DNS could not answer for them (refused 2)") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr)
	}
}

func TestUnverifiedWarningCounts(t *testing.T) {
	results := map[netip.Addr]verify.Result{}
	add := func(ip string, r verify.Result) {
		a := netip.MustParseAddr(ip)
		r.Addr = a.Unmap()
		results[a] = r
		results[r.Addr] = r // classify keys results by both forms
	}
	unverified := func(kind string) verify.Result {
		return verify.Result{Verdict: verify.Unverified, Reason: verify.ReasonDNSError, DNSFailure: kind}
	}
	add("192.0.2.1", unverified(verify.DNSFailureTimeout))
	add("::ffff:192.0.2.2", unverified(verify.DNSFailureTimeout))
	add("192.0.2.3", unverified(verify.DNSFailureForged))
	add("192.0.2.4", unverified(verify.DNSFailureServFail))
	add("192.0.2.5", unverified(verify.DNSFailureCanceled))
	add("192.0.2.6", verify.Result{Verdict: verify.Genuine, Method: verify.MethodIPList, DNSFailure: verify.DNSFailureTimeout})
	add("192.0.2.7", verify.Result{Verdict: verify.Unverified, Reason: verify.ReasonNotAnAddress})
	got := verify.UnverifiedWarning(results)
	want := "dns: 4 addresses stay unverified, DNS could not answer for them (timeout 2, forged 1, servfail 1); "
	if !strings.HasPrefix(got, want) || strings.Contains(got, "\n") {
		t.Errorf("got  %q\nwant %q...", got, want)
	}
	if w := verify.UnverifiedWarning(map[netip.Addr]verify.Result{}); w != "" {
		t.Errorf("no unverified addresses: %q", w)
	}
	// With no resolver to ask, its own warning says it all.
	results = map[netip.Addr]verify.Result{}
	add("192.0.2.1", unverified(verify.DNSFailureUnreachable))
	add("192.0.2.2", unverified(verify.DNSFailureNoResolver))
	if w := verify.UnverifiedWarning(results); w != "" {
		t.Errorf("only unreachable: %q", w)
	}
	add("192.0.2.3", unverified(verify.DNSFailureTimeout))
	if w := verify.UnverifiedWarning(results); !strings.Contains(w, "3 addresses stay unverified, DNS could not answer for them (no-resolver 1, timeout 1, unreachable 1)") {
		t.Errorf("unreachable among others: %q", w)
	}
}
