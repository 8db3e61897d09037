package conduct

import (
	"fmt"
	"strings"

	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/lohisoft/lohibot-audit/robots"
)

// checkRobots flags pages the site's robots.txt disallows.
func (c *siteCheck) checkRobots() {
	var rb *robots.Robots
	if c.cfg.Robots != nil {
		rb = c.cfg.Robots(c.site)
	}
	if rb == nil {
		c.skip(KindRobots)
		return
	}
	for _, h := range c.pages {
		if !strings.HasPrefix(h.path, "/") {
			continue
		}
		d := rb.Decide(c.cfg.Token, h.path)
		if d.Allowed {
			continue
		}
		var detail string
		switch {
		case d.Line > 0:
			detail = fmt.Sprintf("disallowed by robots.txt line %d %s", d.Line, quote(d.Rule))
		case d.Why != "":
			detail = "disallowed: " + parse.EscapeControl(d.Why)
		default:
			detail = "disallowed by robots.txt"
		}
		c.add(KindRobots, h, detail)
		if d.Line > 0 {
			v := &c.out[len(c.out)-1]
			v.RobotsLine, v.RobotsRule = d.Line, d.Rule
		}
	}
}
