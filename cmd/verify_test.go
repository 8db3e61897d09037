package cmd

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/internal/dnstest"
	"github.com/lohisoft/lohibot-audit/internal/testutil"
	"github.com/lohisoft/lohibot-audit/verify"
	"github.com/miekg/dns"
)

// identityTestDNS is a DNS server for command tests: it answers from zone
// lines and fails on purpose for the names in servfail.
type identityTestDNS struct {
	mu       sync.Mutex
	records  map[string][]dns.RR
	servfail map[string]bool
	queries  int
}

func (z *identityTestDNS) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
	if dnstest.AnswerRoot(w, r) {
		return
	}
	q := r.Question[0]
	name := strings.ToLower(q.Name)
	z.mu.Lock()
	z.queries++
	z.mu.Unlock()
	m := new(dns.Msg)
	m.SetReply(r)
	switch {
	case z.servfail[name]:
		m.Rcode = dns.RcodeServerFailure
	default:
		for _, rr := range z.records[name] {
			if rr.Header().Rrtype == q.Qtype {
				m.Answer = append(m.Answer, rr)
			}
		}
		if len(z.records[name]) == 0 {
			m.Rcode = dns.RcodeNameError
		}
	}
	w.WriteMsg(m)
}

func (z *identityTestDNS) count() int {
	z.mu.Lock()
	defer z.mu.Unlock()
	return z.queries
}

// startIdentityDNS serves the crawler's documented names (and a few
// impostors) on 127.0.0.1, UDP and TCP on one port, and returns the server
// and its HOST:PORT.
func startIdentityDNS(t *testing.T) (*identityTestDNS, string) {
	t.Helper()
	z := &identityTestDNS{records: map[string][]dns.RR{}, servfail: map[string]bool{}}
	for _, l := range []string{
		"98.58.139.79.in-addr.arpa. 3600 IN PTR crawler1.bot.lohisoft.com.",
		"crawler1.bot.lohisoft.com. 3600 IN A 79.139.58.98",
		"121.58.139.79.in-addr.arpa. 3600 IN PTR Crawler2.Bot.LohiSoft.com.",
		"crawler2.bot.lohisoft.com. 3600 IN A 79.139.58.121",
		"7.113.0.203.in-addr.arpa. 3600 IN PTR crawler1.bot.lohisoft.com.evil.example.",
		"8.113.0.203.in-addr.arpa. 3600 IN PTR crawler1.bot.lohisoft.com.",
	} {
		rr, err := dns.NewRR(l)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.ToLower(rr.Header().Name)
		z.records[name] = append(z.records[name], rr)
	}
	z.servfail["9.113.0.203.in-addr.arpa."] = true
	return z, serveDNS(t, z)
}

// identityRun runs the command line in memory and returns the exit code,
// stdout and stderr.
func identityRun(t *testing.T, env *Env, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	env.Stdout, env.Stderr = &stdout, &stderr
	if env.Getenv == nil {
		env.Getenv = func(string) string { return "" }
	}
	code := Run(context.Background(), env, args)
	return code, stdout.String(), stderr.String()
}

type verifyTestIP struct {
	IP       string   `json:"ip"`
	Verdict  string   `json:"verdict"`
	Method   string   `json:"method"`
	Reason   string   `json:"reason"`
	PTR      []string `json:"ptr"`
	Forward  []string `json:"forward"`
	InIPList bool     `json:"in_ip_list"`
	Warnings []string `json:"warnings"`
}

func TestVerifyCommand(t *testing.T) {
	_, resolver := startIdentityDNS(t)
	list := testutil.TempFile(t, "ips.json", `{"prefixes":[{"ipv4Prefix":"79.139.58.98/32"},{"ipv4Prefix":"79.139.58.121/32"},{"ipv4Prefix":"203.0.113.8/32"}]}`)
	base := []string{"verify", "--format", "json", "--resolver", resolver, "--ip-list", list, "--dns-timeout", "500ms"}
	tests := []struct {
		name     string
		args     []string
		wantCode int
		want     []verifyTestIP
		stderr   string
	}{
		{name: "genuine, spoofed, unverified, listed",
			args: []string{"79.139.58.121", "203.0.113.7", "203.0.113.9", "203.0.113.8", "79.139.58.98", "::ffff:79.139.58.98", "2001:db8::1"},
			want: []verifyTestIP{
				{IP: "79.139.58.98", Verdict: "genuine", Method: "fcrdns", PTR: []string{"crawler1.bot.lohisoft.com"}, Forward: []string{"79.139.58.98"}, InIPList: true},
				{IP: "79.139.58.121", Verdict: "genuine", Method: "fcrdns", PTR: []string{"crawler2.bot.lohisoft.com"}, Forward: []string{"79.139.58.121"}, InIPList: true},
				{IP: "203.0.113.7", Verdict: "spoofed", Method: "fcrdns", Reason: "ptr-mismatch", PTR: []string{"crawler1.bot.lohisoft.com.evil.example"}, Forward: []string{}},
				{IP: "203.0.113.8", Verdict: "genuine", Method: "ip-list", PTR: []string{"crawler1.bot.lohisoft.com"}, Forward: []string{"79.139.58.98"}, InIPList: true, Warnings: []string{"fcrdns-failed"}},
				{IP: "203.0.113.9", Verdict: "unverified", Method: "fcrdns", Reason: "dns-error", PTR: []string{}, Forward: []string{}},
				{IP: "2001:db8::1", Verdict: "spoofed", Method: "ip-list", Reason: "ipv6", PTR: []string{}, Forward: []string{}},
			}},
		{name: "offline", args: []string{"--offline", "79.139.58.98", "203.0.113.7"},
			want: []verifyTestIP{
				{IP: "79.139.58.98", Verdict: "genuine", Method: "ip-list", PTR: []string{}, Forward: []string{}, InIPList: true},
				{IP: "203.0.113.7", Verdict: "spoofed", Method: "ip-list", Reason: "not-in-ip-list", PTR: []string{}, Forward: []string{}},
			}},
		{name: "fail on spoofed", args: []string{"--fail-on", "spoofed", "203.0.113.7"}, wantCode: 1, stderr: "lohibot-audit: --fail-on spoofed matched: 1 spoofed verdict\n",
			want: []verifyTestIP{{IP: "203.0.113.7", Verdict: "spoofed", Method: "fcrdns", Reason: "ptr-mismatch", PTR: []string{"crawler1.bot.lohisoft.com.evil.example"}, Forward: []string{}}}},
		{name: "fail on spoofed, unverified only", args: []string{"--fail-on", "spoofed", "203.0.113.9"},
			want: []verifyTestIP{{IP: "203.0.113.9", Verdict: "unverified", Method: "fcrdns", Reason: "dns-error", PTR: []string{}, Forward: []string{}}}},
		// any is spoofed or violations, as for logs: a DNS outage is no finding
		{name: "fail on any, unverified only", args: []string{"--fail-on", "any", "203.0.113.9"},
			want: []verifyTestIP{{IP: "203.0.113.9", Verdict: "unverified", Method: "fcrdns", Reason: "dns-error", PTR: []string{}, Forward: []string{}}}},
		{name: "fail on any, spoofed", args: []string{"--fail-on", "any", "203.0.113.7", "2001:db8::1"}, wantCode: 1, stderr: "lohibot-audit: --fail-on any matched: 2 spoofed verdicts\n",
			want: []verifyTestIP{{IP: "203.0.113.7", Verdict: "spoofed", Method: "fcrdns", Reason: "ptr-mismatch", PTR: []string{"crawler1.bot.lohisoft.com.evil.example"}, Forward: []string{}},
				{IP: "2001:db8::1", Verdict: "spoofed", Method: "ip-list", Reason: "ipv6", PTR: []string{}, Forward: []string{}}}},
		{name: "fail on violations never matches", args: []string{"--fail-on", "violations", "203.0.113.7"},
			want: []verifyTestIP{{IP: "203.0.113.7", Verdict: "spoofed", Method: "fcrdns", Reason: "ptr-mismatch", PTR: []string{"crawler1.bot.lohisoft.com.evil.example"}, Forward: []string{}}}},
		{name: "bad fail-on", args: []string{"--fail-on", "sometimes", "79.139.58.98"}, wantCode: 2, stderr: `unknown --fail-on "sometimes"`},
		{name: "bad address", args: []string{"79.139.58.98", "79.139.58.300"}, wantCode: 2, stderr: `"79.139.58.300" is not an IP address`},
		{name: "address with port", args: []string{"79.139.58.98:80"}, wantCode: 2, stderr: `"79.139.58.98:80" is not an IP address`},
		{name: "control characters escaped", args: []string{"1.2.3.4\x1b[2J"}, wantCode: 2, stderr: `\x1b[2J`},
		{name: "no address", args: []string{}, wantCode: 2, stderr: "verify needs at least one IP address"},
		{name: "bad resolver", args: []string{"--resolver", "dns.example:53", "79.139.58.98"}, wantCode: 2, stderr: `--resolver "dns.example:53" is not an IP address and port`},
		{name: "bad timeout", args: []string{"--dns-timeout", "0s", "79.139.58.98"}, wantCode: 2, stderr: "--dns-timeout 0s"},
		{name: "bad retries", args: []string{"--dns-retries", "-1", "79.139.58.98"}, wantCode: 2, stderr: "--dns-retries -1"},
		{name: "plain http list", args: []string{"--ip-list", "http://lohisoft.com/bot/ips.json", "79.139.58.98"}, wantCode: 2, stderr: "https only"},
		{name: "ftp list", args: []string{"--ip-list", "FTP://lohisoft.com/bot/ips.json", "79.139.58.98"}, wantCode: 2,
			stderr: `--ip-list "FTP://lohisoft.com/bot/ips.json": ftp:// is not a scheme this can fetch: use https://, or a file`},
		// "://" after a "/" is part of a file name, not a scheme.
		{name: "file name with ://", args: []string{"--ip-list", filepath.Join(t.TempDir(), "a://b.json"), "79.139.58.98"}, wantCode: 2, stderr: "cannot read --ip-list"},
		{name: "missing list file", args: []string{"--ip-list", filepath.Join(t.TempDir(), "nope.json"), "79.139.58.98"}, wantCode: 2, stderr: "cannot read --ip-list"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			env := &Env{}
			args := append(append(append([]string{}, base...), "--cache-dir", t.TempDir()), tc.args...)
			code, stdout, stderr := identityRun(t, env, args...)
			if code != tc.wantCode {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, tc.wantCode, stderr)
			}
			if tc.stderr != "" && !strings.Contains(stderr, tc.stderr) {
				t.Errorf("stderr %q does not say %q", stderr, tc.stderr)
			}
			if tc.wantCode != 1 && strings.Contains(stderr, "--fail-on") && strings.Contains(stderr, "matched") {
				t.Errorf("stderr %q says --fail-on matched, but the run does not fail for it", stderr)
			}
			if strings.ContainsAny(stderr, "\x1b\x00") {
				t.Errorf("stderr carries control characters: %q", stderr)
			}
			if tc.want == nil {
				return
			}
			var got struct {
				IPs []verifyTestIP `json:"ips"`
			}
			if err := json.Unmarshal([]byte(stdout), &got); err != nil {
				t.Fatalf("stdout is not JSON: %v\n%s", err, stdout)
			}
			if !reflect.DeepEqual(got.IPs, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got.IPs, tc.want)
			}
		})
	}
}

func TestVerifyCommandReportFields(t *testing.T) {
	code, stdout, _ := identityRun(t, &Env{}, "verify", "--format", "json", "--offline", "--cache-dir", t.TempDir(), "79.139.58.98")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var got struct {
		IPs []map[string]any `json:"ips"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatal(err)
	}
	ip := got.IPs[0]
	for _, k := range []string{"ip", "verdict", "method", "reason", "ptr", "forward", "in_ip_list", "hits", "user_agents"} {
		if _, ok := ip[k]; !ok {
			t.Errorf("field %q missing from %v", k, ip)
		}
	}
	// No log showed the address: no times, rather than year 1.
	for _, k := range []string{"first_seen", "last_seen", "crawler"} {
		if _, ok := ip[k]; ok {
			t.Errorf("field %q in %v", k, ip)
		}
	}
	if ip["hits"] != float64(0) {
		t.Errorf("hits must be zero: %v", ip)
	}
	_, yout, _ := identityRun(t, &Env{}, "verify", "--format", "yaml", "--offline", "--cache-dir", t.TempDir(), "79.139.58.98")
	if strings.Contains(yout, "first_seen") || strings.Contains(yout, "0001-01-01") || !strings.Contains(yout, "verdict: genuine") {
		t.Errorf("yaml:\n%s", yout)
	}
}

func TestVerifyCommandFormats(t *testing.T) {
	_, resolver := startIdentityDNS(t)
	list := testutil.TempFile(t, "ips.json", `["79.139.58.98", "79.139.58.121"]`)
	tests := []struct {
		format string
		want   []string
	}{
		{"table", []string{"│ 79.139.58.98 │ genuine │ fcrdns", "crawler1.bot.lohisoft.com", "│ 203.0.113.7  │ spoofed │ fcrdns: ptr-mismatch", "IP list: " + list + ", 2 prefixes"}},
		{"markdown", []string{"| 79.139.58.98 | genuine | fcrdns", "|:---"}},
		{"csv", []string{"ip,verdict,method,reason", "79.139.58.98,genuine,fcrdns,,true,0"}},
		{"yaml", []string{"ips:\n  - ip: 79.139.58.98\n    verdict: genuine\n    method: fcrdns\n"}},
	}
	for _, tc := range tests {
		t.Run(tc.format, func(t *testing.T) {
			code, stdout, stderr := identityRun(t, &Env{}, "verify", "--format", tc.format, "--resolver", resolver,
				"--ip-list", list, "--cache-dir", t.TempDir(), "203.0.113.7", "79.139.58.98")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			for _, w := range tc.want {
				if !strings.Contains(stdout, w) {
					t.Errorf("output lacks %q:\n%s", w, stdout)
				}
			}
		})
	}
}

func TestVerifyCommandResolverUnreachable(t *testing.T) {
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := pc.LocalAddr().String()
	pc.Close()
	args := []string{"verify", "--format", "json", "--resolver", dead, "--ip-list", testutil.TempFile(t, "ips.json", `["79.139.58.98"]`), "--cache-dir", t.TempDir()}
	for i := range 100 {
		args = append(args, "198.51.100."+strconv.Itoa(i+1))
	}
	args = append(args, "79.139.58.98")
	start := time.Now()
	code, stdout, stderr := identityRun(t, &Env{}, args...)
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("took %s: an unreachable resolver must be noticed, not waited out", d)
	}
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if n := strings.Count(stderr, "unreachable"); n != 1 || !strings.Contains(stderr, "dns: resolver "+dead+" unreachable (connection refused); the ip list decides") {
		t.Errorf("want one unreachable warning, stderr:\n%s", stderr)
	}
	var got struct{ IPs []audit.IPReport }
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatal(err)
	}
	for _, ip := range got.IPs {
		want := verify.Unverified
		if ip.IP == "79.139.58.98" {
			want = verify.Genuine
		}
		if ip.Verdict != want {
			t.Errorf("%s: %s, want %s (a DNS failure is never spoofed)", ip.IP, ip.Verdict, want)
		}
	}
}

func TestVerifyCommandCache(t *testing.T) {
	z, resolver := startIdentityDNS(t)
	xdg := t.TempDir()
	env := func() *Env {
		return &Env{Getenv: func(k string) string {
			if k == "XDG_CACHE_HOME" {
				return xdg
			}
			return ""
		}}
	}
	list := testutil.TempFile(t, "ips.json", `["79.139.58.98"]`)
	args := []string{"verify", "--format", "json", "--resolver", resolver, "--ip-list", list, "79.139.58.98", "79.139.58.121"}
	if code, _, stderr := identityRun(t, env(), args...); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	first := z.count()
	if first != 4 {
		t.Fatalf("first run asked %d questions, want 4 (two PTR, two A)", first)
	}
	if _, err := os.Stat(filepath.Join(xdg, "lohibot-audit", "dns.json")); err != nil {
		t.Fatalf("no cache under $XDG_CACHE_HOME: %v", err)
	}
	if code, _, _ := identityRun(t, env(), args...); code != 0 || z.count() != first {
		t.Fatalf("second run asked %d more questions, want none (answers are cached)", z.count()-first)
	}
	if code, _, _ := identityRun(t, env(), append(args, "--no-cache")...); code != 0 || z.count() != first+4 {
		t.Fatalf("--no-cache run asked %d questions, want 4", z.count()-first)
	}
	// A corrupt cache is said and ignored.
	os.WriteFile(filepath.Join(xdg, "lohibot-audit", "dns.json"), []byte("{garbage"), 0o600)
	code, stdout, stderr := identityRun(t, env(), args...)
	if code != 0 || !strings.Contains(stderr, "dns cache") || !strings.Contains(stderr, "corrupt") || !strings.Contains(stdout, `"verdict": "genuine"`) {
		t.Fatalf("corrupt cache: exit %d, stderr %q", code, stderr)
	}
	if _, err := verify.OpenDNSCache(filepath.Join(xdg, "lohibot-audit"), nil); err != nil {
		t.Fatalf("the corrupt cache was not replaced: %v", err)
	}
}

func TestVerifyCommandConfig(t *testing.T) {
	_, resolver := startIdentityDNS(t)
	cfg := testutil.TempFile(t, "config.yaml", "resolver:\n  - "+resolver+"\nformat: json\nip-list: "+testutil.TempFile(t, "ips.json", `["192.0.2.1"]`)+"\nno-cache: true\n")
	code, stdout, stderr := identityRun(t, &Env{}, "verify", "--config", cfg, "79.139.58.98")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, `"method": "fcrdns"`) || !strings.Contains(stdout, `"in_ip_list": false`) {
		t.Fatalf("config not applied:\n%s", stdout)
	}
}

// identityListServer serves an IP list over TLS; handlers per path.
func identityListServer(t *testing.T, mux *http.ServeMux) (*httptest.Server, *Env) {
	t.Helper()
	srv := httptest.NewTLSServer(mux)
	t.Cleanup(srv.Close)
	return srv, &Env{HTTPClient: srv.Client()}
}

// TestVerifyCommandNoNetwork is a machine without network: the resolver
// never answers and the list's server cannot be reached. With the default
// timeouts the run still ends in a few seconds, the list deciding.
func TestVerifyCommandNoNetwork(t *testing.T) {
	blackhole := serveDNS(t, dns.HandlerFunc(func(dns.ResponseWriter, *dns.Msg) {}))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()

	args := []string{"verify", "--format", "json", "--resolver", blackhole,
		"--ip-list", "https://" + closed + "/bot/ips.json", "--cache-dir", t.TempDir()}
	for i := range 200 {
		args = append(args, "198.51.100."+strconv.Itoa(i+1))
	}
	args = append(args, "79.139.58.121")
	start := time.Now()
	code, stdout, stderr := identityRun(t, &Env{}, args...)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("took %s without network, want a few seconds", d)
	}
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, w := range []string{"cannot fetch); the built-in list stays in force", "unreachable (dns timeout: no answer within 2s); the ip list decides"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr)
		}
	}
	var got struct{ IPs []audit.IPReport }
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for _, ip := range got.IPs {
		counts[string(ip.Verdict)+"/"+ip.Method+"/"+ip.Reason]++
	}
	want := map[string]int{"unverified/fcrdns/dns-error": 200, "genuine/ip-list/": 1}
	if !reflect.DeepEqual(counts, want) {
		t.Errorf("verdicts %v, want %v", counts, want)
	}
}

// TestVerifyCSVSeveralCrawlers: with two crawlers judged, each CSV row
// begins with its crawler, so that an address's two rows differ; with
// none named the columns are those of SPEC §5.
func TestVerifyCSVSeveralCrawlers(t *testing.T) {
	read := func(args ...string) [][]string {
		t.Helper()
		code, stdout, stderr := identityRun(t, &Env{}, append([]string{"verify", "--format", "csv", "--offline", "--cache-dir", t.TempDir()}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		records, err := csv.NewReader(strings.NewReader(stdout)).ReadAll()
		if err != nil {
			t.Fatalf("%v: %v:\n%s", args, err, stdout)
		}
		return records
	}
	got := read("--crawler", "lohisoftbot", "--crawler", "googlebot", "--crawler", "amazonbot", "79.139.58.98")
	want := [][]string{
		{"crawler", "ip", "verdict", "method", "reason"},
		{"lohisoftbot", "79.139.58.98", "genuine", "ip-list", ""},
		{"googlebot", "79.139.58.98", "unverified", "ip-list", "not-in-snapshot"},
		{"amazonbot", "79.139.58.98", "unverified", "ip-list", "no-ip-list"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %d records, want %d: %q", len(got), len(want), got)
	}
	for i := range want {
		if !slices.Equal(got[i][:len(want[i])], want[i]) {
			t.Errorf("record %d = %q, want it to begin %q", i, got[i], want[i])
		}
	}
	if plain := read("79.139.58.98"); plain[0][0] != "ip" || len(plain[0]) != len(got[0])-1 || plain[1][0] != "79.139.58.98" || len(plain) != 2 {
		t.Errorf("without --crawler: %q", plain)
	}
}
