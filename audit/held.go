package audit

import (
	"context"
	"io"
	"time"

	"github.com/lohisoft/lohibot-audit/conduct"
	"github.com/lohisoft/lohibot-audit/verify"
)

// Holding is what a run holds every crawler to beyond its promises and
// the overrides of conduct.ConfigOf: the window of the audit, how many
// violations are listed, and the sites that opted out.
type Holding struct {
	Since, Until  time.Time
	Overrides     conduct.Overrides
	MaxViolations int
	// OptOuts are each crawler's opted-out sites, by crawler name; pages
	// after an opt-out and OptOutGrace are violations.
	OptOuts     map[string]conduct.OptOuts
	OptOutGrace time.Duration
}

// SubjectsHeld are the crawlers of id (SubjectsOf) held to h.
func SubjectsHeld(id *verify.Identity, h Holding) []Subject {
	out := SubjectsOf(id, h.Since, h.Until, h.Overrides)
	for i := range out {
		out[i].Conduct.MaxViolations = h.MaxViolations
		if oo := h.OptOuts[out[i].Profile.Name]; oo != nil {
			out[i].Conduct.OptedOut, out[i].Conduct.OptOutGrace = oo.For, h.OptOutGrace
		}
	}
	return out
}

// InputsOf are the inputs of the files, each of the site chosen for it
// (sites, in the order of files: Sites.Choose) and opened by open.
func InputsOf(files []string, sites []SiteChoice, open func(name string) func(context.Context) (io.ReadCloser, int64, error)) []Input {
	out := make([]Input, len(files))
	for i, name := range files {
		out[i] = Input{Name: name, Site: sites[i].Site, Open: open(name)}
	}
	return out
}
