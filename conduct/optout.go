package conduct

import (
	"fmt"
	"time"
)

// DefaultOptOutGrace is how long after a site's opt-out the crawler may
// still fetch its pages (SPEC §15: the e-mail is read, the crawl list
// updated).
const DefaultOptOutGrace = 48 * time.Hour

// checkOptOut flags page h when its site opted out of the crawl and h
// surely started after the opt-out's time and the grace.
func (c *siteCheck) checkOptOut(h *hit) {
	if c.cfg.OptedOut == nil {
		return
	}
	if !c.optLooked || c.out != nil {
		c.optLooked = true
		c.optAt, c.optSet = c.cfg.OptedOut(c.site)
	}
	if !c.optSet {
		return
	}
	if !h.timed {
		c.skip(kOptOut)
		return
	}
	end := c.optAt.Add(c.cfg.OptOutGrace)
	if !h.sLo.After(end) || !c.want(kOptOut, h) {
		return
	}
	c.add(kOptOut, h, fmt.Sprintf("a page of a site that asked to be left out of the crawl at %s, fetched %s after the %s grace ended",
		fmtTime(c.optAt), fmtDur(h.sNom.Sub(end)), fmtDur(c.cfg.OptOutGrace)))
}

// OptOuts are the sites that opted out of one crawler's crawl, by site
// (in the form log records use), each with the time it asked.
type OptOuts map[string]time.Time

// For returns when site opted out, and whether it did: a Config's
// OptedOut.
func (o OptOuts) For(site string) (time.Time, bool) {
	t, ok := o[site]
	return t, ok
}
