package cmd

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"strings"
	"unicode"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/parse"
)

// parseSiteFlags splits the --site values into GLOB=SITE rules, in order,
// and the one plain SITE for every other file ("" when none is given).
func parseSiteFlags(values []string) (audit.Sites, error) {
	var rules []audit.SiteRule
	var plain string
	for _, v := range values {
		i := strings.LastIndexByte(v, '=')
		if i < 0 {
			if isGlob(v) {
				return audit.Sites{}, &exitError{code: ExitUsage, err: withHint(
					fmt.Errorf("--site %q is a glob without a site: a plain --site names the site of every file", v),
					fmt.Sprintf("give GLOB=SITE for the files it matches, such as --site '%s=shop.example'", v))}
			}
			s, err := checkSiteName(v, v)
			if err != nil {
				return audit.Sites{}, err
			}
			if plain != "" {
				return audit.Sites{}, usageError("--site given twice for every file (%s and %s): give GLOB=SITE to name the site of some files", plain, s)
			}
			plain = s
			continue
		}
		glob, site := v[:i], v[i+1:]
		if glob == "" {
			return audit.Sites{}, usageError("--site %q: the glob before \"=\" is empty; give GLOB=SITE, such as '/var/log/sites/shop/*=shop.example'", v)
		}
		if strings.TrimSpace(site) == "" {
			return audit.Sites{}, usageError("--site %q: no site after \"=\"; give GLOB=SITE, such as '/var/log/sites/shop/*=shop.example'", v)
		}
		if _, err := filepath.Match(glob, ""); err != nil {
			return audit.Sites{}, usageError("--site %q: %q is not a valid glob (%v)", v, glob, err)
		}
		s, err := checkSiteName(v, site)
		if err != nil {
			return audit.Sites{}, err
		}
		rules = append(rules, audit.SiteRule{Glob: glob, Site: s})
	}
	return audit.Sites{Rules: rules, Default: plain}, nil
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

// checkSiteName puts a site given on the command line in the form log
// records use, or says why it is not a site.
func checkSiteName(flag, site string) (string, error) {
	s := parse.NormalizeSite(site)
	bad := s == "" || strings.ContainsFunc(s, func(r rune) bool {
		return r == '/' || r == '=' || r == '*' || r == '?' || unicode.IsSpace(r) || unicode.IsControl(r)
	})
	if bad {
		return "", usageError("--site %q: a site is a host name such as www.example.org", flag)
	}
	return s, nil
}
