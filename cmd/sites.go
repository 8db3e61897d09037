package cmd

import (
	"errors"

	"github.com/lohisoft/lohibot-audit/audit"
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
		return sites, &exitError{code: ExitUsage, err: err}
	}
	return sites, err
}
