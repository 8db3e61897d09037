package emit

import (
	"bytes"
	"context"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/internal/interrupt"
)

// A target's Input carries its header's time to the second in UTC; the
// crowdsec target's gathers evidence, the others' none.
func TestTargetInput(t *testing.T) {
	now := time.Date(2026, 12, 5, 9, 30, 15, 700, time.FixedZone("CET", 3600))
	never := []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}
	for _, name := range TargetNames() {
		tg, _ := Lookup(name)
		in := tg.Input(AllowBot, never, now, "v-test")
		if in.Mode != AllowBot || len(in.NeverBlock) != 1 || in.Version != "v-test" ||
			!in.Generated.Equal(time.Date(2026, 12, 5, 8, 30, 15, 0, time.UTC)) || in.Generated.Location() != time.UTC {
			t.Errorf("%s: %+v", name, in)
		}
		if (in.Evidence != nil) != (name == "crowdsec") {
			t.Errorf("%s: evidence %v, want a map for crowdsec only", name, in.Evidence)
		}
	}
}

// Rules gives what Write gives, calling started as it starts; an error of
// the rules is worded by Explain; cancelled while the work is held up, it
// returns at once, interrupted.
func TestTargetRules(t *testing.T) {
	nft, _ := Lookup("nftables")
	in := Input{Crawlers: []CrawlerInput{{Tokens: lohiTokens, Spoofed: []netip.Addr{netip.MustParseAddr("203.0.113.7")}}}}
	started := 0
	r, err := nft.Rules(context.Background(), in, Options{}, func() { started++ })
	var want bytes.Buffer
	plan, werr := nft.Write(&want, in, Options{})
	if err != nil || werr != nil || started != 1 || !bytes.Equal(r.Text, want.Bytes()) || len(r.Plan.Block) != len(plan.Block) {
		t.Errorf("Rules: %v, started %d times, %q; want Write's %q", err, started, r.Text, want.String())
	}

	cf, _ := Lookup("cloudflare")
	named := Input{Crawlers: []CrawlerInput{{Name: "examplebot", Spoofed: addrs("203.0.113.66")}}, Named: true}
	if _, err := cf.Rules(context.Background(), named, Options{}, nil); !errors.Is(err, ErrNoTokens) || fail.KindOf(err) != fail.Usage || fail.HintOf(err) == "" {
		t.Errorf("cloudflare without tokens: %v, want Explain's usage error", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	release := make(chan struct{})
	defer close(release)
	_, err = nft.Rules(ctx, in, Options{}, func() {
		cancel()
		<-release
	})
	if !errors.Is(err, interrupt.ErrInterrupted) {
		t.Errorf("cancelled: %v, want interrupted", err)
	}
}

// Check refuses --changed-exit without -o FILE and out of 1-125.
func TestOutputCheck(t *testing.T) {
	for _, tt := range []struct {
		o    Output
		want string
	}{
		{Output{}, ""},
		{Output{File: "-"}, ""},
		{Output{File: "rules.nft", ChangedExit: 125}, ""},
		{Output{ChangedExit: 10}, "--changed-exit needs -o FILE: it says whether that file changed"},
		{Output{File: "-", ChangedExit: 10}, "--changed-exit needs -o FILE: it says whether that file changed"},
		{Output{File: "rules.nft", ChangedExit: 126}, "--changed-exit 126: give a code from 1 to 125 (0 to exit 0 either way)"},
		{Output{File: "rules.nft", ChangedExit: -1}, "--changed-exit -1: give a code from 1 to 125 (0 to exit 0 either way)"},
	} {
		err := tt.o.Check()
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%+v: %v", tt.o, err)
		case tt.want != "" && (err == nil || err.Error() != tt.want || fail.KindOf(err) != fail.Usage):
			t.Errorf("%+v: %v, want the usage error %q", tt.o, err, tt.want)
		}
	}
}

// failingWriter fails every write.
type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("broken pipe") }

// Write writes to standard output, or to the file, reporting whether it
// changed; Said says what it did; Changed gives --changed-exit's code
// when it changed.
func TestOutputWrite(t *testing.T) {
	ctx := context.Background()
	r := Rules{Plan: &Plan{Mode: BlockBot, Block: []netip.Prefix{netip.MustParsePrefix("192.0.2.7/32")}}}
	var stdout bytes.Buffer
	std := Output{File: "-"}
	if changed, err := std.Write(ctx, &stdout, []byte("rules\n")); changed || err != nil || stdout.String() != "rules\n" {
		t.Errorf("stdout: %v, %v, %q", changed, err, stdout.String())
	}
	if said := std.Said(false, "nftables", r); said != "" {
		t.Errorf("stdout said %q", said)
	}
	if _, err := std.Write(ctx, failingWriter{}, []byte("rules\n")); fail.KindOf(err) != fail.Unwritten || err.Error() != "cannot write the rules: broken pipe" {
		t.Errorf("stdout failing: %v (kind %v)", err, fail.KindOf(err))
	}

	path := filepath.Join(t.TempDir(), "rules.nft")
	file := Output{File: path, ChangedExit: 10}
	for i, tt := range []struct {
		text    string
		changed bool
		said    string
	}{
		{"# generated 2026-12-05T08:00:00Z\n192.0.2.7\n", true, path + " written: nftables block-bot rules, 1 address blocked"},
		{"# generated 2026-12-05T09:00:00Z\n192.0.2.7\n", false, path + " unchanged: nftables block-bot rules, 1 address blocked"},
	} {
		changed, err := file.Write(ctx, &stdout, []byte(tt.text))
		if err != nil || changed != tt.changed {
			t.Fatalf("write %d: %v, %v; want changed %v", i, changed, err, tt.changed)
		}
		if said := file.Said(changed, "nftables", r); said != tt.said {
			t.Errorf("write %d said %q, want %q", i, said, tt.said)
		}
		err = file.Changed(changed)
		if tt.changed && (fail.KindOf(err) != fail.Findings || fail.CodeOf(err) != 10 || err.Error() != "the rules changed: "+path) {
			t.Errorf("write %d: Changed = %v (kind %v, code %d), want a finding exiting 10", i, err, fail.KindOf(err), fail.CodeOf(err))
		}
		if !tt.changed && err != nil {
			t.Errorf("write %d, unchanged: Changed = %v", i, err)
		}
	}
	if got, _ := os.ReadFile(path); !strings.Contains(string(got), "08:00:00Z") {
		t.Errorf("the file holds %q, want the first rules (the second changed only the time)", got)
	}
	if err := (Output{File: path}).Changed(true); err != nil {
		t.Errorf("changed without --changed-exit: %v", err)
	}

	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := file.Write(cancelled, &stdout, []byte("other\n")); !errors.Is(err, interrupt.ErrInterrupted) {
		t.Errorf("cancelled: %v, want interrupted", err)
	}
}

// Only the crowdsec target without --dry-run pushes, and then takes no -o.
func TestTargetPushes(t *testing.T) {
	cs, _ := Lookup("crowdsec")
	nft, _ := Lookup("nftables")
	for _, tt := range []struct {
		t      Target
		dryRun bool
		output string
		pushes bool
		err    string
	}{
		{cs, false, "", true, ""},
		{cs, true, "req.json", false, ""},
		{nft, false, "rules.nft", false, ""},
		{cs, false, "-", false, "-o is for --dry-run: without it the crowdsec target pushes its decisions to the Local API"},
	} {
		pushes, err := tt.t.Pushes(tt.dryRun, tt.output)
		if pushes != tt.pushes || (tt.err == "") != (err == nil) || (err != nil && (err.Error() != tt.err || fail.KindOf(err) != fail.Usage)) {
			t.Errorf("%s dry-run %v -o %q: %v, %v; want %v, %q", tt.t.Name, tt.dryRun, tt.output, pushes, err, tt.pushes, tt.err)
		}
	}
}
