package audit

import (
	"path/filepath"
	"strings"
	"testing"
)

// FuzzParseSites checks that --site values never panic the parser and
// that every rule it accepts has a valid glob and a site fit for a log
// record.
func FuzzParseSites(f *testing.F) {
	for _, s := range []string{"a.example", "/var/log/*/access.log=a.example", "=x", "a=", "[=x", "x=a=b", "a b", "A.Example:443"} {
		f.Add(s, "b.example")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		sites, err := ParseSites([]string{a, b})
		rules, plain := sites.Rules, sites.Default
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q is not one line", err)
			}
			return
		}
		for _, r := range rules {
			if _, err := filepath.Match(r.Glob, "x"); err != nil {
				t.Errorf("rule %+v: bad glob accepted", r)
			}
			if r.Site == "" || r.Site != strings.ToLower(r.Site) || strings.ContainsAny(r.Site, "/= \t\n") {
				t.Errorf("rule %+v: site unfit for a log record", r)
			}
		}
		if plain != "" && plain != strings.ToLower(plain) {
			t.Errorf("plain site %q is not lower case", plain)
		}
	})
}
