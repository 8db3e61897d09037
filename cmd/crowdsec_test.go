package cmd

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/crowdsectest"
	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/internal/testutil"
)

// decisionsOf shows a Local API's decisions in force as "Scope:Value", in
// ID order, one entry per decision (a value pushed twice shows twice).
func decisionsOf(t *testing.T, l *crowdsectest.LAPI) []string {
	t.Helper()
	var out []string
	for _, d := range l.Decisions(t) {
		out = append(out, d.Scope+":"+d.Value)
	}
	slices.Sort(out)
	return out
}

// emitCrowdSecArgs are the arguments of emit crowdsec over the report of
// emitReportFile, with its IP list and --never-block.
func emitCrowdSecArgs(t *testing.T, l *crowdsectest.LAPI, extra ...string) []string {
	t.Helper()
	return append([]string{"emit", "crowdsec", "--report", emitReportFile(t), "--ip-list", emitIPListFile(t), "--no-cache",
		"--never-block", "192.0.2.0/28", "--crowdsec-credentials", l.Credentials}, extra...)
}

// emit crowdsec pushes the report's spoofers (IPv6 also by its /64), and
// nothing genuine, listed, private, never-block or unverified; a second
// run keeps them, a longer --ttl extends them: one decision per value.
func TestEmitCrowdSec(t *testing.T) {
	t.Parallel()
	l := crowdsectest.Start(t)
	want := []string{"Ip:2001:db8:bad::1", "Ip:203.0.113.7", "Range:2001:db8:bad::/64"}

	env, out, errb := emitTestEnv(t, "", emitNow)
	env.StderrTTY = true
	if code := Run(context.Background(), env, emitCrowdSecArgs(t, l, "--ttl", "2d")); code != fail.ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, errb)
	}
	if out.Len() != 0 {
		t.Errorf("stdout: %q", out)
	}
	for _, w := range []string{"crowdsec " + l.URL + ": 3 decisions added, 0 extended, 0 in force already",
		"79.139.58.121 (listed", "10.0.0.5 (private)"} {
		if !strings.Contains(errb.String(), w) {
			t.Errorf("stderr lacks %q:\n%s", w, errb)
		}
	}
	if got := decisionsOf(t, l); !slices.Equal(got, want) {
		t.Fatalf("decisions %v, want %v", got, want)
	}
	first := l.Decisions(t)
	for _, d := range first {
		if d.Scenario != "lohibot-audit/spoofed-lohisoftbot" || d.Origin != "cscli" || d.Type != "ban" || d.Left > 48*time.Hour || d.Left < 47*time.Hour {
			t.Errorf("decision %+v", d)
		}
	}
	if d := first[0]; d.Value == "203.0.113.7" && !strings.Contains(d.Message, "no-ptr") {
		t.Errorf("evidence of 203.0.113.7: %q", d.Message)
	}

	env, _, errb = emitTestEnv(t, "", emitNow)
	env.StderrTTY = true
	if code := Run(context.Background(), env, emitCrowdSecArgs(t, l, "--ttl", "2d")); code != fail.ExitOK {
		t.Fatalf("second run: exit %d; stderr:\n%s", code, errb)
	}
	if !strings.Contains(errb.String(), "0 decisions added, 0 extended, 3 in force already") {
		t.Errorf("second run said:\n%s", errb)
	}
	if got := l.Decisions(t); len(got) != 3 || got[0].ID != first[0].ID {
		t.Errorf("after the second run: %+v", got)
	}

	env, _, errb = emitTestEnv(t, "", emitNow)
	env.StderrTTY = true
	if code := Run(context.Background(), env, emitCrowdSecArgs(t, l, "--ttl", "7d")); code != fail.ExitOK {
		t.Fatalf("third run: exit %d; stderr:\n%s", code, errb)
	}
	if !strings.Contains(errb.String(), "0 decisions added, 3 extended, 0 in force already, 3 older decisions ended") {
		t.Errorf("third run said:\n%s", errb)
	}
	if got := decisionsOf(t, l); !slices.Equal(got, want) {
		t.Errorf("after extending: %v, want %v", got, want)
	}
	for _, d := range l.Decisions(t) {
		if d.Left < 6*24*time.Hour {
			t.Errorf("%s not extended: %s left", d.Value, d.Left)
		}
	}
	// What operators see.
	if got := len(l.Listed(t)); got != 3 {
		t.Errorf("cscli decisions list shows %d decisions", got)
	}
}

// From logs: the spoofers DNS shows (a PTR outside the crawler's domain,
// one that does not resolve back) are pushed with their evidence; the
// genuine crawler, a private address and one DNS could not check are not.
func TestEmitCrowdSecFromLogs(t *testing.T) {
	t.Parallel()
	l := crowdsectest.Start(t)
	server := startEmitDNS(t, []string{"9.113.0.203.in-addr.arpa."},
		"98.58.139.79.in-addr.arpa. 3600 IN PTR crawler1.bot.lohisoft.com.",
		"crawler1.bot.lohisoft.com. 3600 IN A 79.139.58.98",
		"7.113.0.203.in-addr.arpa. 3600 IN PTR crawler1.bot.lohisoft.com.evil.example.",
		"8.113.0.203.in-addr.arpa. 3600 IN PTR crawler9.bot.lohisoft.com.",
		"crawler9.bot.lohisoft.com. 3600 IN A 198.51.100.99",
	)
	logFile := filepath.Join(t.TempDir(), "access.log")
	testutil.WriteFile(t, logFile, emitTestLog)
	env, _, errb := emitTestEnv(t, "", emitNow)
	args := []string{"emit", "crowdsec", logFile, "--resolver", server, "--dns-timeout", "1s", "--dns-retries", "0", "--ip-list", emitIPListFile(t),
		"--no-cache", "--log-format", "combined", "--crowdsec-credentials", l.Credentials}
	if code := Run(context.Background(), env, args); code != fail.ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, errb)
	}
	want := []string{"Ip:2001:db8::7", "Ip:203.0.113.7", "Ip:203.0.113.8", "Range:2001:db8::/64"}
	if got := decisionsOf(t, l); !slices.Equal(got, want) {
		t.Fatalf("decisions %v, want %v", got, want)
	}
	for _, d := range l.Decisions(t) {
		if d.Value == "203.0.113.7" && !strings.Contains(d.Message, "203.0.113.7 claimed to be lohisoftbot in 1 request (2026-12-01T02:01:00Z to 2026-12-01T02:01:00Z) and is not: ptr-mismatch, PTR crawler1.bot.lohisoft.com.evil.example") {
			t.Errorf("evidence of 203.0.113.7: %q", d.Message)
		}
		if d.Value == "203.0.113.8" && !strings.Contains(d.Message, "forward-mismatch") {
			t.Errorf("evidence of 203.0.113.8: %q", d.Message)
		}
	}
}

// With the Local API down, emit crowdsec exits 3 and says so; run again
// once it is back, it pushes everything, once.
func TestEmitCrowdSecDown(t *testing.T) {
	t.Parallel()
	l := crowdsectest.Start(t)
	l.Stop()
	env, _, errb := emitTestEnv(t, "", emitNow)
	if code := Run(context.Background(), env, emitCrowdSecArgs(t, l)); code != fail.ExitIncomplete {
		t.Fatalf("exit %d, want 3; stderr:\n%s", code, errb)
	}
	for _, w := range []string{"crowdsec: 0 of 3 decisions in force, then: POST /v1/watchers/login " + l.URL + ": no answer", "nothing is pushed twice"} {
		if !strings.Contains(errb.String(), w) {
			t.Errorf("stderr lacks %q:\n%s", w, errb)
		}
	}
	l.Restart(t)
	for range 2 {
		env, _, errb = emitTestEnv(t, "", emitNow)
		if code := Run(context.Background(), env, emitCrowdSecArgs(t, l)); code != fail.ExitOK {
			t.Fatalf("exit %d; stderr:\n%s", code, errb)
		}
	}
	if got := decisionsOf(t, l); len(got) != 3 {
		t.Errorf("decisions %v", got)
	}
}

// A wrong password is refused: exit 3, the password never shown.
func TestEmitCrowdSecRefused(t *testing.T) {
	t.Parallel()
	l := crowdsectest.Start(t)
	creds := filepath.Join(t.TempDir(), "creds.yaml")
	testutil.WriteFile(t, creds, fmt.Sprintf("url: %s\nlogin: %s\npassword: not-the-password-123\n", l.URL, crowdsectest.Machine))
	env, _, errb := emitTestEnv(t, "", emitNow)
	args := emitCrowdSecArgs(t, l)
	args[len(args)-1] = creds
	if code := Run(context.Background(), env, args); code != fail.ExitIncomplete {
		t.Fatalf("exit %d, want 3; stderr:\n%s", code, errb)
	}
	if !strings.Contains(errb.String(), "401 unauthorized") || strings.Contains(errb.String(), "not-the-password-123") {
		t.Errorf("stderr:\n%s", errb)
	}
	if got := decisionsOf(t, l); len(got) != 0 {
		t.Errorf("decisions %v", got)
	}
}

func TestEmitCrowdSecUsage(t *testing.T) {
	t.Parallel()
	report := emitReportFile(t)
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.yaml")
	testutil.WriteFile(t, bad, "url: http://127.0.0.1:1\nlogin: m\n")
	common := []string{"--report", report, "--offline", "--no-cache"}
	for _, tc := range []struct {
		name string
		args []string
		code int
		err  string
	}{
		{"no credentials file", []string{"--crowdsec-credentials", filepath.Join(dir, "none.yaml")}, fail.ExitUsage, "none.yaml: no such file or directory"},
		{"no password", []string{"--crowdsec-credentials", bad}, fail.ExitUsage, `has no password for machine "m"`},
		{"-o without --dry-run", []string{"--crowdsec-credentials", bad, "-o", filepath.Join(dir, "x")}, fail.ExitUsage, "-o is for --dry-run"},
		{"block-bot", []string{"--mode", "block-bot"}, fail.ExitUsage, "the crowdsec target bans spoofers only"},
		{"an nftables flag", []string{"--set-only"}, fail.ExitUsage, "--set-only is for the nftables target, not crowdsec"},
		{"bad ttl", []string{"--ttl", "400d"}, fail.ExitUsage, "--ttl \"400d\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env, _, errb := emitTestEnv(t, "", emitNow)
			if code := Run(context.Background(), env, append(append([]string{"emit", "crowdsec"}, common...), tc.args...)); code != tc.code || !strings.Contains(errb.String(), tc.err) {
				t.Errorf("exit %d, want %d; stderr lacks %q:\n%s", code, tc.code, tc.err, errb)
			}
		})
	}
	for _, tc := range [][]string{{"emit", "nftables", "--dry-run"}, {"emit", "modsecurity", "--crowdsec-credentials", bad}} {
		env, _, errb := emitTestEnv(t, "", emitNow)
		if code := Run(context.Background(), env, append(tc, common...)); code != fail.ExitUsage || !strings.Contains(errb.String(), "is for the crowdsec target") {
			t.Errorf("%v: exit %d; stderr:\n%s", tc, code, errb)
		}
	}

	// --dry-run asks nothing: it writes the request, whatever the
	// credentials file.
	env, out, errb := emitTestEnv(t, "", emitNow)
	args := append([]string{"emit", "crowdsec", "--dry-run", "--crowdsec-credentials", filepath.Join(dir, "none.yaml"), "--ttl", "36h"}, common...)
	if code := Run(context.Background(), env, args); code != fail.ExitOK {
		t.Fatalf("dry run: exit %d; stderr:\n%s", code, errb)
	}
	var alerts []struct {
		Message   string
		Decisions []struct{ Duration, Scope, Value, Scenario, Origin, Type string }
	}
	if err := json.Unmarshal(out.Bytes(), &alerts); err != nil {
		t.Fatalf("dry run output: %v\n%s", err, out)
	}
	var got []string
	for _, a := range alerts {
		d := a.Decisions[0]
		got = append(got, fmt.Sprintf("%s:%s %s %s %s %s", d.Scope, d.Value, d.Duration, d.Type, d.Origin, d.Scenario))
	}
	want := []string{
		"Ip:203.0.113.7 36h0m0s ban cscli lohibot-audit/spoofed-lohisoftbot",
		"Ip:192.0.2.10 36h0m0s ban cscli lohibot-audit/spoofed-lohisoftbot",
		"Range:2001:db8:bad::/64 36h0m0s ban cscli lohibot-audit/spoofed-lohisoftbot",
		"Ip:2001:db8:bad::1 36h0m0s ban cscli lohibot-audit/spoofed-lohisoftbot",
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("dry run decisions\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// watch --crowdsec pushes each spoofer as it is judged, never the genuine
// crawler; while the Local API is down it says so once, keeps what waits
// and pushes it when the Local API is back: each value once.
func TestWatchCrowdSec(t *testing.T) {
	t.Parallel()
	l := crowdsectest.Start(t)
	srv, list, log := watchFixture(t)
	w := startWatch(t, &Env{}, log, "--resolver", srv, "--ip-list", list, "--crowdsec", "--crowdsec-credentials", l.Credentials, "--ttl", "1d")
	w.write(liveLine("192.0.2.10", claimUA, "/", 0), liveLine("203.0.113.7", claimUA, "/", 1), liveLine("2001:db8:dead::7", claimUA, "/", 2),
		liveLine("10.0.0.7", claimUA, "/", 3))
	want := []string{"Ip:2001:db8:dead::7", "Ip:203.0.113.7", "Range:2001:db8:dead::/64"}
	waitFor(t, w.done, w.stderr, func() bool { return slices.Equal(decisionsOf(t, l), want) })
	w.waitVerdict("192.0.2.10", 1)

	l.Stop()
	w.write(liveLine("203.0.113.8", claimUA, "/", 4), liveLine("203.0.113.9", claimUA, "/", 5))
	w.waitErr("crowdsec: cannot push decisions")
	l.Restart(t)
	w.waitErr("takes decisions again")
	want = []string{"Ip:2001:db8:dead::7", "Ip:203.0.113.7", "Ip:203.0.113.8", "Ip:203.0.113.9", "Range:2001:db8:dead::/64"}
	waitFor(t, w.done, w.stderr, func() bool { return slices.Equal(decisionsOf(t, l), want) })
	w.usr1 <- syscall.SIGUSR1
	w.waitErr("; crowdsec 5 added, 0 extended, 0 in force already, 0 waiting, 0 dropped")
	if code := w.stop(); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, w.stderr.String())
	}
	if n := strings.Count(w.stderr.String(), "cannot push decisions"); n != 1 {
		t.Errorf("the outage was said %d times:\n%s", n, w.stderr.String())
	}
	for _, d := range l.Decisions(t) {
		if d.Left > 24*time.Hour || d.Left < 23*time.Hour || !strings.Contains(d.Message, "claimed to be lohisoftbot") {
			t.Errorf("decision %+v", d)
		}
	}
}
