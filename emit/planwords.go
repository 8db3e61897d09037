package emit

import (
	"fmt"
	"strings"

	"github.com/lohisoft/lohibot-audit/internal/ipfmt"
	"github.com/lohisoft/lohibot-audit/internal/nouns"
)

// Remark is a line of what the plan left out, in words. Asked marks the
// addresses --never-block kept out: what the user asked for, worth saying
// on a terminal only; the others are warnings.
type Remark struct {
	Text  string
	Asked bool
}

// Remarks say what the safety rules kept out of the rules, and the
// emitter's notes, in order.
func (p *Plan) Remarks() []Remark {
	var out []Remark
	warn := func(format string, a ...any) { out = append(out, Remark{Text: fmt.Sprintf(format, a...)}) }
	reasons, byReason := p.SkippedBy()
	var special []string
	for _, r := range reasons {
		var shown []string
		for _, pr := range byReason[r] {
			shown = append(shown, ipfmt.Prefix(pr))
		}
		list := shortList(shown)
		switch r {
		case SkipNeverBlock:
			out = append(out, Remark{Text: "not blocked, as --never-block asks: " + list, Asked: true})
		case SkipGenuine, SkipListed:
			warn("not blocked, though reported as spoofing: %s (%s: the report contradicts itself or the IP list changed)", list, r)
		case SkipTooWide:
			warn("left out, wider than the target accepts: %s", list)
		case SkipProxy:
			warn("not blocked, though reported as spoofing: %s (proxy: a CDN's edge or a trusted proxy forwards every visitor's requests, so the report judged the proxy; see --trusted-proxy)", list)
		default:
			special = append(special, fmt.Sprintf("%s (%s)", list, r))
		}
	}
	if len(special) > 0 {
		warn("left out, as no rule ever matches such addresses: %s; if the server is behind a proxy, its log shows the proxy's address (see --trusted-proxy)", strings.Join(special, ", "))
	}
	for _, n := range p.Notes {
		out = append(out, Remark{Text: n})
	}
	return out
}

// shortList joins at most five items and counts the rest.
func shortList(items []string) string {
	if len(items) <= 5 {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:5], ", "), len(items)-5)
}

// Count says how many addresses the rules hold.
func (p *Plan) Count() string {
	switch p.Mode {
	case AllowBot:
		return nouns.Count(len(p.Allow), "address", "addresses") + " allowed"
	case BlockSpoofed:
		return fmt.Sprintf("%s blocked, %d spared from the token rule", nouns.Count(len(p.Block), "address", "addresses"), len(p.Exempt))
	}
	return nouns.Count(len(p.Block), "address", "addresses") + " blocked"
}
