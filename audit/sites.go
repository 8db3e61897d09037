package audit

import (
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Sites says which site the lines of an input that records no virtual
// host belong to (--site): the first rule whose glob matches the input's
// path as given, else Default, else a name chosen from the path (see
// [Sites.Choose]). The zero value chooses from the paths alone.
type Sites struct {
	Rules   []SiteRule
	Default string
}

// SiteRule is one --site GLOB=SITE value: inputs whose path, as given,
// matches Glob (filepath.Match) belong to Site.
type SiteRule struct {
	Glob, Site string
}

// SiteChoice is the site of one input's lines that carry no virtual host,
// and how it was chosen.
type SiteChoice struct {
	File string
	Site string
	// Base is the file's base name without rotation suffixes; ByDir says
	// the site is the file's directory's name because other files of
	// another directory share Base.
	Base  string
	ByDir bool
}

// SiteOf is Choose(files) as a function: the site of each of files, ""
// for a file that is not one of them (a follower's).
func (s Sites) SiteOf(files []string) func(file string) string {
	sites := make(map[string]string, len(files))
	for _, c := range s.Choose(files) {
		sites[c.File] = c.Site
	}
	return func(file string) string { return sites[file] }
}

// Choose names the site of each input's lines that carry no virtual
// host: the first rule whose glob matches the path as given, else
// Default, else "stdin" for "-", else the file's base name without
// rotation and compression suffixes, in lower case. Two files are never merged into one site by accident: when
// files of different directories share a base name
// (sites/a.example/access.log, sites/b.example/access.log), each file's
// site is its directory's name, with as many parent directories as it
// takes to tell the directories apart. Rotated files of one directory
// (access.log, access.log.1, access.log.2.gz) stay one site.
func (s Sites) Choose(files []string) []SiteChoice {
	out := make([]SiteChoice, len(files))
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
		if !slices.Contains(dirsByBase[base], dir) {
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
		if site, ok := s.match(f); ok {
			c.Site = site
			continue
		}
		if s.Default != "" {
			c.Site = s.Default
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

// match returns the site of the first rule whose glob matches path.
func (s Sites) match(path string) (string, bool) {
	for _, r := range s.Rules {
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

// SiteWarnings says, once per shared base name, which files without a
// virtual host were given their directory's name as their site. inputs are
// the reports of the inputs chosen for, in the same order: those whose
// format records the virtual host name their own sites.
func SiteWarnings(choices []SiteChoice, inputs []InputReport) []string {
	byBase := map[string][]SiteChoice{}
	for i, c := range choices {
		if c.ByDir && (i >= len(inputs) || !inputs[i].HostLogged) {
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

// Unmatched says which rules match none of files: a glob is matched
// against the path as given, so a typo or a relative path for absolute
// ones would otherwise be silent.
func (s Sites) Unmatched(files []string) []string {
	var out []string
	for _, r := range s.Rules {
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

// rotation matches the suffixes log rotation adds: .1, .2.gz, -20261201.
var rotation = regexp.MustCompile(`(\.\d+|-\d{8,10})?(\.gz)?$`)

// siteFromFile names the site of a log without virtual hosts after its
// file: the base name without rotation and compression suffixes.
func siteFromFile(name string) string {
	if name == "-" {
		return "stdin"
	}
	base := filepath.Base(name)
	if s := rotation.ReplaceAllString(base, ""); s != "" {
		base = s
	}
	return strings.ToLower(base)
}
