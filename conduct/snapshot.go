package conduct

import (
	"sort"
	"time"
)

// coverageGap is the longest quiet time between two logs that still
// counts as logged: rotated logs follow each other, but a missing rotation
// must not look like a stretch of time without requests.
const coverageGap = time.Hour

// Snapshot is all the checks need of an audit, in a form that can be
// written as JSON and read back: the genuine crawler's hits and the spans
// of time the logs cover. Snapshots of several servers can be merged by
// joining their Hits and Logs, as long as their file names differ (a
// file's time units are learnt from all hits that name it).
type Snapshot struct {
	Hits []Hit     `json:"hits"`
	Logs []LogSpan `json:"logs"`
}

// LogSpan is the stretch of time one input log covers.
type LogSpan struct {
	File string `json:"file"`
	// Site is the site of lines without a virtual host; HostLogged says
	// whether the log records the virtual host, so that it covers every
	// site and not only Site.
	Site       string `json:"site,omitempty"`
	HostLogged bool   `json:"host_logged,omitempty"`
	// First and Last are the times on the first and last well-formed
	// lines; a zero time is not known.
	First time.Time `json:"first"`
	Last  time.Time `json:"last"`
	// Cut says the log could not be read whole: nothing follows it.
	Cut bool `json:"cut,omitempty"`
}

// Check runs [Check] over the snapshot's hits, with cfg.LogStart and
// cfg.Covered, when nil, answered from the snapshot's logs.
func (s *Snapshot) Check(cfg Config) ([]Violation, []SiteReport) {
	return Check(s.Hits, Coverage(s.Logs).Apply(cfg))
}

// Coverage answers, from the logs read, what [Config].LogStart and
// [Config].Covered ask.
type Coverage []LogSpan

// Apply returns cfg with LogStart and Covered, when nil, answered by c.
func (c Coverage) Apply(cfg Config) Config {
	if cfg.LogStart == nil {
		cfg.LogStart = c.LogStart
	}
	if cfg.Covered == nil {
		cfg.Covered = c.Covered
	}
	return cfg
}

// LogStart returns the time on the first line of the named log, when
// known (the last log of that name wins).
func (c Coverage) LogStart(file string) (time.Time, bool) {
	for i := len(c) - 1; i >= 0; i-- {
		if c[i].File == file && !c[i].First.IsZero() {
			return c[i].First, true
		}
	}
	return time.Time{}, false
}

// Covered reports whether the logs that hold site's requests cover all of
// [from, to]. A log covers the span from its first to its last
// well-formed line (that second included); one log follows another when
// it begins within an hour of the other's end, unless the other was cut
// short. A log covers the sites of its virtual hosts when it logs them,
// and otherwise only its own site.
func (c Coverage) Covered(site string, from, to time.Time) bool {
	type span struct {
		start, end time.Time
		cut        bool // the input ended early: nothing follows it
	}
	var spans []span
	for _, in := range c {
		if in.First.IsZero() || in.Last.IsZero() || !(in.HostLogged || in.Site == site) {
			continue
		}
		end := in.Last.Add(time.Second) // the last second is logged whole
		if !in.First.Before(end) {
			continue
		}
		spans = append(spans, span{in.First, end, in.Cut})
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].start.Before(spans[j].start) })
	for i := 0; i < len(spans); {
		s := spans[i]
		j := i + 1
		for j < len(spans) && !s.cut && !spans[j].start.After(s.end.Add(coverageGap)) {
			if spans[j].end.After(s.end) {
				s.end, s.cut = spans[j].end, spans[j].cut
			} else {
				s.cut = s.cut || spans[j].cut
			}
			j++
		}
		if !s.start.After(from) && !s.end.Before(to) {
			return true
		}
		i = j
	}
	return false
}
