package cmd

import (
	"encoding/json"
	"fmt"
	"html"
	"maps"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/dnstest"
	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/internal/testutil"
	"github.com/lohisoft/lohibot-audit/proxy"
	"github.com/miekg/dns"
)

// cdnListServer serves every built-in CDN's edge list over HTTPS, each in
// its publisher's layout (Cloudflare's text lists, Fastly's JSON object,
// AWS's ip-ranges.json with other services beside CloudFront's, Bunny's
// JSON arrays), with the ranges of the built-in snapshot plus extra, and
// returns the URL rewrite that points `ips update` at it. extra ranges
// are added to Cloudflare's IPv4 list. The server's certificate is
// httptest's, which the clients of the other test servers trust.
func cdnListServer(t *testing.T, extra ...string) (rewrite func(string) string, hits *atomic.Int64) {
	t.Helper()
	hits = new(atomic.Int64)
	mux := http.NewServeMux()
	for _, l := range proxy.BuiltinEdges().Lists {
		if !l.Source.Fetch {
			continue
		}
		var items []string
		for _, p := range l.Prefixes {
			items = append(items, p.String())
		}
		if l.Source.URL == "https://www.cloudflare.com/ips-v4" {
			items = append(items, extra...)
		}
		var body string
		switch l.Source.Layout {
		case "text":
			body = strings.Join(items, "\n") + "\n"
		case "fastly-json":
			var v4, v6 []string
			for _, p := range items {
				if strings.Contains(p, ":") {
					v6 = append(v6, p)
				} else {
					v4 = append(v4, p)
				}
			}
			b, _ := json.Marshal(map[string][]string{"addresses": v4, "ipv6_addresses": v6})
			body = string(b)
		case "aws-ip-ranges":
			type p4 struct {
				Prefix  string `json:"ip_prefix"`
				Region  string `json:"region"`
				Service string `json:"service"`
			}
			type p6 struct {
				Prefix  string `json:"ipv6_prefix"`
				Region  string `json:"region"`
				Service string `json:"service"`
			}
			v := struct {
				SyncToken  string `json:"syncToken"`
				CreateDate string `json:"createDate"`
				Prefixes   []p4   `json:"prefixes"`
				IPv6       []p6   `json:"ipv6_prefixes"`
			}{SyncToken: "1787411825", CreateDate: "2026-08-22-15-17-05",
				Prefixes: []p4{{"3.5.140.0/22", "ap-northeast-2", "AMAZON"}}, IPv6: []p6{{"2600:1f00::/24", "us-east-1", "EC2"}}}
			for _, p := range items {
				if strings.Contains(p, ":") {
					v.IPv6 = append(v.IPv6, p6{p, "GLOBAL", "CLOUDFRONT"})
				} else {
					v.Prefixes = append(v.Prefixes, p4{p, "GLOBAL", "CLOUDFRONT"})
				}
			}
			b, _ := json.Marshal(v)
			body = string(b)
		case "json-array":
			b, _ := json.Marshal(items)
			body = string(b)
		default:
			t.Fatalf("no test layout for %s", l.Source.Layout)
		}
		u, _ := url.Parse(l.Source.URL)
		etag := fmt.Sprintf(`"%d"`, len(body))
		mux.HandleFunc("/"+u.Host+u.Path, func(w http.ResponseWriter, r *http.Request) {
			hits.Add(1)
			if r.Header.Get("If-None-Match") == etag {
				w.WriteHeader(http.StatusNotModified)
				return
			}
			w.Header().Set("ETag", etag)
			fmt.Fprint(w, body)
		})
	}
	srv := httptest.NewTLSServer(mux)
	t.Cleanup(srv.Close)
	return func(s string) string {
		u, err := url.Parse(s)
		if err != nil {
			return s
		}
		return srv.URL + "/" + u.Host + u.Path
	}, hits
}

// cdnFrontedLog is a site behind Cloudflare that logs the edge as %h
// (combined): a real bingbot request came through 162.158.106.126, and
// two claims of LohiSoftBot through edges too; one spoofer reached the
// origin directly.
const cdnFrontedLog = `162.158.106.126 - - [02/Dec/2026:10:00:00 +0000] "GET /robots.txt HTTP/1.1" 200 120 "-" "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm) LohiSoftBot/1.0"
162.158.106.126 - - [02/Dec/2026:10:00:05 +0000] "GET / HTTP/1.1" 200 5120 "-" "Mozilla/5.0 (compatible; LohiSoftBot/1.0; +https://lohisoft.com/bot)"
172.70.211.16 - - [02/Dec/2026:10:00:09 +0000] "GET /about HTTP/1.1" 200 2048 "-" "Mozilla/5.0 (compatible; LohiSoftBot/1.0; +https://lohisoft.com/bot)"
203.0.113.7 - - [02/Dec/2026:10:00:12 +0000] "GET /wp-login.php HTTP/1.1" 404 153 "-" "Mozilla/5.0 (compatible; LohiSoftBot/1.0; +https://lohisoft.com/bot)"
`

// cdnMainLog is the same site logging nginx's main format, with
// X-Forwarded-For last: the real clients are in it.
const cdnMainLog = `162.158.106.126 - - [02/Dec/2026:10:00:05 +0000] "GET / HTTP/1.1" 200 5120 "-" "Mozilla/5.0 (compatible; LohiSoftBot/1.0; +https://lohisoft.com/bot)" "203.0.113.7"
172.70.211.16 - - [02/Dec/2026:10:00:09 +0000] "GET /about HTTP/1.1" 200 2048 "-" "Mozilla/5.0 (compatible; LohiSoftBot/1.0; +https://lohisoft.com/bot)" "198.51.100.1, 79.139.58.98"
162.158.106.127 - - [02/Dec/2026:10:00:12 +0000] "GET /x HTTP/1.1" 200 10 "-" "Mozilla/5.0 (compatible; LohiSoftBot/1.0; +https://lohisoft.com/bot)" "-"
`

type cdnReport struct {
	IPs []struct {
		IP, Verdict, Reason, Proxy string
	}
	Inputs []struct {
		ClientField    string `json:"client_field"`
		RealClientHits int64  `json:"real_client_hits"`
	}
	Warnings []string
}

// cdnEnv is a run whose resolver knows the crawler's PTR and forward
// records and denies every other name, and whose IP list is a file.
func cdnEnv(t *testing.T, log string) (env *Env, args []string, zone *dnstest.Zone) {
	zone = dnstest.NewZone(t, "crawler1.bot.lohisoft.com. 3600 IN A 79.139.58.98")
	zone.PTR(t, "79.139.58.98", "crawler1.bot.lohisoft.com")
	list := testutil.TempFile(t, "ips.json", `["79.139.58.98","79.139.58.121"]`)
	env = &Env{Now: func() time.Time { return fixedNow }, Stdin: strings.NewReader(log)}
	return env, []string{"--resolver", dnstest.Serve(t, zone), "--ip-list", list, "--cache-dir", t.TempDir()}, zone
}

func cdnVerdicts(t *testing.T, stdout string) (cdnReport, map[string]string) {
	t.Helper()
	var rep cdnReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, stdout)
	}
	got := map[string]string{}
	for _, ip := range rep.IPs {
		got[ip.IP] = ip.Verdict + "/" + ip.Reason + "/" + ip.Proxy
	}
	return rep, got
}

// TestLogsBehindCDN: behind Cloudflare without the real client logged,
// the edges are unverified (proxy), never looked up, and said once with
// how to log the client; the spoofer that reached the origin directly is
// still spoofed. emit's drop set holds the spoofer only, and nft accepts
// the file.
func TestLogsBehindCDN(t *testing.T) {
	env, args, zone := cdnEnv(t, cdnFrontedLog)
	code, stdout, stderr := identityRun(t, env, append([]string{"logs", "--format", "json", "-"}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	rep, got := cdnVerdicts(t, stdout)
	want := map[string]string{
		"162.158.106.126": "unverified/proxy/cloudflare",
		"172.70.211.16":   "unverified/proxy/cloudflare",
		"203.0.113.7":     "spoofed/no-ptr/",
	}
	if !maps.Equal(got, want) {
		t.Errorf("verdicts %v, want %v", got, want)
	}
	var proxyWarnings []string
	for _, w := range rep.Warnings {
		if strings.HasPrefix(w, "proxy:") {
			proxyWarnings = append(proxyWarnings, w)
		}
	}
	if len(proxyWarnings) != 1 {
		t.Fatalf("proxy warnings %q, want one", proxyWarnings)
	}
	for _, s := range []string{"3 claimed hits from 2 addresses (162.158.106.126, 172.70.211.16)", "Cloudflare edges", "never blocked",
		"$http_cf_connecting_ip in nginx's log_format, %{CF-Connecting-IP}i in Apache's LogFormat", "--trusted-proxy cloudflare",
		"cloudflare's ranges are the built-in snapshot of 2026-08-11 (113 days old"} {
		if !strings.Contains(proxyWarnings[0], s) {
			t.Errorf("the warning lacks %q: %s", s, proxyWarnings[0])
		}
	}
	if rep.Inputs[0].ClientField != "address" {
		t.Errorf("client_field %q", rep.Inputs[0].ClientField)
	}
	for _, edge := range []string{"162.158.106.126", "172.70.211.16"} {
		arpa, _ := dns.ReverseAddr(edge)
		if n := zone.Count(dns.TypePTR, arpa); n != 0 {
			t.Errorf("%s, an edge, was looked up %d times", edge, n)
		}
	}

	env, args, _ = cdnEnv(t, cdnFrontedLog)
	code, rules, stderr := identityRun(t, env, append([]string{"emit", "nftables", "-"}, args...)...)
	if code != 0 {
		t.Fatalf("emit: exit %d: %s", code, stderr)
	}
	if !strings.Contains(rules, "203.0.113.7") || strings.Contains(rules, "162.158.106.126") || strings.Contains(rules, "172.70.211.16") {
		t.Errorf("rules:\n%s", rules)
	}
	nftCheck(t, rules)

	// A report of an earlier run that called an edge spoofed (as the
	// tool did before it knew CDNs) still blocks no edge.
	old := `{"tool":"lohibot-audit","summary":{},"ips":[{"ip":"162.158.106.126","verdict":"spoofed","method":"fcrdns","reason":"no-ptr"},{"ip":"203.0.113.7","verdict":"spoofed","method":"fcrdns","reason":"no-ptr"}]}`
	env, args, _ = cdnEnv(t, "")
	code, rules, stderr = identityRun(t, env, append([]string{"emit", "nftables", "--offline", "--report", testutil.TempFile(t, "old.json", old)}, args[2:]...)...)
	if code != 0 || strings.Contains(rules, "162.158.106.126") || !strings.Contains(rules, "203.0.113.7") || !strings.Contains(stderr, "162.158.106.126 (proxy:") {
		t.Errorf("emit --report: exit %d, stderr %s\n%s", code, stderr, rules)
	}
}

// TestLogsTrustedCDN: with --trusted-proxy cloudflare and the real client
// logged (nginx's main format, detected), the real clients are judged: the
// spoofer behind the edge is spoofed and blocked, the crawler behind it
// genuine; an edge request without the header stays the edge's.
func TestLogsTrustedCDN(t *testing.T) {
	env, args, _ := cdnEnv(t, cdnMainLog)
	code, stdout, stderr := identityRun(t, env, append([]string{"logs", "--format", "json", "--trusted-proxy", "cloudflare", "-"}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	rep, got := cdnVerdicts(t, stdout)
	want := map[string]string{
		"203.0.113.7":     "spoofed/no-ptr/",
		"79.139.58.98":    "genuine//",
		"162.158.106.127": "unverified/proxy/cloudflare",
	}
	if !maps.Equal(got, want) {
		t.Errorf("verdicts %v, want %v", got, want)
	}
	if in := rep.Inputs[0]; in.ClientField != "x-forwarded-for" || in.RealClientHits != 2 {
		t.Errorf("input %+v, want client_field x-forwarded-for, 2 real client hits", in)
	}
	joined := strings.Join(rep.Warnings, "\n")
	if !strings.Contains(joined, "proxy: 1 claimed hit from 1 address (162.158.106.127) came through Cloudflare edges (--trusted-proxy cloudflare) without a usable real client") {
		t.Errorf("warnings %q", rep.Warnings)
	}

	env, args, _ = cdnEnv(t, cdnMainLog)
	code, rules, stderr := identityRun(t, env, append([]string{"emit", "nftables", "--trusted-proxy", "cloudflare", "-"}, args...)...)
	if code != 0 || !strings.Contains(rules, "203.0.113.7") || strings.Contains(rules, "162.158.") || strings.Contains(rules, "79.139.58.98") {
		t.Errorf("emit: exit %d, %s\n%s", code, stderr, rules)
	}
	nftCheck(t, rules)

	// verify says what an edge is, and a bad --trusted-proxy is a usage
	// error.
	env, args, _ = cdnEnv(t, "")
	code, stdout, _ = identityRun(t, env, append([]string{"verify", "--format", "json", "162.158.106.126", "10.1.2.3", "--trusted-proxy", "private"}, args...)...)
	if code != 0 || !strings.Contains(stdout, `"reason": "proxy"`) || !strings.Contains(stdout, `"proxy": "cloudflare"`) || !strings.Contains(stdout, `"proxy": "private"`) {
		t.Errorf("verify: exit %d\n%s", code, stdout)
	}
	code, _, stderr = identityRun(t, &Env{Now: env.Now}, "logs", "--trusted-proxy", "akamai", "--offline", "-")
	if code != fail.ExitUsage || !strings.Contains(stderr, `"akamai" is neither a CDN (cloudflare, fastly, cloudfront, google-lb, bunny), private, nor an address or range`) {
		t.Errorf("--trusted-proxy akamai: exit %d, %s", code, stderr)
	}
}

// nftCheck runs nft -c -f on rules in a network namespace of its own.
func nftCheck(t *testing.T, rules string) {
	t.Helper()
	nft := testutil.NeedTool(t, ".ci/install-rule-checkers", "nft")
	file := testutil.TempFile(t, "rules.nft", rules)
	var out []byte
	var err error
	for _, prefix := range [][]string{{"unshare", "-rn"}, {"unshare", "-n"}} {
		out, err = exec.Command(prefix[0], append(prefix[1:], nft, "-c", "-f", file)...).CombinedOutput()
		if err == nil {
			return
		}
	}
	t.Fatalf("nft -c -f rejected the rules: %v\n%s\n%s", err, out, rules)
}

// TestEnvoyClientField: Envoy's default format takes its clients from
// X-Forwarded-For (it logs no connecting address), and the report says so;
// a request without one has no client, which the report does not call a
// host name.
func TestEnvoyClientField(t *testing.T) {
	const log = `[2026-12-02T10:00:05.310Z] "GET / HTTP/1.1" 200 - 0 2750 26 25 "10.0.0.4, 203.0.113.7" "Mozilla/5.0 (compatible; LohiSoftBot/1.0; +https://lohisoft.com/bot)" "cc21d9b0" "www.example.org" "10.0.2.1:80"
[2026-12-02T10:00:06.310Z] "GET /x HTTP/1.1" 200 - 0 2750 26 25 "-" "Mozilla/5.0 (compatible; LohiSoftBot/1.0; +https://lohisoft.com/bot)" "cc21d9b1" "www.example.org" "10.0.2.1:80"
`
	env, args, _ := cdnEnv(t, log)
	code, stdout, stderr := identityRun(t, env, append([]string{"logs", "--format", "json", "--log-format", "envoy", "-"}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	rep, got := cdnVerdicts(t, stdout)
	if want := map[string]string{"203.0.113.7": "spoofed/no-ptr/", "-": "unverified/not-an-address/"}; !maps.Equal(got, want) {
		t.Errorf("verdicts %v, want %v", got, want)
	}
	if in := rep.Inputs[0]; in.ClientField != "x-forwarded-for" || in.RealClientHits != 2 {
		t.Errorf("input %+v, want client_field x-forwarded-for, 2 real client hits", in)
	}
	env, args, _ = cdnEnv(t, log)
	code, page, stderr := identityRun(t, env, append([]string{"logs", "--format", "html", "--log-format", "envoy", "-"}, args...)...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if s := html.UnescapeString(page); strings.Contains(s, "host name") || !strings.Contains(s, "the log names no client") {
		t.Errorf("the page calls the unknown client a host name, or does not say no client was logged")
	}
}
