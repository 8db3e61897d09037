package audit

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/parse"
)

// ParseSites reads --site values: GLOB=SITE rules, in order, and at most
// one plain SITE for every other input. Sites are put in the form log
// records use; a value that names no site rule is a usage error
// (fail.Usage) that names the flag.
func ParseSites(values []string) (Sites, error) {
	var rules []SiteRule
	var plain string
	for _, v := range values {
		i := strings.LastIndexByte(v, '=')
		if i < 0 {
			if isGlob(v) {
				return Sites{}, fail.Hinted(fmt.Errorf("--site %q is a glob without a site: a plain --site names the site of every file", v),
					fmt.Sprintf("give GLOB=SITE for the files it matches, such as --site '%s=shop.example'", v))
			}
			s, err := siteName(v, v)
			if err != nil {
				return Sites{}, err
			}
			if plain != "" {
				return Sites{}, fail.Usagef("--site given twice for every file (%s and %s): give GLOB=SITE to name the site of some files", plain, s)
			}
			plain = s
			continue
		}
		glob, site := v[:i], v[i+1:]
		if glob == "" {
			return Sites{}, fail.Usagef("--site %q: the glob before \"=\" is empty; give GLOB=SITE, such as '/var/log/sites/shop/*=shop.example'", v)
		}
		if strings.TrimSpace(site) == "" {
			return Sites{}, fail.Usagef("--site %q: no site after \"=\"; give GLOB=SITE, such as '/var/log/sites/shop/*=shop.example'", v)
		}
		if _, err := filepath.Match(glob, ""); err != nil {
			return Sites{}, fail.Usagef("--site %q: %q is not a valid glob (%v)", v, glob, err)
		}
		s, err := siteName(v, site)
		if err != nil {
			return Sites{}, err
		}
		rules = append(rules, SiteRule{Glob: glob, Site: s})
	}
	return Sites{Rules: rules, Default: plain}, nil
}

// isGlob reports whether a --site value holds a glob's special
// characters: '*', '?', or a '[' that does not open an IPv6 address.
func isGlob(v string) bool {
	if strings.ContainsAny(v, "*?") {
		return true
	}
	if !strings.Contains(v, "[") {
		return false
	}
	_, err := netip.ParseAddr(strings.Trim(v, "[]"))
	return err != nil
}

// siteName puts the site of --site value v in the form log records use,
// or says why it is not a site.
func siteName(v, site string) (string, error) {
	s := parse.NormalizeSite(site)
	bad := s == "" || strings.ContainsFunc(s, func(r rune) bool {
		return r == '/' || r == '=' || r == '*' || r == '?' || unicode.IsSpace(r) || unicode.IsControl(r)
	})
	if bad {
		return "", fail.Usagef("--site %q: a site is a host name such as www.example.org", v)
	}
	return s, nil
}
