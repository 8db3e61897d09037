package watch

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/crowdsec"
	"github.com/lohisoft/lohibot-audit/watchstate"
)

// TestStoppedUnblocker: with no state, unblock says where it looks (the
// default table here); with one, it undoes blocks where the last watch
// made them, and says what it cannot use.
func TestStoppedUnblocker(t *testing.T) {
	now := time.Date(2026, 12, 4, 18, 0, 0, 0, time.UTC)
	agent := crowdsec.Agent{Version: "v-test"}
	dir := t.TempDir()
	var said []string
	say := func(m string) { said = append(said, m) }
	u, closeU, err := StoppedUnblocker(dir, now, agent, say)
	if err != nil {
		t.Fatal(err)
	}
	closeU()
	want := "no state in " + dir + " tells where a watch blocked"
	if runtime.GOOS == "linux" {
		want += ": taking the addresses out of the sets of nftables table inet lohibot here, if it holds them"
		if u.Sets == nil {
			t.Error("no state: the default table's sets are not tried")
		}
	}
	want += "; CrowdSec decisions are not known: end them with 'cscli decisions delete --ip ADDRESS'"
	if len(said) != 1 || said[0] != want {
		t.Errorf("said %q, want %q", said, want)
	}
	if u.CrowdSec != nil {
		t.Error("no state: a CrowdSec Local API is guessed")
	}

	write := func(tg watchstate.Targets) {
		t.Helper()
		s := &watchstate.State{Written: now, PID: 1, Targets: tg, Status: &watchstate.Status{PID: 1, At: now}}
		if err := watchstate.Write(context.Background(), dir, s); err != nil {
			t.Fatal(err)
		}
	}
	creds := filepath.Join(dir, "creds.yaml")
	if err := os.WriteFile(creds, []byte("url: http://127.0.0.1:8080/\nlogin: m\npassword: p\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	said = nil
	write(watchstate.Targets{NFTables: "ip fw", CrowdSec: "http://127.0.0.1:8080/", CrowdSecCredentials: creds})
	u, closeU, err = StoppedUnblocker(dir, now, agent, say)
	if err != nil {
		t.Fatal(err)
	}
	closeU()
	p, ok := u.CrowdSec.(*crowdsec.Pusher)
	if !ok {
		t.Fatalf("crowdsec target: %T", u.CrowdSec)
	}
	if p.Client.Credentials.URL != "http://127.0.0.1:8080" || p.TTL != time.Hour || p.Client.UserAgent != "lohibot-audit/v-test" || u.Sets == nil || len(said) != 0 {
		t.Errorf("state of nftables and crowdsec: %+v, said %q", u, said)
	}

	write(watchstate.Targets{CrowdSec: "http://127.0.0.1:8080/", CrowdSecCredentials: filepath.Join(dir, "gone.yaml")})
	_, _, err = StoppedUnblocker(dir, now, agent, say)
	var ce *CredentialsError
	if !errors.As(err, &ce) || !strings.HasPrefix(err.Error(), "crowdsec: ") || !strings.HasSuffix(err.Error(), "no such file or directory") {
		t.Errorf("credentials gone: %v, want a CredentialsError", err)
	}
	write(watchstate.Targets{NFTables: "inet lohibot", NFTNetNS: filepath.Join(dir, "no-netns")})
	_, _, err = StoppedUnblocker(dir, now, agent, say)
	if err == nil || err.Error() != "nftables: the network namespace of the last watch: no such file or directory" {
		t.Errorf("namespace gone: %v", err)
	}
}

func TestWriteUnblocked(t *testing.T) {
	now := time.Date(2026, 12, 4, 18, 0, 0, 0, time.UTC)
	a, b := netip.MustParseAddr("203.0.113.7"), netip.MustParseAddr("2001:db8::7")
	out := []watchstate.Unblocked{{Addr: a, Until: now.Add(time.Hour), NFTables: []string{"spoofed_live_v4"}},
		{Addr: b, Until: now.Add(time.Hour), Errors: []string{"crowdsec: connection refused"}}}
	var buf strings.Builder
	failed, lost := WriteUnblocked(&buf, false, out, now)
	if !failed || lost != 0 || strings.Count(buf.String(), `"event":"unblock"`) != 2 {
		t.Errorf("failed %v, lost %d, written:\n%s", failed, lost, buf.String())
	}
	buf.Reset()
	failed, _ = WriteUnblocked(&buf, true, out[:1], now)
	if failed || buf.String() != UnblockLine(out[0], now)+"\n" {
		t.Errorf("for people: failed %v, %q", failed, buf.String())
	}
	if _, lost := WriteUnblocked(&failingWriter{fail: true}, false, out, now); lost != 2 {
		t.Errorf("lost %d, want 2", lost)
	}
}
