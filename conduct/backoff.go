package conduct

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// wait is the wait a 429 or 5xx answer asked for.
type wait struct {
	delta  time.Duration // with !hasAt: wait this long after the answer
	at     time.Time     // with hasAt: wait until then
	hasAt  bool
	header string // the Retry-After as logged, "" when none
	bad    bool   // a Retry-After was logged but could not be read
}

// parseRetryAfter reads a Retry-After value (RFC 9110 §10.2.3):
// delta-seconds (a huge number is capped, not wrapped) or an HTTP-date in
// any of the three forms HTTP allows. ok is false for "", "-" and
// anything else.
func parseRetryAfter(v string) (delta time.Duration, at time.Time, isDate, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" || v == "-" {
		return 0, time.Time{}, false, false
	}
	digits := true
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			digits = false
			break
		}
	}
	if digits {
		const maxSec = int64(1<<63-1) / int64(time.Second)
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n > maxSec {
			n = maxSec // only overflow is possible here
		}
		return time.Duration(n) * time.Second, time.Time{}, false, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return 0, t, true, true
	}
	return 0, time.Time{}, false, false
}

// waitFor is the wait that a 429 or 5xx answer x asked for; ok is false
// when there is nothing to check.
func waitFor(cfg *Config, x *hit) (w wait, ok bool) {
	w.header = x.RetryAfter()
	delta, at, isDate, parsed := parseRetryAfter(w.header)
	switch {
	case parsed && isDate:
		w.at, w.hasAt = at, true
		return w, true
	case parsed:
		w.delta = delta
		return w, delta > 0
	}
	w.bad = strings.TrimSpace(w.header) != "" && strings.TrimSpace(w.header) != "-"
	w.delta = cfg.MinBackoff
	return w, w.delta > 0
}

// backoffState follows one site's requests, in order, for the backoff
// check: each 429 or 5xx answer waits for the first request surely sent
// after it (within scanLimit requests), which is checked against the
// wait it asked for. The batch check and the live tracker step through
// it alike; it holds at most scanLimit answers.
type backoffState struct {
	waits []pendingWait
}

type pendingWait struct {
	x     *hit
	w     wait
	since int
}

// step checks y against the answers before it, then, when y is a 429 or
// 5xx, lets it wait for the request after it.
func (s *backoffState) step(c *siteCheck, y *hit) {
	reported := false
	n := 0
	for _, p := range s.waits {
		p.since++
		if p.since > scanLimit {
			continue
		}
		// The skew of their clocks, when two logged them: the answer's
		// Retry-After date is by its server's clock too.
		sk := c.skewOf(p.x, y)
		if y.sLo.Before(p.x.eHi.Add(sk)) {
			s.waits[n] = p
			n++
			continue // may have been sent before the answer came
		}
		var early bool
		if p.w.hasAt {
			early = !y.sHi.Add(sk).After(p.w.at)
		} else {
			early = y.sHi.Sub(p.x.eLo)+sk <= p.w.delta
		}
		if early && !reported {
			reported = true
			if c.want(kBackoff, y) {
				c.add(kBackoff, y, backoffDetail(p.x, y, p.w))
			}
		}
	}
	clear(s.waits[n:])
	s.waits = s.waits[:n]
	if IsBackoffStatus(int(y.Status)) {
		if w, ok := waitFor(c.cfg, y); ok {
			s.waits = append(s.waits, pendingWait{x: y, w: w})
		}
	}
}

// backoffDetail says why y came too soon after the answer x.
func backoffDetail(x, y *hit, w wait) string {
	gap := fmtDur(y.sNom.Sub(x.eNom))
	ref := refTo(x, y)
	st := x.Status
	switch {
	case w.hasAt:
		return fmt.Sprintf("came at %s, before the %s that the %d answer on %s asked for (Retry-After: %s)",
			fmtTime(y.sNom), fmtTime(w.at), st, ref, quote(w.header))
	case w.header != "" && !w.bad:
		return fmt.Sprintf("came %s after the %d answer on %s, which asked for %s (Retry-After: %s)",
			gap, st, ref, fmtDur(w.delta), quote(w.header))
	case w.bad:
		return fmt.Sprintf("came %s after the %d answer on %s, whose Retry-After %s is unreadable; the least backoff is %s",
			gap, st, ref, quote(w.header), fmtDur(w.delta))
	default:
		return fmt.Sprintf("came %s after the %d answer on %s, with no Retry-After logged; the least backoff is %s",
			gap, st, ref, fmtDur(w.delta))
	}
}
