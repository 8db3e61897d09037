package audit

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot-audit/internal/fail"
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

// TestParseSitesErrors checks the words of each --site value that names
// no site rule, its hint, and that it is a usage error.
func TestParseSitesErrors(t *testing.T) {
	for _, tc := range []struct {
		values     []string
		want, hint string
	}{
		{[]string{"=a.example"}, `--site "=a.example": the glob before "=" is empty; give GLOB=SITE, such as '/var/log/sites/shop/*=shop.example'`, ""},
		{[]string{"logs/*="}, `--site "logs/*=": no site after "="; give GLOB=SITE, such as '/var/log/sites/shop/*=shop.example'`, ""},
		{[]string{"logs/[=a.example"}, `--site "logs/[=a.example": "logs/[" is not a valid glob (syntax error in pattern)`, ""},
		{[]string{"a.example", "b.example"}, "--site given twice for every file (a.example and b.example): give GLOB=SITE to name the site of some files", ""},
		{[]string{"a b"}, `--site "a b": a site is a host name such as www.example.org`, ""},
		{[]string{"logs/*=shop*"}, `--site "logs/*=shop*": a site is a host name such as www.example.org`, ""},
		// A glob without "=SITE" is not taken for the site's name.
		{[]string{"*.example"}, `--site "*.example" is a glob without a site: a plain --site names the site of every file`,
			"give GLOB=SITE for the files it matches, such as --site '*.example=shop.example'"},
		{[]string{"logs/access.log.?"}, `--site "logs/access.log.?" is a glob without a site: a plain --site names the site of every file`,
			"give GLOB=SITE for the files it matches, such as --site 'logs/access.log.?=shop.example'"},
		{[]string{"logs/[ab].log"}, `--site "logs/[ab].log" is a glob without a site: a plain --site names the site of every file`,
			"give GLOB=SITE for the files it matches, such as --site 'logs/[ab].log=shop.example'"},
	} {
		_, err := ParseSites(tc.values)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q: error %v, want %q", tc.values, err, tc.want)
			continue
		}
		if fail.KindOf(err) != fail.Usage || fail.HintOf(err) != tc.hint {
			t.Errorf("%q: kind %d, hint %q; want a usage error and hint %q", tc.values, fail.KindOf(err), fail.HintOf(err), tc.hint)
		}
	}
	// An IPv6 address in brackets is a site, not a glob.
	if sites, err := ParseSites([]string{"[2001:db8::1]"}); err != nil || sites.Default == "" {
		t.Errorf("[2001:db8::1]: %+v, %v; want a plain site", sites, err)
	}
}
