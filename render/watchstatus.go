package render

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/watchstate"
)

// WatchStatus writes what `watch status` says for people: whether a
// watch runs, what it follows (positions, lines, the last line's age),
// each crawler's claims and verdicts, blocks per target, held addresses,
// DNS health and queues. now is when it is shown (for ages); written is
// when the state was written, for a status read from a state file.
func WatchStatus(w io.Writer, s watchstate.Status, written, now time.Time) error {
	var b strings.Builder
	line := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	ago := func(t time.Time) string {
		if t.IsZero() {
			return "never"
		}
		if d := now.Sub(t); d >= 0 {
			return dur(d.Round(time.Second)) + " ago"
		}
		return stamp(t) + "Z"
	}
	version := ""
	if s.Version != "" {
		version = ", lohibot-audit " + visible(s.Version)
	}
	if s.Running {
		line("watch: running, pid %d, up %s (since %sZ)%s", s.PID, dur(now.Sub(s.Started).Round(time.Second)), stamp(s.Started), version)
	} else {
		by := ""
		if s.PID > 0 {
			by = fmt.Sprintf(" by pid %d", s.PID)
		}
		line("watch: not running; the state written %s (%sZ)%s says%s", ago(written), stamp(written), by, version)
	}
	if len(s.Files) > 0 {
		line("files:")
		for _, f := range s.Files {
			pos := "nothing read yet"
			if f.Line > 0 || f.Offset > 0 {
				pos = fmt.Sprintf("at line %s, byte %s", num(f.Line), num(f.Offset))
			}
			line("  %s  %s, %s; %s, %s; last line %s", cut(f.Name, 120), f.State, pos, plural(f.Lines, "line", "lines"),
				num(f.Malformed)+" malformed", ago(f.LastLine))
		}
	}
	if len(s.Crawlers) > 0 {
		line("crawlers:")
		for _, c := range s.Crawlers {
			line("  %s  %s; judged %s genuine, %s spoofed, %s unverified; now %s genuine, %s spoofed, %s unverified, %s pending; %s",
				visible(c.Name), plural(c.Claims, "claim", "claims"),
				num(c.Verdicts.Genuine), num(c.Verdicts.Spoofed), num(c.Verdicts.Unverified),
				num(c.Addresses.Genuine), num(c.Addresses.Spoofed), num(c.Addresses.Unverified), num(c.Pending),
				plural(c.Violations, "violation", "violations"))
		}
	}
	line("blocks:")
	if len(s.Blocks) == 0 {
		line("  none: neither --nftables, --crowdsec nor --exec")
	}
	for _, t := range s.Blocks {
		extra := ""
		if t.Dropped > 0 {
			extra = ", " + num(t.Dropped) + " dropped (too many waited)"
		}
		line("  %-8s  %s now; %s blocked, %s failed since start%s", t.Target, plural(t.InForce, "address", "addresses"), num(t.Blocked), num(t.Failed), extra)
	}
	if s.Held > 0 {
		line("  held out of blocking (unblocked): %s", plural(int64(s.Held), "address", "addresses"))
	}
	dnsState := "answering"
	if s.DNS.Down {
		dnsState = "down: addresses wait to be judged again"
	}
	line("dns: %s", dnsState)
	for _, r := range s.DNS.Resolvers {
		state := "up"
		if !r.Up {
			state = "not answering"
		}
		msg := fmt.Sprintf("  %s  %s; %s, %s failed; last answer %s", visible(r.Server), state, plural(r.Queries, "query", "queries"), num(r.Failures), ago(r.LastAnswer))
		if !r.Up && r.LastError != "" {
			msg += "; " + cut(r.LastError, 120)
		}
		line("%s", msg)
	}
	if h := s.DNS.Latency; h.Count > 0 {
		line("  latency: %s, mean %s, half within %s, 99%% within %s", plural(int64(h.Count), "query", "queries"),
			dur(time.Duration(h.Sum/float64(h.Count)*float64(time.Second))), quantile(h, 0.5), quantile(h, 0.99))
	}
	q := s.Queue
	line("waiting: %s to judge, %s for their actions, %s for nftables, %s for crowdsec, %s for --exec, %s for their verdicts' conduct checks",
		plural(q.Judge, "address", "addresses"), num(q.Actions), num(q.NFTables), num(q.CrowdSec), num(q.Exec), num(q.Conduct))
	line("events: %s written, %s lost", num(s.Events.Written), num(s.Events.Lost))
	_, err := io.WriteString(w, b.String())
	return err
}

// quantile is the bound of the first bucket of h that holds the q-th
// quantile: "10ms", or "more than 10s".
func quantile(h watchstate.Histogram, q float64) string {
	want := uint64(q * float64(h.Count))
	if float64(want) < q*float64(h.Count) {
		want++
	}
	for i, c := range h.Counts {
		if c >= want && i < len(h.Bounds) {
			return dur(time.Duration(h.Bounds[i] * float64(time.Second)))
		}
	}
	if n := len(h.Bounds); n > 0 {
		return "more than " + dur(time.Duration(h.Bounds[n-1]*float64(time.Second)))
	}
	return "?"
}
