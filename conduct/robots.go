package conduct

import (
	"fmt"
	"strings"

	"github.com/lohisoft/lohibot-audit/parse"
)

// checkRobots flags page h when the site's robots.txt disallows it. The
// batch checks look robots.txt up once per site; the live tracker at each
// page, as a reload may change it.
func (c *siteCheck) checkRobots(h *hit) {
	if !c.rbLooked || c.out != nil {
		c.rbLooked = true
		if c.cfg.Robots != nil {
			c.rb = c.cfg.Robots(c.site)
		}
	}
	if c.rb == nil || !strings.HasPrefix(h.path, "/") {
		return
	}
	d := c.rb.Decide(c.cfg.Token, h.path)
	if d.Allowed || !c.want(kRobots, h) {
		return
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
	if v := c.add(kRobots, h, detail); v != nil && d.Line > 0 {
		v.RobotsLine, v.RobotsRule = d.Line, d.Rule
	}
}
