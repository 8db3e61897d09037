package cmd

import (
	"fmt"
	"net/netip"
	"path/filepath"
	"sort"
	"strings"
	"unicode"

	"github.com/lohisoft/lohibot-audit/parse"
)

// siteRule is one --site GLOB=SITE value: files whose path, as given,
// matches Glob (filepath.Match) belong to Site.
type siteRule struct {
	Glob, Site string
}

// siteChoice is the site of one input's lines that carry no virtual host,
// and how it was chosen.
type siteChoice struct {
	File string
	Site string
	// Base is the file's base name without rotation suffixes; ByDir says
	// the site is the file's directory's name because other files of
	// another directory share Base.
	Base  string
	ByDir bool
}

// parseSiteFlags splits the --site values into GLOB=SITE rules, in order,
// and the one plain SITE for every other file ("" when none is given).
func parseSiteFlags(values []string) (rules []siteRule, plain string, err error) {
	for _, v := range values {
		i := strings.LastIndexByte(v, '=')
		if i < 0 {
			if isGlob(v) {
				return nil, "", &exitError{code: ExitUsage, err: withHint(
					fmt.Errorf("--site %q is a glob without a site: a plain --site names the site of every file", v),
					fmt.Sprintf("give GLOB=SITE for the files it matches, such as --site '%s=shop.example'", v))}
			}
			s, err := checkSiteName(v, v)
			if err != nil {
				return nil, "", err
			}
			if plain != "" {
				return nil, "", usageError("--site given twice for every file (%s and %s): give GLOB=SITE to name the site of some files", plain, s)
			}
			plain = s
			continue
		}
		glob, site := v[:i], v[i+1:]
		if glob == "" {
			return nil, "", usageError("--site %q: the glob before \"=\" is empty; give GLOB=SITE, such as '/var/log/sites/shop/*=shop.example'", v)
		}
		if strings.TrimSpace(site) == "" {
			return nil, "", usageError("--site %q: no site after \"=\"; give GLOB=SITE, such as '/var/log/sites/shop/*=shop.example'", v)
		}
		if _, err := filepath.Match(glob, ""); err != nil {
			return nil, "", usageError("--site %q: %q is not a valid glob (%v)", v, glob, err)
		}
		s, err := checkSiteName(v, site)
		if err != nil {
			return nil, "", err
		}
		rules = append(rules, siteRule{Glob: glob, Site: s})
	}
	return rules, plain, nil
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

// chooseSites names the site of each input's lines that carry no virtual
// host: the first --site GLOB=SITE whose glob matches the path as given,
// else the plain --site SITE, else the file's base name without rotation
// suffixes. Two files are never merged into one site by accident: when
// files of different directories share a base name
// (sites/a.example/access.log, sites/b.example/access.log), each file's
// site is its directory's name, with as many parent directories as it
// takes to tell the directories apart. Rotated files of one directory
// (access.log, access.log.1, access.log.2.gz) stay one site.
func chooseSites(files []string, rules []siteRule, plain string) []siteChoice {
	out := make([]siteChoice, len(files))
	// dirsByBase holds the distinct directories of the files of each base
	// name; dirOf is each file's directory, made absolute and clean so
	// that one directory written two ways is one.
	dirsByBase := map[string][]string{}
	dirOf := make([]string, len(files))
	for i, f := range files {
		out[i].File = f
		if f == "-" {
			continue
		}
		base := siteFromFile(f)
		out[i].Base = base
		dir := filepath.Dir(f)
		if abs, err := filepath.Abs(dir); err == nil {
			dir = abs
		}
		dir = filepath.Clean(dir)
		dirOf[i] = dir
		if !containsString(dirsByBase[base], dir) {
			dirsByBase[base] = append(dirsByBase[base], dir)
		}
	}
	dirNames := map[string]string{}
	for _, dirs := range dirsByBase {
		if len(dirs) < 2 {
			continue
		}
		for _, d := range dirs {
			dirNames[d] = dirSiteName(d, dirs)
		}
	}
	for i, f := range files {
		c := &out[i]
		if s, ok := matchSiteRule(rules, f); ok {
			c.Site = s
			continue
		}
		if plain != "" {
			c.Site = plain
			continue
		}
		if f == "-" {
			c.Site = "stdin"
			continue
		}
		if len(dirsByBase[c.Base]) > 1 {
			c.Site, c.ByDir = dirNames[dirOf[i]], true
			continue
		}
		c.Site = c.Base
	}
	return out
}

// matchSiteRule returns the site of the first rule whose glob matches
// path.
func matchSiteRule(rules []siteRule, path string) (string, bool) {
	for _, r := range rules {
		if ok, _ := filepath.Match(r.Glob, path); ok {
			return r.Site, true
		}
	}
	return "", false
}

// dirSiteName names dir after its last path elements: as few as tell it
// apart from every other directory of dirs.
func dirSiteName(dir string, dirs []string) string {
	parts := strings.Split(strings.Trim(filepath.ToSlash(dir), "/"), "/")
	for k := 1; k <= len(parts); k++ {
		name := strings.Join(parts[len(parts)-k:], "/")
		unique := true
		for _, o := range dirs {
			if o == dir {
				continue
			}
			op := strings.Split(strings.Trim(filepath.ToSlash(o), "/"), "/")
			if len(op) >= k && strings.Join(op[len(op)-k:], "/") == name {
				unique = false
				break
			}
		}
		if unique && name != "" {
			return strings.ToLower(name)
		}
	}
	return strings.ToLower(filepath.ToSlash(dir))
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// siteWarnings says, once per shared base name, which files without a
// virtual host were given their directory's name as their site.
// hostLogged says which inputs record the virtual host (their lines name
// their own site).
func siteWarnings(choices []siteChoice, hostLogged []bool) []string {
	byBase := map[string][]siteChoice{}
	for i, c := range choices {
		if c.ByDir && !hostLogged[i] {
			byBase[c.Base] = append(byBase[c.Base], c)
		}
	}
	bases := make([]string, 0, len(byBase))
	for b := range byBase {
		bases = append(bases, b)
	}
	sort.Strings(bases)
	const maxListed = 20
	var out []string
	for _, b := range bases {
		cs := byBase[b]
		var items []string
		for i, c := range cs {
			if i == maxListed {
				items = append(items, fmt.Sprintf("and %d more", len(cs)-maxListed))
				break
			}
			items = append(items, fmt.Sprintf("%s (%s)", c.File, c.Site))
		}
		out = append(out, fmt.Sprintf("files without a virtual host share the base name %s in different directories, so each file's site is its directory's name: %s; name sites yourself with --site GLOB=SITE",
			b, strings.Join(items, ", ")))
	}
	return out
}

// unmatchedSiteRules says which --site GLOB=SITE values match none of
// files: a glob is matched against the path as given, so a typo or a
// relative path for absolute ones would otherwise be silent.
func unmatchedSiteRules(rules []siteRule, files []string) []string {
	var out []string
	for _, r := range rules {
		matched := false
		for _, f := range files {
			if ok, _ := filepath.Match(r.Glob, f); ok {
				matched = true
				break
			}
		}
		if !matched {
			out = append(out, fmt.Sprintf("--site %s=%s matches none of the files given (the glob is matched against each path as given)", r.Glob, r.Site))
		}
	}
	return out
}
