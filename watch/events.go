package watch

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/conduct"
	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/lohisoft/lohibot-audit/watchstate"
)

// The event names of the JSON lines.
const (
	EventVerdict   = "verdict"
	EventViolation = "violation"
	EventUnblock   = "unblock"
)

// UnblockEvent is the JSON line of an unblock: the address, until when it
// is held out of blocking, and what was undone where.
type UnblockEvent struct {
	Event string    `json:"event"`
	Time  time.Time `json:"time"`
	watchstate.Unblocked
}

// VerdictEvent is the JSON line of a verdict: the address fields of SPEC
// §5, with the event name, the crawler and when the verdict was reached.
type VerdictEvent struct {
	Event   string    `json:"event"`
	Time    time.Time `json:"time"`
	Crawler string    `json:"crawler"`
	audit.IPReport
}

// ViolationEvent is the JSON line of a violation: the violation fields of
// SPEC §5, with the event name and the crawler.
type ViolationEvent struct {
	Event   string `json:"event"`
	Crawler string `json:"crawler"`
	conduct.Violation
}

// Events writes events, one per line: JSON, or on a terminal a line for
// people with every string from a log escaped, which begins with the time
// of the log line the event is about, in UTC with its date
// ("2015-05-17 10:05:40Z"): for a verdict the latest request it covers,
// for a violation the request that broke the promise. It is safe for concurrent
// use. A write that fails (a full disk, a closed pipe) is said once through
// OnError and writing goes on with the next event; OnError hears of the
// recovery too (a nil error).
type Events struct {
	W        io.Writer
	Terminal bool
	OnError  func(err error)

	mu      sync.Mutex
	failing bool
	lost    int64
	written int64
}

// Verdict writes the event of v.
func (e *Events) Verdict(crawler string, v Verdict, at time.Time) {
	rep := audit.IPReportOf(v.Result)
	rep.Hits, rep.FirstSeen, rep.LastSeen = v.Hits, v.FirstSeen.UTC(), v.LastSeen.UTC()
	if v.UserAgent != "" {
		rep.UserAgents = []string{v.UserAgent}
	}
	if e.Terminal {
		var b strings.Builder
		when := v.LastSeen
		if when.IsZero() {
			when = at
		}
		fmt.Fprintf(&b, "%s %-10s %s %s", terminalTime(when), rep.Verdict, rep.IP, crawler)
		switch {
		case rep.Reason != "":
			fmt.Fprintf(&b, " (%s)", rep.Reason)
		case rep.Method != "":
			fmt.Fprintf(&b, " (%s)", rep.Method)
		}
		if len(rep.PTR) > 0 {
			fmt.Fprintf(&b, " ptr %s", strings.Join(rep.PTR, ","))
		}
		if rep.DNSFailure != "" {
			fmt.Fprintf(&b, " dns %s", rep.DNSFailure)
		}
		if v.Attempt > 1 {
			fmt.Fprintf(&b, " attempt %d", v.Attempt)
		}
		e.line(parse.EscapeControl(b.String()))
		return
	}
	e.json(VerdictEvent{Event: EventVerdict, Time: at.UTC(), Crawler: crawler, IPReport: rep})
}

// Violation writes the event of v.
func (e *Events) Violation(crawler string, v conduct.Violation) {
	if e.Terminal {
		s := fmt.Sprintf("%s violation  %s %s %s %s %s:%d %s: %s", terminalTime(v.Time), v.Kind, v.Site, v.IP, crawler, v.File, v.Line, v.Path, v.Detail)
		e.line(parse.EscapeControl(s))
		return
	}
	e.json(ViolationEvent{Event: EventViolation, Crawler: crawler, Violation: v})
}

// Unblock writes the event of an address an operator unblocked at `at`.
func (e *Events) Unblock(u watchstate.Unblocked, at time.Time) {
	if e.Terminal {
		e.line(parse.EscapeControl(UnblockLine(u, at)))
		return
	}
	u.Until = u.Until.UTC()
	if !u.Exec.IsZero() {
		u.Exec = u.Exec.UTC()
	}
	e.json(UnblockEvent{Event: EventUnblock, Time: at.UTC(), Unblocked: u})
}

// UnblockLine says what unblocking an address did, in one line for
// people, beginning with the time it was done.
func UnblockLine(u watchstate.Unblocked, at time.Time) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s unblocked  %s until %s", terminalTime(at), u.Addr, terminalTime(u.Until))
	if len(u.NFTables) > 0 {
		fmt.Fprintf(&b, "; out of nftables %s", strings.Join(u.NFTables, ", "))
	}
	if len(u.CrowdSec) > 0 {
		fmt.Fprintf(&b, "; crowdsec decisions on %s ended", strings.Join(u.CrowdSec, ", "))
	}
	if !u.Exec.IsZero() {
		fmt.Fprintf(&b, "; --exec ran for it at %s: undo that with its own tool", terminalTime(u.Exec))
	}
	if len(u.NFTables)+len(u.CrowdSec) == 0 && u.Exec.IsZero() && len(u.Errors) == 0 {
		b.WriteString("; it was blocked nowhere")
	}
	for _, e := range u.Errors {
		fmt.Fprintf(&b, "; %s", e)
	}
	return b.String()
}

// terminalTime is the time column of a terminal line: the log's time in
// UTC, with the date, as the report's tables write it.
func terminalTime(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") }

func (e *Events) json(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		e.fail(err)
		return
	}
	e.write(append(b, '\n'))
}

func (e *Events) line(s string) { e.write([]byte(s + "\n")) }

func (e *Events) write(b []byte) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if _, err := e.W.Write(b); err != nil {
		e.lost++
		if !e.failing {
			e.failing = true
			if e.OnError != nil {
				e.OnError(err)
			}
		}
		return
	}
	e.written++
	if e.failing {
		e.failing = false
		if e.OnError != nil {
			e.OnError(nil)
		}
	}
}

func (e *Events) fail(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.lost++
	if e.OnError != nil {
		e.OnError(err)
	}
}

// Counts returns the events written and lost so far.
func (e *Events) Counts() (written, lost int64) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.written, e.lost
}
