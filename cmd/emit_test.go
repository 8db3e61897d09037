package cmd

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/internal/dnstest"
	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/verify"
)

// emitTestEnv is an in-memory environment with no config file, a fixed
// clock and the given stdin.
func emitTestEnv(t *testing.T, stdin string, now time.Time) (*Env, *bytes.Buffer, *bytes.Buffer) {
	t.Helper()
	home := t.TempDir()
	var out, errb bytes.Buffer
	vars := map[string]string{"HOME": home, "XDG_CONFIG_HOME": filepath.Join(home, "config"), "XDG_CACHE_HOME": filepath.Join(home, "cache")}
	return &Env{
		Stdin:  strings.NewReader(stdin),
		Stdout: &out,
		Stderr: &errb,
		Getenv: func(k string) string { return vars[k] },
		Now:    func() time.Time { return now },
	}, &out, &errb
}

var emitNow = time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)

// emitIPListFile writes the crawler's documented list as a file.
func emitIPListFile(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "ips.json")
	if err := os.WriteFile(p, []byte(`{"prefixes":[{"ipv4Prefix":"79.139.58.98/32"},{"ipv4Prefix":"79.139.58.121/32"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// emitReportFile writes a report with every verdict, a listed address the
// report calls spoofed, an address that does not parse, and a private one.
func emitReportFile(t *testing.T) string {
	t.Helper()
	rep := audit.Report{
		Tool:    "lohibot-audit",
		Version: "test",
		IPs: []audit.IPReport{
			{IP: "79.139.58.98", Verdict: verify.Genuine, Method: verify.MethodFCrDNS, InIPList: true},
			{IP: "198.51.100.200", Verdict: verify.Genuine, Method: verify.MethodFCrDNS},
			{IP: "203.0.113.7", Verdict: verify.Spoofed, Reason: verify.ReasonNoPTR},
			{IP: "2001:db8:bad::1", Verdict: verify.Spoofed, Reason: verify.ReasonIPv6},
			{IP: "203.0.113.9", Verdict: verify.Unverified, Reason: verify.ReasonDNSError},
			{IP: "79.139.58.121", Verdict: verify.Spoofed, Reason: verify.ReasonForwardMismatch, InIPList: true},
			{IP: "10.0.0.5", Verdict: verify.Spoofed, Reason: verify.ReasonNoPTR},
			{IP: "not-an-ip\x1b[31m", Verdict: verify.Spoofed},
			{IP: "192.0.2.10", Verdict: verify.Spoofed, Reason: verify.ReasonNoPTR},
		},
	}
	data, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "audit.json")
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestEmitFromReport(t *testing.T) {
	report := emitReportFile(t)
	list := emitIPListFile(t)
	common := []string{"--report", report, "--ip-list", list, "--no-cache", "--never-block", "192.0.2.0/28"}
	cases := []struct {
		name     string
		args     []string
		want     []string // in stdout
		wantNot  []string // never in stdout
		wantWarn []string // in stderr
	}{
		{
			name: "nftables block-spoofed",
			args: []string{"emit", "nftables"},
			want: []string{"table inet lohibot {", "203.0.113.7 timeout 7d", "2001:db8:bad::1 timeout 7d",
				`Inputs: "report ` + report, "generated 2026-12-01T03:00:00Z", "IP list: \"" + list},
			wantNot:  []string{"79.139.58.98 timeout", "79.139.58.121 timeout", "203.0.113.9", "10.0.0.5", "192.0.2.10", "198.51.100.200"},
			wantWarn: []string{`skipping "not-an-ip\x1b[31m"`, "79.139.58.121", "10.0.0.5 (private)"},
		},
		{
			name:    "cloudflare ruleset",
			args:    []string{"emit", "cloudflare"},
			want:    []string{`not ip.src in {79.139.58.98 79.139.58.121 198.51.100.200}`, `ip.src in {203.0.113.7 2001:db8:bad::/64}`, `"action": "block"`},
			wantNot: []string{"203.0.113.9", "10.0.0.5", "192.0.2.10"},
		},
		{
			name:    "cloudflare ruleset with matches",
			args:    []string{"emit", "cloudflare", "--cloudflare-matches"},
			want:    []string{`lower(http.user_agent) matches r\"(?:^|[^0-9a-z!#$%\u0026'*+.^_` + "`" + `|~-])lohisoftbot(?:$|[^0-9a-z!#$%\u0026'*+.^_` + "`" + `|~-])\"`},
			wantNot: []string{"contains"},
		},
		{
			name: "modsecurity block-spoofed",
			args: []string{"emit", "modsecurity"},
			want: []string{`SecRule REQUEST_HEADERS:User-Agent "@rx (?:^|[^0-9a-z!#$%&'*+.^_` + "`" + `|~-])lohisoftbot(?:$|[^0-9a-z!#$%&'*+.^_` + "`" + `|~-])"`},
		},
		{
			name: "cloudflare list",
			args: []string{"emit", "cloudflare", "--cloudflare-output", "list"},
			want: []string{`"ip": "203.0.113.7"`, `"ip": "2001:db8:bad::/64"`},
		},
		{
			name: "modsecurity block-bot",
			args: []string{"emit", "modsecurity", "--mode", "block-bot", "--modsec-id-base", "31000"},
			want: []string{`"@ipMatch 79.139.58.98,79.139.58.121,198.51.100.200"`, "id:31000,phase:1,deny,status:403"},
		},
		{
			name: "nftables allow-bot set-only",
			args: []string{"emit", "nftables", "--mode", "allow-bot", "--set-only", "--nft-table", "inet filter", "--ttl", "1d12h"},
			want: []string{"add set inet filter crawler_v4", "79.139.58.98 timeout 1d12h", "flush set inet filter crawler_v4"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env, out, errb := emitTestEnv(t, "", emitNow)
			code := Run(context.Background(), env, append(c.args, common...))
			if code != fail.ExitOK {
				t.Fatalf("exit %d; stderr:\n%s", code, errb)
			}
			for _, w := range c.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			for _, w := range c.wantNot {
				if strings.Contains(out.String(), w) {
					t.Errorf("stdout holds %q:\n%s", w, out)
				}
			}
			for _, w := range c.wantWarn {
				if !strings.Contains(errb.String(), w) {
					t.Errorf("stderr lacks %q:\n%s", w, errb)
				}
			}
			if strings.Contains(errb.String(), "\x1b") {
				t.Errorf("stderr carries a raw escape character: %q", errb)
			}
		})
	}
}

func TestEmitUsageErrors(t *testing.T) {
	report := emitReportFile(t)
	dir := t.TempDir()
	notJSON := filepath.Join(dir, "bad.json")
	os.WriteFile(notJSON, []byte("{\"tool\": \"lohibot-audit\", \"ips\": [}"), 0o644)
	ipsJSON := filepath.Join(dir, "ips.json")
	os.WriteFile(ipsJSON, []byte(`{"prefixes":[{"ipv4Prefix":"79.139.58.98/32"}]}`), 0o644)
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no target", []string{"emit"}, "needs a TARGET"},
		{"unknown target", []string{"emit", "iptables", "--report", report}, `unknown emit target "iptables"`},
		{"logs and report", []string{"emit", "nftables", "--report", report, "access.log"}, "not both"},
		{"report does not parse", []string{"emit", "nftables", "--report", notJSON}, "is not valid JSON"},
		{"not a report", []string{"emit", "nftables", "--report", ipsJSON}, "is not a lohibot-audit report"},
		{"missing report", []string{"emit", "nftables", "--report", filepath.Join(dir, "nope.json")}, "cannot read report"},
		{"bad mode", []string{"emit", "nftables", "--report", report, "--mode", "block-all"}, "--mode"},
		{"bad ttl", []string{"emit", "nftables", "--report", report, "--ttl", "forever"}, "--ttl"},
		{"ttl too long", []string{"emit", "nftables", "--report", report, "--ttl", "400d"}, "--ttl"},
		{"bad hook", []string{"emit", "nftables", "--report", report, "--nft-hook", "output"}, "hook"},
		{"bad priority", []string{"emit", "nftables", "--report", report, "--nft-priority", "filter; drop"}, "priority"},
		{"bad table", []string{"emit", "nftables", "--report", report, "--nft-table", "ip x"}, "family inet"},
		{"bad never-block", []string{"emit", "nftables", "--report", report, "--never-block", "10.0.0.0/33"}, "--never-block"},
		{"flag of another target", []string{"emit", "cloudflare", "--report", report, "--set-only"}, "--set-only is for the nftables target"},
		{"cloudflare flag on modsecurity", []string{"emit", "modsecurity", "--report", report, "--cloudflare-matches"}, "--cloudflare-matches is for the cloudflare target"},
		{"bad list name", []string{"emit", "cloudflare", "--report", report, "--cloudflare-list-name", "Bad-Name"}, "list name"},
		{"bad cloudflare output", []string{"emit", "cloudflare", "--report", report, "--cloudflare-output", "yaml"}, "--cloudflare-output"},
		{"bad id base", []string{"emit", "modsecurity", "--report", report, "--modsec-id-base", "0"}, "--modsec-id-base"},
		{"changed-exit without -o", []string{"emit", "nftables", "--report", report, "--changed-exit", "10"}, "needs -o FILE"},
		{"changed-exit out of range", []string{"emit", "nftables", "--report", report, "-o", filepath.Join(dir, "x"), "--changed-exit", "300"}, "1 to 125"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env, out, errb := emitTestEnv(t, "", emitNow)
			code := Run(context.Background(), env, append(c.args, "--offline", "--no-cache"))
			if code != fail.ExitUsage {
				t.Fatalf("exit %d, want %d; stderr:\n%s", code, fail.ExitUsage, errb)
			}
			if !strings.Contains(errb.String(), c.want) {
				t.Errorf("stderr lacks %q:\n%s", c.want, errb)
			}
			if out.Len() != 0 {
				t.Errorf("stdout is not empty:\n%s", out)
			}
		})
	}
	// An output that cannot be written is an I/O failure, not a usage
	// error (SPEC §8).
	env, _, errb := emitTestEnv(t, "", emitNow)
	target := filepath.Join(dir, "no", "such", "dir.nft")
	code := Run(context.Background(), env, []string{"emit", "nftables", "--report", report, "--offline", "--no-cache", "-o", target})
	if want := "lohibot-audit: error: cannot write the rules to " + target + ": no such file or directory\n"; code != fail.ExitIncomplete || !strings.Contains(errb.String(), want) {
		t.Errorf("unwritable output: exit %d, stderr:\n%s\nwant exit 3 and %q", code, errb, want)
	}
}

// TestEmitOutputFile runs emit -o twice a day apart with the same input,
// then with a new spoofer: the file is left alone the second time and
// --changed-exit says when it changed.
func TestEmitOutputFile(t *testing.T) {
	list := emitIPListFile(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "lohibot.nft")
	report := func(spoofers ...string) string {
		rep := audit.Report{Tool: "lohibot-audit"}
		for _, s := range spoofers {
			rep.IPs = append(rep.IPs, audit.IPReport{IP: s, Verdict: verify.Spoofed})
		}
		data, _ := json.Marshal(rep)
		p := filepath.Join(t.TempDir(), "audit.json")
		os.WriteFile(p, data, 0o644)
		return p
	}
	r1, r2 := report("203.0.113.7"), report("203.0.113.7", "203.0.113.8")
	run := func(rep string, now time.Time) (int, string) {
		env, stdout, errb := emitTestEnv(t, "", now)
		code := Run(context.Background(), env, []string{"emit", "nftables", "--report", rep, "--ip-list", list, "--no-cache", "-o", out, "--changed-exit", "10"})
		if stdout.Len() != 0 {
			t.Errorf("stdout is not empty with -o:\n%s", stdout)
		}
		return code, errb.String()
	}

	if code, errs := run(r1, emitNow); code != 10 {
		t.Fatalf("first run: exit %d, want 10 (new file); stderr:\n%s", code, errs)
	}
	first, _ := os.ReadFile(out)
	if !bytes.Contains(first, []byte("203.0.113.7 timeout 7d")) {
		t.Fatalf("file lacks the spoofer:\n%s", first)
	}
	old := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)
	os.Chtimes(out, old, old)

	if code, errs := run(r1, emitNow.Add(24*time.Hour)); code != fail.ExitOK {
		t.Fatalf("same rules a day later: exit %d, want 0; stderr:\n%s", code, errs)
	}
	if fi, _ := os.Stat(out); !fi.ModTime().Equal(old) {
		t.Errorf("the unchanged file was touched")
	}
	if again, _ := os.ReadFile(out); !bytes.Equal(again, first) {
		t.Errorf("the unchanged file was rewritten")
	}

	if code, errs := run(r2, emitNow.Add(48*time.Hour)); code != 10 {
		t.Fatalf("new spoofer: exit %d, want 10; stderr:\n%s", code, errs)
	}
	second, _ := os.ReadFile(out)
	if !bytes.Contains(second, []byte("203.0.113.8 timeout 7d")) || !bytes.Contains(second, []byte("generated 2026-12-03T03:00:00Z")) {
		t.Errorf("file not replaced:\n%s", second)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only the rules file", len(entries))
	}
}

// TestEmitConfigFileFlagsOfOtherTargets checks that nftables settings in
// the config file do not stop the cloudflare target.
func TestEmitConfigFileFlagsOfOtherTargets(t *testing.T) {
	report := emitReportFile(t)
	cfg := filepath.Join(t.TempDir(), "config.yaml")
	os.WriteFile(cfg, []byte("nft-hook: prerouting\nttl: 3d\nnever-block:\n  - 203.0.113.0/29\n"), 0o644)
	env, out, errb := emitTestEnv(t, "", emitNow)
	code := Run(context.Background(), env, []string{"emit", "cloudflare", "--cloudflare-output", "expression", "--report", report, "--config", cfg, "--offline", "--no-cache"})
	if code != fail.ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, errb)
	}
	if strings.Contains(out.String(), "203.0.113.7") {
		t.Errorf("never-block from the config file was ignored:\n%s", out)
	}
}

// startEmitDNS serves zone lines on 127.0.0.1 (dnstest), answering
// SERVFAIL for the names in servfail.
func startEmitDNS(t *testing.T, servfail []string, lines ...string) string {
	t.Helper()
	z := dnstest.NewZone(t, lines...)
	for _, n := range servfail {
		z.ServFail(n)
	}
	return dnstest.Serve(t, z)
}

// emitTestLog is a combined log with the genuine crawler, impostors of
// several kinds and ordinary visitors.
const emitTestLog = `79.139.58.98 - - [01/Dec/2026:02:00:00 +0000] "GET /robots.txt HTTP/1.1" 200 10 "-" "LohiSoftBot/1.0 (+message@lohisoft.com)"
79.139.58.98 - - [01/Dec/2026:02:00:05 +0000] "GET / HTTP/1.1" 200 10 "-" "LohiSoftBot/1.0 (+message@lohisoft.com)"
203.0.113.7 - - [01/Dec/2026:02:01:00 +0000] "GET /wp-login.php HTTP/1.1" 404 10 "-" "Mozilla/5.0 (compatible; LohiSoftBot/1.0)"
203.0.113.8 - - [01/Dec/2026:02:02:00 +0000] "GET / HTTP/1.1" 200 10 "-" "lohisoftbot"
203.0.113.9 - - [01/Dec/2026:02:03:00 +0000] "GET / HTTP/1.1" 200 10 "-" "LohiSoftBot/1.0"
10.0.0.5 - - [01/Dec/2026:02:04:00 +0000] "GET / HTTP/1.1" 200 10 "-" "LohiSoftBot/1.0 \"}; add table inet pwned"
2001:db8::7 - - [01/Dec/2026:02:05:00 +0000] "GET / HTTP/1.1" 200 10 "-" "LohiSoftBot/1.0"
198.51.100.4 - - [01/Dec/2026:02:06:00 +0000] "GET / HTTP/1.1" 200 10 "-" "Mozilla/5.0"
`

// TestEmitFromLogs reads a log (file and stdin), verifies the claimed
// addresses against a DNS server on 127.0.0.1 and emits rules: spoofers
// blocked, the genuine crawler and an unverified address not.
func TestEmitFromLogs(t *testing.T) {
	server := startEmitDNS(t, []string{"9.113.0.203.in-addr.arpa."},
		"98.58.139.79.in-addr.arpa. 3600 IN PTR crawler1.bot.lohisoft.com.",
		"crawler1.bot.lohisoft.com. 3600 IN A 79.139.58.98",
		"7.113.0.203.in-addr.arpa. 3600 IN PTR crawler1.bot.lohisoft.com.evil.example.",
		"8.113.0.203.in-addr.arpa. 3600 IN PTR crawler9.bot.lohisoft.com.",
		"crawler9.bot.lohisoft.com. 3600 IN A 198.51.100.99",
	)
	logFile := filepath.Join(t.TempDir(), "access.log")
	if err := os.WriteFile(logFile, []byte(emitTestLog), 0o644); err != nil {
		t.Fatal(err)
	}
	list := emitIPListFile(t)
	for _, src := range []struct{ name, stdin, arg string }{{"file", "", logFile}, {"stdin", emitTestLog, "-"}} {
		t.Run(src.name, func(t *testing.T) {
			env, out, errb := emitTestEnv(t, src.stdin, emitNow)
			args := []string{"emit", "modsecurity", src.arg, "--resolver", server, "--dns-timeout", "1s", "--dns-retries", "0", "--ip-list", list, "--no-cache", "--log-format", "combined"}
			if code := Run(context.Background(), env, args); code != fail.ExitOK {
				t.Fatalf("exit %d; stderr:\n%s", code, errb)
			}
			text := out.String()
			if !strings.Contains(text, `"@ipMatch 203.0.113.7,203.0.113.8,2001:db8::7"`) {
				t.Errorf("spoofers not denied as expected:\n%s", text)
			}
			if !strings.Contains(text, `"!@ipMatch 79.139.58.98,79.139.58.121"`) {
				t.Errorf("the token rule does not spare the crawler:\n%s", text)
			}
			for _, bad := range []string{"203.0.113.9", "10.0.0.5", "pwned", "198.51.100.4"} {
				if strings.Contains(text, bad) {
					t.Errorf("rules hold %q:\n%s", bad, text)
				}
			}
			wantSource := `Inputs: "` + src.arg + `"`
			if src.arg == "-" {
				wantSource = `Inputs: "stdin"`
			}
			if !strings.Contains(text, wantSource) {
				t.Errorf("header lacks %s:\n%s", wantSource, text)
			}
			if !strings.Contains(errb.String(), "10.0.0.5 (private)") {
				t.Errorf("no warning about the private address:\n%s", errb)
			}
		})
	}
}

// TestEmitIncompleteInput writes the rules from what could be read and
// exits 3 when a log cannot be read.
func TestEmitIncompleteInput(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "access.log")
	os.WriteFile(logFile, []byte(emitTestLog), 0o644)
	env, out, errb := emitTestEnv(t, "", emitNow)
	args := []string{"emit", "nftables", logFile, emitCutLog(t), "--offline", "--ip-list", emitIPListFile(t), "--no-cache", "--log-format", "combined"}
	if code := Run(context.Background(), env, args); code != fail.ExitIncomplete {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, fail.ExitIncomplete, errb)
	}
	if !strings.Contains(out.String(), "203.0.113.7 timeout 7d") {
		t.Errorf("rules from the readable log are missing:\n%s", out)
	}
	if !strings.Contains(errb.String(), "cut.log.gz: ") {
		t.Errorf("no warning about the log cut short:\n%s", errb)
	}
}

// emitCutLog writes emitTestLog as a gzip file cut in its middle, and
// returns its path: an input that cannot be read whole.
func emitCutLog(t *testing.T) string {
	t.Helper()
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	zw.Write([]byte(strings.Repeat(emitTestLog, 50)))
	zw.Close()
	p := filepath.Join(t.TempDir(), "cut.log.gz")
	if err := os.WriteFile(p, b.Bytes()[:b.Len()/2], 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestEmitWarningsOnce checks that emit from logs says each of the audit's
// warnings (a log it cannot read, a rejected IP list) exactly once.
func TestEmitWarningsOnce(t *testing.T) {
	dir := t.TempDir()
	logFile := filepath.Join(dir, "access.log")
	os.WriteFile(logFile, []byte(emitTestLog), 0o644)
	badList := filepath.Join(dir, "ips.json")
	os.WriteFile(badList, []byte("not a list"), 0o644)
	cut := emitCutLog(t)
	env, _, errb := emitTestEnv(t, "", emitNow)
	args := []string{"emit", "nftables", logFile, cut, "--offline", "--ip-list", badList, "--no-cache", "--log-format", "combined"}
	if code := Run(context.Background(), env, args); code != fail.ExitIncomplete {
		t.Fatalf("exit %d, want %d; stderr:\n%s", code, fail.ExitIncomplete, errb)
	}
	for _, w := range []string{cut + ": input is truncated", "ip list " + badList} {
		if n := strings.Count(errb.String(), w); n != 1 {
			t.Errorf("%q is said %d times, want once:\n%s", w, n, errb)
		}
	}
}

// TestEmitReportWarnings checks that emit --report says the warnings an
// earlier audit wrote into its report as the report's, never as news of
// this run, and names the report in what it skips.
func TestEmitReportWarnings(t *testing.T) {
	dir := t.TempDir()
	report := filepath.Join(dir, "audit.json")
	os.WriteFile(report, []byte(`{"tool":"lohibot-audit","warnings":["cannot read missing.log: no such file or directory"],`+
		`"ips":[{"ip":"203.0.113.7","verdict":"spoofed"},{"ip":"not-an-ip","verdict":"spoofed"},{"ip":"198.51.100.9","verdict":"odd\u001b[2J"}]}`), 0o644)
	env, out, errb := emitTestEnv(t, "", emitNow)
	code := Run(context.Background(), env, []string{"emit", "nftables", "--report", report, "--ip-list", emitIPListFile(t), "--no-cache"})
	if code != fail.ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, errb)
	}
	want := "lohibot-audit: warning: report " + report + ": cannot read missing.log: no such file or directory\n" +
		"lohibot-audit: warning: report " + report + ": skipping \"not-an-ip\": not an IP address\n" +
		"lohibot-audit: warning: report " + report + ": 198.51.100.9 has the unknown verdict \"odd\\x1b[2J\"; it is not blocked\n"
	if errb.String() != want {
		t.Errorf("stderr:\n%s\nwant:\n%s", errb, want)
	}
	if !strings.Contains(out.String(), "203.0.113.7") || strings.Contains(out.String(), "198.51.100.9") {
		t.Errorf("the rules do not block exactly the spoofed address:\n%s", out)
	}
}
