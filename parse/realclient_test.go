package parse

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot-audit/internal/addrset"
	"github.com/lohisoft/lohibot-audit/proxy"
)

func mustSet(t testing.TB, all bool, specs ...string) *proxy.Set {
	t.Helper()
	s, err := proxy.NewSet(nil, specs, all)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// mainLine is nginx's main format, as written behind a proxy.
func mainLine(remote, ua, xff string) string {
	return remote + ` - - [04/Dec/2026:10:00:00 +0000] "GET /robots.txt HTTP/1.1" 200 120 "-" "` + ua + `" "` + xff + `"`
}

const bingbot = "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm) LohiSoftBot/1.0"

// TestRealClient: behind a trusted proxy the client is read from the
// logged header, walked from the right past trusted addresses; a header
// that gives no client makes the request a proxy's. An untrusted
// connecting address is the client, whatever the header says.
func TestRealClient(t *testing.T) {
	cf := mustSet(t, false, "cloudflare")
	cfPrivate := mustSet(t, false, "cloudflare", "private")
	tests := []struct {
		name   string
		trust  *proxy.Set
		all    bool
		format *Format
		line   string
		client string // "" for the zero Addr
		peer   string
		from   ClientSource
		proxy  bool
	}{
		{"cloudflare edge", cf, false, NginxMain, mainLine("162.158.106.126", bingbot, "157.55.39.1"),
			"157.55.39.1", "162.158.106.126", FromXForwardedFor, false},
		{"client's own header on the left is its word", cf, false, NginxMain, mainLine("162.158.106.126", bingbot, "66.249.66.1, 157.55.39.1"),
			"157.55.39.1", "162.158.106.126", FromXForwardedFor, false},
		{"own proxy behind cloudflare", cfPrivate, false, NginxMain, mainLine("10.0.0.2", bingbot, "157.55.39.1, 162.158.106.126"),
			"157.55.39.1", "10.0.0.2", FromXForwardedFor, false},
		{"untrusted connecting address", cf, false, NginxMain, mainLine("203.0.113.9", bingbot, "157.55.39.1"),
			"203.0.113.9", "", FromAddress, false},
		{"edge not trusted", mustSet(t, false, "fastly"), false, NginxMain, mainLine("162.158.106.126", bingbot, "157.55.39.1"),
			"162.158.106.126", "", FromAddress, false},
		{"header absent", cf, false, NginxMain, mainLine("162.158.106.126", bingbot, "-"),
			"162.158.106.126", "", FromXForwardedFor, true},
		{"header not an address", cf, false, NginxMain, mainLine("162.158.106.126", bingbot, "unknown"),
			"162.158.106.126", "", FromXForwardedFor, true},
		{"escaped header", cf, false, NginxMain, mainLine("162.158.106.126", bingbot, `157.55.39.1\x0a`),
			"162.158.106.126", "", FromXForwardedFor, true},
		{"only trusted addresses", cfPrivate, false, NginxMain, mainLine("162.158.106.126", bingbot, "10.1.1.1, 162.158.0.9"),
			"162.158.106.126", "", FromXForwardedFor, true},
		{"host name in the header", cf, false, NginxMain, mainLine("162.158.106.126", bingbot, "crawler.example.com"),
			"162.158.106.126", "", FromXForwardedFor, true},
		{"empty element", cf, false, NginxMain, mainLine("162.158.106.126", bingbot, "157.55.39.1, "),
			"162.158.106.126", "", FromXForwardedFor, true},
		{"ports", cf, false, NginxMain, mainLine("162.158.106.126", bingbot, "[2001:db8::7]:443,157.55.39.1:51234"),
			"157.55.39.1", "162.158.106.126", FromXForwardedFor, false},
		{"ipv6 and mapped", cf, false, NginxMain, mainLine("2606:4700:10::6816:1", bingbot, "::ffff:157.55.39.1"),
			"157.55.39.1", "2606:4700:10::6816:1", FromXForwardedFor, false},
		{"trust-xff", nil, true, NginxMain, mainLine("198.51.100.20", bingbot, "66.249.66.1, 157.55.39.1"),
			"157.55.39.1", "198.51.100.20", FromXForwardedFor, false},
		{"trust-xff header absent", nil, true, NginxMain, mainLine("198.51.100.20", bingbot, "-"),
			"198.51.100.20", "", FromXForwardedFor, true},
		{"trust-xff, format without a header", nil, true, Combined, mainLine("198.51.100.20", bingbot, "x")[:len(mainLine("198.51.100.20", bingbot, "x"))-4],
			"198.51.100.20", "", FromAddress, false},
		{"cf-connecting-ip", cf, false, mustNginx(t, `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" $http_cf_connecting_ip`),
			`172.70.1.2 - - [04/Dec/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 1 "-" "` + bingbot + `" 157.55.39.1`,
			"157.55.39.1", "172.70.1.2", FromCFConnectingIP, false},
		{"apache true-client-ip", mustSet(t, false, "198.51.100.0/24"), false, mustApache(t, `%h %l %u %t "%r" %>s %b "%{Referer}i" "%{User-Agent}i" "%{True-Client-IP}i"`),
			`198.51.100.3 - - [04/Dec/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 1 "-" "` + bingbot + `" "157.55.39.1"`,
			"157.55.39.1", "198.51.100.3", FromTrueClientIP, false},
		{"x-real-ip from own proxy", mustSet(t, false, "private"), false, mustNginx(t, `$remote_addr - $remote_user [$time_local] "$request" $status $body_bytes_sent "$http_referer" "$http_user_agent" "$http_x_real_ip"`),
			`192.168.1.10 - - [04/Dec/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 1 "-" "` + bingbot + `" "157.55.39.1"`,
			"157.55.39.1", "192.168.1.10", FromXRealIP, false},
		{"x-forwarded-for first", cf, false, mustNginx(t, `$remote_addr [$time_local] "$request" $status $body_bytes_sent "$http_user_agent" "$http_x_real_ip" "$http_x_forwarded_for"`),
			`162.158.1.1 [04/Dec/2026:10:00:00 +0000] "GET / HTTP/1.1" 200 1 "` + bingbot + `" "66.249.66.1" "157.55.39.1"`,
			"157.55.39.1", "162.158.1.1", FromXForwardedFor, false},
		{"envoy behind cloudflare", cf, false, Envoy,
			`[2026-12-01T06:25:01.310Z] "GET /index.html HTTP/1.1" 200 - 0 2750 26 25 "157.55.39.1,162.158.106.126" "` + bingbot + `" "cc21d9b0" "www.example.org" "10.0.2.1:80"`,
			"157.55.39.1", "162.158.106.126", FromXForwardedFor, false},
		{"envoy, no proxy trusted", nil, false, Envoy,
			`[2026-12-01T06:25:01.310Z] "GET /index.html HTTP/1.1" 200 - 0 2750 26 25 "66.249.66.1,157.55.39.1" "` + bingbot + `" "cc21d9b0" "www.example.org" "10.0.2.1:80"`,
			"157.55.39.1", "", FromXForwardedFor, false},
		{"envoy without x-forwarded-for", cf, false, Envoy,
			`[2026-12-01T06:25:01.310Z] "GET /index.html HTTP/1.1" 200 - 0 2750 26 25 "-" "` + bingbot + `" "cc21d9b0" "www.example.org" "10.0.2.1:80"`,
			"invalid IP", "", FromXForwardedFor, false},
		{"iis cs(x-forwarded-for)", cf, false, W3C, w3cLine("cs(X-Forwarded-For)", "162.158.106.126", "66.249.66.1,+157.55.39.1"),
			"157.55.39.1", "162.158.106.126", FromXForwardedFor, false},
		{"iis x-forwarded-for", cf, false, W3C, w3cLine("x-forwarded-for", "162.158.106.126", "157.55.39.1"),
			"157.55.39.1", "162.158.106.126", FromXForwardedFor, false},
		{"iis cs(cf-connecting-ip)", cf, false, W3C, w3cLine("cs(CF-Connecting-IP)", "162.158.106.126", "157.55.39.1"),
			"157.55.39.1", "162.158.106.126", FromCFConnectingIP, false},
		{"iis cs(true-client-ip)", mustSet(t, false, "198.51.100.0/24"), false, W3C, w3cLine("cs(True-Client-IP)", "198.51.100.3", "157.55.39.1"),
			"157.55.39.1", "198.51.100.3", FromTrueClientIP, false},
		{"iis cs(x-real-ip)", mustSet(t, false, "private"), false, W3C, w3cLine("cs(X-Real-IP)", "10.0.0.9", "157.55.39.1"),
			"157.55.39.1", "10.0.0.9", FromXRealIP, false},
		{"iis cs(x-real-ip) absent", mustSet(t, false, "private"), false, W3C, w3cLine("cs(X-Real-IP)", "10.0.0.9", "-"),
			"10.0.0.9", "", FromXRealIP, true},
		{"iis cs(cf-connecting-ip), edge not trusted", mustSet(t, false, "fastly"), false, W3C, w3cLine("cs(CF-Connecting-IP)", "162.158.106.126", "157.55.39.1"),
			"162.158.106.126", "", FromAddress, false},
		{"caddy behind cloudflare", cf, false, Caddy,
			`{"level":"info","ts":1796106301.5241024,"logger":"http.log.access.log0","msg":"handled request","request":{"remote_ip":"162.158.106.126","remote_port":"41342","client_ip":"162.158.106.126","proto":"HTTP/2.0","method":"GET","host":"www.example.org","uri":"/index.html","headers":{"User-Agent":["` + bingbot + `"],"Cf-Connecting-Ip":["157.55.39.1"]}},"duration":0.026,"size":2750,"status":200}`,
			"157.55.39.1", "162.158.106.126", FromCFConnectingIP, false},
		{"json", cf, false, JSON,
			`{"remote_addr":"162.158.106.126","time_local":"04/Dec/2026:10:00:00 +0000","request":"GET / HTTP/1.1","status":200,"http_user_agent":"` + bingbot + `","http_x_forwarded_for":"157.55.39.1"}`,
			"157.55.39.1", "162.158.106.126", FromXForwardedFor, false},
		{"json cf key", cf, false, JSON,
			`{"remote_addr":"162.158.106.126","time_local":"04/Dec/2026:10:00:00 +0000","request":"GET / HTTP/1.1","status":200,"http_user_agent":"` + bingbot + `","cf_connecting_ip":"157.55.39.1"}`,
			"157.55.39.1", "162.158.106.126", FromCFConnectingIP, false},
		{"json without the key", cf, false, JSON,
			`{"remote_addr":"162.158.106.126","time_local":"04/Dec/2026:10:00:00 +0000","request":"GET / HTTP/1.1","status":200,"http_user_agent":"` + bingbot + `"}`,
			"162.158.106.126", "", FromAddress, false},
		{"json empty header", cf, false, JSON,
			`{"remote_addr":"162.158.106.126","time_local":"04/Dec/2026:10:00:00 +0000","request":"GET / HTTP/1.1","status":200,"http_user_agent":"` + bingbot + `","http_x_forwarded_for":""}`,
			"162.158.106.126", "", FromXForwardedFor, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(tc.line+"\n"), Options{Name: "x", Format: tc.format, Trust: tc.trust, TrustXFF: tc.all, Claims: testClaims})
			recs := readAll(t, r)
			if len(recs) != 1 {
				t.Fatalf("%d records (%v): %v", len(recs), r.Err(), r.Examples())
			}
			rec := recs[0]
			peer := ""
			if rec.Peer.IsValid() {
				peer = rec.Peer.String()
			}
			if rec.Client.String() != tc.client || peer != tc.peer || rec.ClientFrom != tc.from || rec.Proxy != tc.proxy {
				t.Errorf("client %s peer %q from %s proxy %v, want %s %q %s %v", rec.Client, peer, rec.ClientFrom, rec.Proxy, tc.client, tc.peer, tc.from, tc.proxy)
			}
		})
	}
}

// w3cLine is an IIS log of one request whose real-client header is
// logged in the field named header.
func w3cLine(header, cip, value string) string {
	return "#Fields: date time c-ip cs-method cs-uri-stem sc-status cs(User-Agent) " + header + "\n" +
		"2026-12-04 10:00:00 " + cip + " GET / 200 " + strings.ReplaceAll(bingbot, " ", "+") + " " + value
}

func mustNginx(t *testing.T, s string) *Format {
	t.Helper()
	f, err := CompileNginx(s)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func mustApache(t *testing.T, s string) *Format {
	t.Helper()
	f, err := CompileApache(s)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestRealClientDetected: nginx's main format is detected, and behind a
// trusted proxy its X-Forwarded-For gives the client; the format says
// which headers it logs.
func TestRealClientDetected(t *testing.T) {
	in := mainLine("162.158.106.126", bingbot, "157.55.39.1") + "\n" + mainLine("162.158.106.127", "Mozilla/5.0", "198.51.100.1") + "\n"
	r := NewReader(strings.NewReader(in), Options{Name: "x", Trust: mustSet(t, false, "cloudflare"), Claims: testClaims})
	recs := readAll(t, r)
	if r.Format() != NginxMain || len(recs) != 1 || recs[0].Client.String() != "157.55.39.1" {
		t.Fatalf("format %v, records %v", r.Format().Name(), recs)
	}
	if got := NginxMain.RealClientFields(); len(got) != 1 || got[0] != FromXForwardedFor {
		t.Errorf("nginx main logs %v", got)
	}
	if got := Combined.RealClientFields(); len(got) != 0 {
		t.Errorf("combined logs %v", got)
	}
}

// TestRealClientListed: a request without the token from a listed
// address behind a trusted proxy is kept by its real client, not by the
// proxy's address, and reading such lines allocates nothing.
func TestRealClientListed(t *testing.T) {
	listed := addrset.New([]netip.Prefix{netip.MustParsePrefix("79.139.58.98/32")})
	in := mainLine("162.158.106.126", "Mozilla/5.0", "79.139.58.98") + "\n" +
		mainLine("162.158.106.126", "Mozilla/5.0", "198.51.100.1") + "\n" +
		mainLine("79.139.58.98", "Mozilla/5.0", "198.51.100.1") + "\n"
	r := NewReader(strings.NewReader(in), Options{Name: "x", Format: NginxMain, Listed: listed, Trust: mustSet(t, false, "cloudflare"), Claims: testClaims})
	recs := readAll(t, r)
	if len(recs) != 2 || recs[0].Line != 1 || recs[0].Client.String() != "79.139.58.98" || recs[1].Line != 3 {
		t.Fatalf("records %+v", recs)
	}

	lp := newLineParser(NginxMain, testClaims, listed, "s", false)
	lp.trust = mustSet(t, false, "cloudflare")
	line := []byte(mainLine("162.158.106.126", "Mozilla/5.0", "203.0.113.50, 198.51.100.1"))
	var rec Record
	if n := testing.AllocsPerRun(100, func() { lp.parse(line, &rec) }); n != 0 {
		t.Errorf("%v allocations per unclaimed line behind a trusted proxy", n)
	}
}

// FuzzHeaderClient: any header value gives an address that is no trusted
// proxy, or nothing; the text and the bytes are read alike, and nothing
// panics.
func FuzzHeaderClient(f *testing.F) {
	for _, s := range []string{"157.55.39.1", "66.249.66.1, 157.55.39.1", "unknown", "[2001:db8::1]:443", "10.0.0.1,162.158.0.1", ",", " , ", "1.2.3.4:", "[::1", "fe80::1%eth0", "::ffff:10.0.0.1"} {
		f.Add(s)
	}
	trust, err := proxy.NewSet(nil, []string{"cloudflare", "private"}, false)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, v string) {
		a, ok := headerClient(trust, v)
		b, okb := headerClient(trust, []byte(v))
		if a != b || ok != okb {
			t.Fatalf("%q: string %v %v, bytes %v %v", v, a, ok, b, okb)
		}
		if ok && (!a.IsValid() || trust.InTrusted(a) || a.Is4In6() || a.Zone() != "") {
			t.Fatalf("%q gave %v", v, a)
		}
	})
}
