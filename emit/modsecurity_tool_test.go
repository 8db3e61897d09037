package emit

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot-audit/internal/testutil"
)

// Paths of the Debian/Ubuntu packages libapache2-mod-security2 and
// libnginx-mod-http-modsecurity.
const (
	apacheModules     = "/usr/lib/apache2/modules"
	nginxModSecModule = "/usr/lib/nginx/modules/ngx_http_modsecurity_module.so"
)

// laterRule stands for the site's other rules, included after the
// generated file: it denies everything that reaches it.
const laterRule = `SecAction "id:1,phase:1,deny,status:403,log,t:none,msg:'a later rule'"` + "\n"

// modsecVariants are the ModSecurity inputs checked with the real parsers.
var modsecVariants = []struct {
	name string
	in   func(Mode) Input
	opts ModSecOptions
}{
	{"fixture", fixtureInput, ModSecOptions{}},
	{"hostile", hostileInput, ModSecOptions{IDBase: 7}},
	{"large", largeInput, ModSecOptions{IDBase: 90000}},
	{"crawlers", crawlersInput, ModSecOptions{}},
	{"crawlers-google", crawlersGoogleInput, ModSecOptions{IDBase: 1}},
}

// apacheSite writes a self-contained Apache configuration that loads
// mod_security2 and includes rules (and extra, if any), and returns its
// path.
func apacheSite(t *testing.T, dir string, port int, rules, extra string) string {
	t.Helper()
	mods := needFile(t, apacheModules, "apache2 modules")
	needFile(t, filepath.Join(mods, "mod_security2.so"), "libapache2-mod-security2")
	docs := filepath.Join(dir, "htdocs")
	if err := os.MkdirAll(docs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(docs, "index.html"), []byte("ok\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "ServerRoot %q\nServerName localhost\nListen 127.0.0.1:%d\n", dir, port)
	fmt.Fprintf(&b, "PidFile %q\nDefaultRuntimeDir %q\nErrorLog %q\nLogLevel warn\n", filepath.Join(dir, "httpd.pid"), dir, filepath.Join(dir, "error.log"))
	for _, m := range []string{"mpm_event", "authz_core", "dir", "unique_id", "security2"} {
		so := filepath.Join(mods, "mod_"+m+".so")
		if _, err := os.Stat(so); err != nil {
			if m == "unique_id" {
				continue
			}
			testutil.Missing(t, "apache module %s: %v", m, err)
		}
		fmt.Fprintf(&b, "LoadModule %s_module %q\n", m, so)
	}
	if os.Geteuid() == 0 {
		b.WriteString("User www-data\nGroup www-data\n")
	}
	fmt.Fprintf(&b, "DocumentRoot %q\n<Directory %q>\n  Require all granted\n</Directory>\nDirectoryIndex index.html\n", docs, docs)
	b.WriteString("SecRuleEngine On\nSecRequestBodyAccess Off\nSecResponseBodyAccess Off\nSecAuditEngine Off\n")
	fmt.Fprintf(&b, "SecTmpDir %q\nSecDataDir %q\n", dir, dir)
	fmt.Fprintf(&b, "Include %q\n", rules)
	if extra != "" {
		fmt.Fprintf(&b, "Include %q\n", extra)
	}
	conf := filepath.Join(dir, "httpd.conf")
	if err := os.WriteFile(conf, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return conf
}

// nginxSite writes a self-contained nginx configuration that loads the
// ModSecurity module with rules (and extra, if any), and returns its path.
func nginxSite(t *testing.T, dir string, port int, rules, extra string) string {
	t.Helper()
	mod := needFile(t, nginxModSecModule, "libnginx-mod-http-modsecurity")
	var m strings.Builder
	m.WriteString("SecRuleEngine On\nSecRequestBodyAccess Off\nSecResponseBodyAccess Off\nSecAuditEngine Off\n")
	fmt.Fprintf(&m, "Include %s\n", rules)
	if extra != "" {
		fmt.Fprintf(&m, "Include %s\n", extra)
	}
	main := filepath.Join(dir, "modsec-main.conf")
	if err := os.WriteFile(main, []byte(m.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "load_module %s;\ndaemon off;\nmaster_process on;\nworker_processes 1;\n", mod)
	fmt.Fprintf(&b, "pid %s;\nerror_log %s warn;\n", filepath.Join(dir, "nginx.pid"), filepath.Join(dir, "error.log"))
	if os.Geteuid() == 0 {
		b.WriteString("user www-data;\n")
	}
	b.WriteString("events { worker_connections 64; }\nhttp {\n  access_log off;\n")
	for _, p := range []string{"client_body", "proxy", "fastcgi", "uwsgi", "scgi"} {
		fmt.Fprintf(&b, "  %s_temp_path %s;\n", p, filepath.Join(dir, p))
	}
	fmt.Fprintf(&b, "  server {\n    listen 127.0.0.1:%d;\n    modsecurity on;\n    modsecurity_rules_file %s;\n", port, main)
	b.WriteString("    location / { return 200 \"ok\\n\"; }\n  }\n}\n")
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return conf
}

// nginxArgs are the arguments that point nginx at dir and conf; -e (nginx
// 1.19.5 and later) keeps it away from the system error log.
func nginxArgs(t *testing.T, nginx, dir, conf string) []string {
	t.Helper()
	args := []string{"-p", dir, "-c", conf}
	if out, _ := exec.Command(nginx, "-h").CombinedOutput(); bytes.Contains(out, []byte("-e filename")) {
		args = append(args, "-e", filepath.Join(dir, "error.log"))
	}
	return args
}

// writeRules writes a mode's ModSecurity rules into dir.
func writeRules(t *testing.T, dir string, in Input, opts ModSecOptions) (string, []byte) {
	t.Helper()
	var buf bytes.Buffer
	if _, err := ModSecurity(&buf, in, opts); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "lohibot.conf")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, buf.Bytes()
}

// TestModSecurityApacheConfigTest loads every mode's rules into Apache with
// mod_security2 (ModSecurity 2) and runs apache2 -t.
func TestModSecurityApacheConfigTest(t *testing.T) {
	apache := testutil.NeedTool(t, ".ci/install-rule-checkers", "apache2")
	for _, mode := range Modes {
		for _, v := range modsecVariants {
			t.Run(string(mode)+"/"+v.name, func(t *testing.T) {
				dir := worldReadableDir(t)
				rules, data := writeRules(t, dir, v.in(mode), v.opts)
				conf := apacheSite(t, dir, freePort(t), rules, "")
				out, err := exec.Command(apache, "-t", "-f", conf).CombinedOutput()
				if err != nil || !bytes.Contains(out, []byte("Syntax OK")) {
					t.Fatalf("apache2 -t: %v\n%s\n--- rules:\n%s", err, out, head(string(data), 30))
				}
			})
		}
	}
}

// TestModSecurityApacheRejectsBrokenRule shows that apache2 -t does parse
// the included rules: a broken rule fails it.
func TestModSecurityApacheRejectsBrokenRule(t *testing.T) {
	apache := testutil.NeedTool(t, ".ci/install-rule-checkers", "apache2")
	dir := worldReadableDir(t)
	rules := filepath.Join(dir, "broken.conf")
	if err := os.WriteFile(rules, []byte(`SecRule REMOTE_ADDR "@ipMatch 1.2.3.4" "id:5,phase:1,deny,nosuchaction"`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	conf := apacheSite(t, dir, freePort(t), rules, "")
	if out, err := exec.Command(apache, "-t", "-f", conf).CombinedOutput(); err == nil {
		t.Fatalf("apache2 -t accepted a broken rule:\n%s", out)
	}
}

// TestModSecurityNginxConfigTest loads every mode's rules into nginx with
// libmodsecurity 3 and runs nginx -t.
func TestModSecurityNginxConfigTest(t *testing.T) {
	nginx := testutil.NeedTool(t, ".ci/install-rule-checkers", "nginx")
	for _, mode := range Modes {
		for _, v := range modsecVariants {
			t.Run(string(mode)+"/"+v.name, func(t *testing.T) {
				dir := worldReadableDir(t)
				rules, data := writeRules(t, dir, v.in(mode), v.opts)
				conf := nginxSite(t, dir, freePort(t), rules, "")
				out, err := exec.Command(nginx, append([]string{"-t"}, nginxArgs(t, nginx, dir, conf)...)...).CombinedOutput()
				if err != nil || !bytes.Contains(out, []byte("test is successful")) {
					t.Fatalf("nginx -t: %v\n%s\n--- rules:\n%s", err, out, head(string(data), 30))
				}
			})
		}
	}
}

// TestModSecurityNginxRejectsBrokenRule shows that nginx -t does parse the
// rules with libmodsecurity: a broken rule fails it.
func TestModSecurityNginxRejectsBrokenRule(t *testing.T) {
	nginx := testutil.NeedTool(t, ".ci/install-rule-checkers", "nginx")
	dir := worldReadableDir(t)
	rules := filepath.Join(dir, "broken.conf")
	if err := os.WriteFile(rules, []byte(`SecRule REMOTE_ADDR "@ipMatch 1.2.3.4" "id:5,phase:1,deny,nosuchaction"`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	conf := nginxSite(t, dir, freePort(t), rules, "")
	if out, err := exec.Command(nginx, append([]string{"-t"}, nginxArgs(t, nginx, dir, conf)...)...).CombinedOutput(); err == nil {
		t.Fatalf("nginx -t accepted a broken rule:\n%s", out)
	}
}

// e2eCase is one request and the status it must get.
type e2eCase struct {
	src, ua string
	want    int
}

// e2eModes are the end-to-end scenarios. The rules are made for public
// addresses (loopback never enters a rule) and the test then moves them
// onto loopback source addresses, so that requests from 127.0.0.x play the
// crawler (127.0.0.10), a spoofer seen in the logs (127.0.0.20) and
// anybody else (127.0.0.30).
var e2eModes = []struct {
	name    string
	mode    Mode
	later   bool // include laterRule after the generated rules
	fillers int  // genuine addresses sorted before the crawler's, to split the exempt list
	cases   []e2eCase
}{
	{"block-spoofed", BlockSpoofed, false, 0, []e2eCase{
		{"127.0.0.30", "Mozilla/5.0 (X11; Linux x86_64)", 200},
		{"127.0.0.30", "LohiSoftBot/1.0 (+message@lohisoft.com)", 403},
		{"127.0.0.30", "Mozilla/5.0 (compatible; lohisoftbot/1.0; +https://lohisoft.com/bot)", 403},
		{"127.0.0.10", "LohiSoftBot/1.0 (+message@lohisoft.com)", 200},
		{"127.0.0.20", "Mozilla/5.0 (X11; Linux x86_64)", 403},
		// No claims as the audit reads them: the token inside other
		// product tokens.
		{"127.0.0.30", "NotLohiSoftBotX/1.0", 200},
		{"127.0.0.30", "LohiSoftBot-Image/1.0", 200},
		{"127.0.0.30", "Mozilla/5.0 (+LOHISOFTBOT)", 200},
	}},
	// The crawler's address sits in the second @ipMatch of the chain.
	{"block-spoofed-chained", BlockSpoofed, false, ModSecChunk + 10, []e2eCase{
		{"127.0.0.30", "LohiSoftBot/1.0 (+message@lohisoft.com)", 403},
		{"127.0.0.10", "LohiSoftBot/1.0 (+message@lohisoft.com)", 200},
		{"127.0.0.30", "Mozilla/5.0 (X11; Linux x86_64)", 200},
	}},
	{"block-bot", BlockBot, false, 0, []e2eCase{
		{"127.0.0.10", "LohiSoftBot/1.0 (+message@lohisoft.com)", 403},
		{"127.0.0.10", "curl/8.0", 403},
		{"127.0.0.30", "LohiSoftBot/1.0 (+message@lohisoft.com)", 200},
	}},
	{"allow-bot", AllowBot, true, 0, []e2eCase{
		{"127.0.0.10", "LohiSoftBot/1.0 (+message@lohisoft.com)", 200},
		{"127.0.0.30", "Mozilla/5.0 (X11; Linux x86_64)", 403},
	}},
}

// e2eRules writes a mode's rules with the crawler at 127.0.0.10 and the
// spoofer at 127.0.0.20, and the later rule when asked.
func e2eRules(t *testing.T, dir string, mode Mode, later bool, fillers int) (rules, extra string) {
	t.Helper()
	in := Input{
		Mode:     mode,
		Sources:  []string{"e2e"},
		Crawlers: []CrawlerInput{{Tokens: lohiTokens, Spoofed: addrs("203.0.113.20"), Genuine: addrs("79.139.58.98"), Listed: prefixes("79.139.58.98/32")}},
	}
	for i := 0; i < fillers; i++ {
		in.one().Genuine = append(in.one().Genuine, netip.AddrFrom4([4]byte{1, 0, byte(i / 250), byte(i%250 + 1)}))
	}
	var buf bytes.Buffer
	if _, err := ModSecurity(&buf, in, ModSecOptions{}); err != nil {
		t.Fatal(err)
	}
	text := buf.String()
	if strings.Count(text, "79.139.58.98") != 1 {
		t.Fatalf("want the crawler address once in the rules:\n%s", text)
	}
	text = strings.Replace(text, "79.139.58.98", "127.0.0.10", 1)
	if mode == BlockSpoofed {
		if strings.Count(text, "203.0.113.20") != 1 {
			t.Fatalf("want the spoofer once in the rules:\n%s", text)
		}
		text = strings.Replace(text, "203.0.113.20", "127.0.0.20", 1)
	}
	rules = filepath.Join(dir, "lohibot.conf")
	if err := os.WriteFile(rules, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if later {
		extra = filepath.Join(dir, "later.conf")
		if err := os.WriteFile(extra, []byte(laterRule), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return rules, extra
}

// TestModSecurityApacheEndToEnd starts Apache with mod_security2 and the
// generated rules on 127.0.0.1 and checks the status of real requests.
func TestModSecurityApacheEndToEnd(t *testing.T) {
	apache := testutil.NeedTool(t, ".ci/install-rule-checkers", "apache2")
	for _, m := range e2eModes {
		t.Run(m.name, func(t *testing.T) {
			dir := worldReadableDir(t)
			rules, extra := e2eRules(t, dir, m.mode, m.later, m.fillers)
			port := freePort(t)
			conf := apacheSite(t, dir, port, rules, extra)
			startServer(t, port, filepath.Join(dir, "error.log"), apache, "-f", conf, "-DFOREGROUND")
			for _, c := range m.cases {
				if got := statusFrom(t, port, c.src, c.ua); got != c.want {
					log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
					t.Errorf("from %s with %q: status %d, want %d\n%s", c.src, c.ua, got, c.want, log)
				}
			}
		})
	}
}

// TestModSecurityNginxEndToEnd starts nginx with libmodsecurity 3 and the
// generated rules on 127.0.0.1 and checks the status of real requests.
func TestModSecurityNginxEndToEnd(t *testing.T) {
	nginx := testutil.NeedTool(t, ".ci/install-rule-checkers", "nginx")
	for _, m := range e2eModes {
		t.Run(m.name, func(t *testing.T) {
			dir := worldReadableDir(t)
			rules, extra := e2eRules(t, dir, m.mode, m.later, m.fillers)
			port := freePort(t)
			conf := nginxSite(t, dir, port, rules, extra)
			startServer(t, port, filepath.Join(dir, "error.log"), append([]string{nginx}, nginxArgs(t, nginx, dir, conf)...)...)
			for _, c := range m.cases {
				if got := statusFrom(t, port, c.src, c.ua); got != c.want {
					log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
					t.Errorf("from %s with %q: status %d, want %d\n%s", c.src, c.ua, got, c.want, log)
				}
			}
		})
	}
}

// TestModSecurityTokensAgreeWithReader runs the token rules of crawlers
// with real and odd tokens in Apache (ModSecurity 2) and nginx
// (libmodsecurity 3): a request from an address that is no crawler's is
// denied exactly when the audit would read its User-Agent as a claim.
func TestModSecurityTokensAgreeWithReader(t *testing.T) {
	in := Input{Mode: BlockSpoofed, Sources: []string{"agree"}, Named: true}
	var judges []claimJudges
	for i, toks := range oddTokens {
		in.Crawlers = append(in.Crawlers, CrawlerInput{Name: fmt.Sprintf("c%d", i), Tokens: toks,
			Listed: []netip.Prefix{netip.PrefixFrom(netip.AddrFrom4([4]byte{79, 139, 58, byte(i + 1)}), 32)}})
		judges = append(judges, newClaimJudges(t, toks))
	}
	uas := slices.Clone(agreementUAs)
	rng := rand.New(rand.NewPCG(3, 4))
	for range 100 {
		a, b := agreementUAs[rng.IntN(len(agreementUAs))], agreementUAs[rng.IntN(len(agreementUAs))]
		uas = append(uas, a[:rng.IntN(len(a)+1)]+b[rng.IntN(len(b)+1):])
	}
	claimed := func(ua string) bool {
		return slices.ContainsFunc(judges, func(j claimJudges) bool { return j.reader(ua) })
	}
	servers := []struct {
		name, tool string
		start      func(t *testing.T, tool, dir string, port int, rules string)
	}{
		{"apache", "apache2", func(t *testing.T, tool, dir string, port int, rules string) {
			conf := apacheSite(t, dir, port, rules, "")
			startServer(t, port, filepath.Join(dir, "error.log"), tool, "-f", conf, "-DFOREGROUND")
		}},
		{"nginx", "nginx", func(t *testing.T, tool, dir string, port int, rules string) {
			conf := nginxSite(t, dir, port, rules, "")
			startServer(t, port, filepath.Join(dir, "error.log"), append([]string{tool}, nginxArgs(t, tool, dir, conf)...)...)
		}},
	}
	for _, srv := range servers {
		t.Run(srv.name, func(t *testing.T) {
			tool := testutil.NeedTool(t, ".ci/install-rule-checkers", srv.tool)
			dir := worldReadableDir(t)
			rules, data := writeRules(t, dir, in, ModSecOptions{})
			port := freePort(t)
			srv.start(t, tool, dir, port, rules)
			denied := 0
			for _, ua := range uas {
				want := 200
				if claimed(ua) {
					want = 403
				}
				got := statusFrom(t, port, "127.0.0.30", ua)
				if got != want {
					t.Errorf("User-Agent %q: status %d, want %d", ua, got, want)
				}
				if got == 403 {
					denied++
				}
			}
			if denied < 20 || denied > len(uas)-20 {
				t.Errorf("%d of %d requests denied: the cases do not exercise both sides", denied, len(uas))
			}
			if t.Failed() {
				t.Logf("rules:\n%s", data)
			}
		})
	}
}
