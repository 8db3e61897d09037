package cmd

import (
	"errors"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/internal/fail"
)

// parseSiteFlags reads the --site values (audit.ParseSites).
func parseSiteFlags(values []string) (audit.Sites, error) {
	sites, err := audit.ParseSites(values)
	var bad *audit.SiteValueError
	if errors.As(err, &bad) {
		err = errors.New("--site " + bad.Msg)
		if bad.Hint != "" {
			err = withHint(err, bad.Hint)
		}
		return sites, fail.New(fail.Usage, err, "")
	}
	return sites, err
}
