package conduct

import (
	"time"

	"github.com/lohisoft/lohibot-audit/crawler"
)

// Overrides are conduct settings given for every crawler of a run (SPEC
// §10: a conduct flag given on the command line or in the config file).
// Each one set replaces what every profile promises; one left nil keeps
// each profile's own promise.
type Overrides struct {
	// Budget replaces every crawler's page budget (pages and window).
	Budget *crawler.Budget
	// MinPause replaces every crawler's least pause between requests.
	MinPause *time.Duration
	// MinBackoff replaces every crawler's least wait after a 429 or 5xx
	// whose Retry-After the log does not record.
	MinBackoff *time.Duration
}

// ConfigOf is the conduct configuration that p is held to: its promises
// (a promise it does not make is not checked: that check is off), each
// replaced by the override set for it. Without a robots.txt promise the
// three robots.txt checks are off (RobotsOff), or not promised
// (RobotsNotPromised) when its operator says it may ignore robots.txt;
// with one, the robots.txt in force is for the caller to give: Robots is
// left nil.
func ConfigOf(p *crawler.Profile, ov Overrides) Config {
	c := p.Conduct
	cfg := Config{Token: p.RobotsToken, MinPause: c.MinPause,
		RobotsOff: !c.Robots && !c.RobotsNotPromised, RobotsNotPromised: c.RobotsNotPromised}
	if c.Budget != nil {
		cfg.Budget, cfg.BudgetWindow = c.Budget.Pages, c.Budget.Window
	}
	if c.Backoff != nil {
		cfg.MinBackoff = c.Backoff.Min
	}
	if ov.Budget != nil {
		cfg.Budget, cfg.BudgetWindow = ov.Budget.Pages, ov.Budget.Window
	}
	if ov.MinPause != nil {
		cfg.MinPause = *ov.MinPause
	}
	if ov.MinBackoff != nil {
		cfg.MinBackoff = *ov.MinBackoff
	}
	return cfg
}
