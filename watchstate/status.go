package watchstate

import (
	"net/netip"
	"time"
)

// Status is what `watch status` shows: what a watch follows, judged and
// blocked, how DNS fares, and what waits. A running watch answers it
// through its socket; the state file keeps the last one.
type Status struct {
	// PID is the watch's process; Version the program's version.
	PID     int    `json:"pid"`
	Version string `json:"version,omitempty"`
	// Started is when the watch started; At when this status was taken.
	Started time.Time `json:"started"`
	At      time.Time `json:"at"`
	// Running is set by the reader: true for an answer of a running
	// watch, false for the status kept in a state file.
	Running  bool            `json:"running"`
	Files    []FileStatus    `json:"files"`
	Crawlers []CrawlerStatus `json:"crawlers"`
	Blocks   []TargetStatus  `json:"blocks"`
	// Held counts the addresses held out of blocking now (unblocked).
	Held  int         `json:"held"`
	DNS   DNSStatus   `json:"dns"`
	Queue QueueStatus `json:"queue"`
	// Events counts the event lines written and lost (a failing stdout).
	Events EventCounts `json:"events"`
}

// FileStatus is one followed log.
type FileStatus struct {
	// Name is as given ("-" for standard input).
	Name string `json:"name"`
	// Offset is the byte after the last line read, Line that line's
	// number (both 0 before the first line).
	Offset int64 `json:"offset"`
	Line   int64 `json:"line"`
	// Lines counts the lines read; Malformed those claiming a crawler that
	// could not be read as the log's format.
	Lines     int64 `json:"lines"`
	Malformed int64 `json:"malformed"`
	// LastLine is when the last line was read (by the watch's clock);
	// zero before the first.
	LastLine time.Time `json:"last_line,omitzero"`
	// State is what following it last said: following, missing,
	// unreadable, ended.
	State string `json:"state"`
}

// CrawlerStatus is one crawler watched.
type CrawlerStatus struct {
	Name string `json:"name"`
	// Claims counts the requests read that claim the crawler.
	Claims int64 `json:"claims"`
	// Addresses counts the addresses known now by their verdict (Pending:
	// not judged yet); Verdicts counts the judgements made since start.
	Addresses VerdictCounts `json:"addresses"`
	Pending   int64         `json:"pending"`
	Verdicts  VerdictCounts `json:"verdicts"`
	// Violations counts the conduct violations found since start.
	Violations int64 `json:"violations"`
}

// VerdictCounts counts by verdict.
type VerdictCounts struct {
	Genuine    int64 `json:"genuine"`
	Spoofed    int64 `json:"spoofed"`
	Unverified int64 `json:"unverified"`
}

// TargetStatus is what one target (nftables, crowdsec, exec) did.
type TargetStatus struct {
	Target string `json:"target"`
	// Blocked and Failed count the blocks made and failed since start.
	Blocked int64 `json:"blocked"`
	Failed  int64 `json:"failed"`
	// InForce counts the addresses the watch holds blocked there now (for
	// exec: commands run for spoofers whose verdict stands).
	InForce int64 `json:"in_force"`
	// Dropped counts blocks not tried: too many waited.
	Dropped int64 `json:"dropped,omitempty"`
}

// DNSStatus is how DNS fares.
type DNSStatus struct {
	// Down says an outage was said and has not ended.
	Down      bool             `json:"down"`
	Resolvers []ResolverStatus `json:"resolvers"`
	// Latency is the time queries took, answered or not.
	Latency Histogram `json:"latency"`
}

// ResolverStatus is one resolver.
type ResolverStatus struct {
	Server string `json:"server"`
	// Up says its last query was answered.
	Up bool `json:"up"`
	// Queries counts the queries sent; Failures those that got no answer
	// (timeouts, network errors, answers that do not match).
	Queries  int64 `json:"queries"`
	Failures int64 `json:"failures"`
	// LastAnswer and LastFailure are when the last answer came and the
	// last query failed; LastError says why it failed.
	LastAnswer  time.Time `json:"last_answer,omitzero"`
	LastFailure time.Time `json:"last_failure,omitzero"`
	LastError   string    `json:"last_error,omitempty"`
}

// Histogram counts observations in buckets: Counts[i] those at most
// Bounds[i] (cumulative, as Prometheus has them); Count all of them, Sum
// their total.
type Histogram struct {
	Bounds []float64 `json:"bounds"`
	Counts []uint64  `json:"counts"`
	Count  uint64    `json:"count"`
	Sum    float64   `json:"sum"`
}

// QueueStatus is what waits.
type QueueStatus struct {
	// Judge counts the addresses waiting to be judged.
	Judge int64 `json:"judge"`
	// Actions counts the spoofers waiting for their actions; NFTables the
	// addresses waiting for the block set; CrowdSec the decisions waiting
	// for the Local API; Exec the commands waiting to run.
	Actions  int64 `json:"actions"`
	NFTables int64 `json:"nftables"`
	CrowdSec int64 `json:"crowdsec"`
	Exec     int64 `json:"exec"`
	// Conduct counts the genuine crawlers' requests waiting for their
	// verdicts before their conduct is checked.
	Conduct int64 `json:"conduct"`
}

// EventCounts counts event lines.
type EventCounts struct {
	Written int64 `json:"written"`
	Lost    int64 `json:"lost"`
}

// Unblocked is what unblocking one address did, and the body of its event.
type Unblocked struct {
	Addr netip.Addr `json:"ip"`
	// Until is when the hold ends: the address is not blocked before.
	Until time.Time `json:"until"`
	// NFTables names the sets the address was taken out of; CrowdSec the
	// values whose decisions were ended; Exec is when an --exec command
	// ran for it (undo that with the command's tool).
	NFTables []string  `json:"nftables,omitempty"`
	CrowdSec []string  `json:"crowdsec,omitempty"`
	Exec     time.Time `json:"exec,omitzero"`
	// Errors say what could not be undone.
	Errors []string `json:"errors,omitempty"`
}

// Stopped is the status the state file gives of a watch that does not
// run: the last status its watch wrote (nothing of it when an unblock
// made the file), with the blocks and holds counted from its records as
// they stand at now.
func (l *Loaded) Stopped(now time.Time) Status {
	var s Status
	if l.Status != nil {
		s = *l.Status
	}
	s.Running = false
	if s.PID == 0 {
		s.PID = l.PID
	}
	inForce := map[string]map[netip.Addr]bool{}
	for _, b := range l.Blocks {
		if !b.Until.After(now) {
			continue
		}
		if inForce[b.Target] == nil {
			inForce[b.Target] = map[netip.Addr]bool{}
		}
		inForce[b.Target][b.Addr] = true
	}
	for i := range s.Blocks {
		s.Blocks[i].InForce = int64(len(inForce[s.Blocks[i].Target]))
	}
	s.Held = 0
	for _, h := range l.Holds {
		if h.Until.After(now) {
			s.Held++
		}
	}
	return s
}
