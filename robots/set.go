package robots

import (
	"fmt"
	"sort"
	"strings"

	"github.com/lohisoft/lohibot-audit/internal/urlarg"
	"github.com/lohisoft/lohibot-audit/parse"
)

// Set is the robots.txt of each site of an audit: one for every site, one
// per named site, or both (a named site's own wins). A nil *Set has none.
type Set struct {
	all    *Source
	bySite map[string]*Source
}

// DuplicateError is returned by [LoadSet] for two sources given for every
// site, or two for one site.
type DuplicateError struct {
	// Site is "" for every site.
	Site          string
	First, Second string
}

func (e *DuplicateError) Error() string {
	if e.Site == "" {
		return fmt.Sprintf("robots.txt given twice for every site (%s and %s)", e.First, e.Second)
	}
	return fmt.Sprintf("robots.txt given twice for site %s (%s and %s)", e.Site, e.First, e.Second)
}

// EmptySourceError is returned by [LoadSet] for a value that names no
// robots.txt, such as "example.com=".
type EmptySourceError struct{ Value string }

func (e *EmptySourceError) Error() string {
	return fmt.Sprintf("%q names no robots.txt", e.Value)
}

// SplitValue splits a robots.txt value into its site ("" for every site)
// and source. A value is FILE or URL for every site, or SITE=FILE|URL for
// one site. A value with a scheme (x://, see [urlarg.Scheme]) is always a URL;
// otherwise text before the first "=" is a site when it is not empty and
// has no "/" (write ./a=b.txt for a file whose name has "=" in it). The
// site is put in the form log records use (see [parse.NormalizeSite]).
func SplitValue(v string) (site, src string) {
	if urlarg.IsURL(v) {
		return "", v
	}
	i := strings.IndexByte(v, '=')
	if i <= 0 || strings.ContainsRune(v[:i], '/') {
		return "", v
	}
	return parse.NormalizeSite(v[:i]), v[i+1:]
}

// LoadSet builds the Set that values (see [SplitValue]) describe, calling
// load once for each distinct source. A source that load returns with
// Unavailable set leaves the robots check of its sites out (see
// [Set.Warnings]). It returns load's error as it is, an
// [*EmptySourceError] or a [*DuplicateError].
func LoadSet(values []string, load func(src string) (*Source, error)) (*Set, error) {
	s := &Set{bySite: map[string]*Source{}}
	loaded := map[string]*Source{}
	get := func(src string) (*Source, error) {
		if rs, ok := loaded[src]; ok {
			return rs, nil
		}
		rs, err := load(src)
		if err != nil {
			return nil, err
		}
		loaded[src] = rs
		return rs, nil
	}
	for _, v := range values {
		site, src := SplitValue(v)
		if src == "" {
			return nil, &EmptySourceError{Value: v}
		}
		prev := s.all
		if site != "" {
			prev = s.bySite[site]
		}
		if prev != nil {
			return nil, &DuplicateError{Site: site, First: prev.Name, Second: src}
		}
		rs, err := get(src)
		if err != nil {
			return nil, err
		}
		if site == "" {
			s.all = rs
		} else {
			s.bySite[site] = rs
		}
	}
	return s, nil
}

// For returns the robots.txt that applies to site (a log record's site:
// lower case, no port), or nil when none does or it could not be fetched:
// the robots check is then skipped for the site.
func (s *Set) For(site string) *Robots {
	if rs := s.Source(site); rs != nil {
		return rs.Robots
	}
	return nil
}

// History returns the dated versions of site's robots.txt, or nil when
// its robots.txt is a single one (or none).
func (s *Set) History(site string) *History {
	if rs := s.Source(site); rs != nil {
		return rs.History
	}
	return nil
}

// Source is like For but returns where the robots.txt came from and its
// note, or nil.
func (s *Set) Source(site string) *Source {
	if s == nil {
		return nil
	}
	if rs, ok := s.bySite[parse.NormalizeSite(site)]; ok {
		return rs
	}
	return s.all
}

// Warnings returns, once per source and sorted by source, what the loaded
// robots.txt files call for: why a check is skipped, the allow-all or
// disallow-all notes and the parser's warnings, each naming the source.
// Text from robots.txt is not escaped: escape it before printing.
func (s *Set) Warnings() []string {
	if s == nil {
		return nil
	}
	seen := map[*Source]bool{}
	var srcs []*Source
	add := func(rs *Source) {
		if rs != nil && !seen[rs] {
			seen[rs] = true
			srcs = append(srcs, rs)
		}
	}
	add(s.all)
	for _, rs := range s.bySite {
		add(rs)
	}
	sort.Slice(srcs, func(i, j int) bool { return srcs[i].Name < srcs[j].Name })
	var out []string
	for _, rs := range srcs {
		if rs.Unavailable != "" {
			out = append(out, fmt.Sprintf("robots.txt %s %s now: the robots check is skipped for %s (RFC 9309's disallow-all binds the crawler when it fetched, not this audit)",
				rs.Name, rs.Unavailable, s.sitesOf(rs)))
		}
		out = append(out, rs.Warnings()...)
	}
	return out
}

// Warnings returns the source's note, then the parser's warnings prefixed
// with "robots.txt NAME: ". Text from robots.txt is not escaped.
func (rs *Source) Warnings() []string {
	var out []string
	if rs.Note != "" {
		out = append(out, rs.Note)
	}
	for _, w := range rs.Robots.Warnings() {
		out = append(out, "robots.txt "+rs.Name+": "+w)
	}
	return out
}

// sitesOf says which sites take their robots.txt from rs: "every site",
// "every site but a, b", "site a" or "sites a, b".
func (s *Set) sitesOf(rs *Source) string {
	var own, others []string
	for site, x := range s.bySite {
		if x == rs {
			own = append(own, site)
		} else {
			others = append(others, site)
		}
	}
	sort.Strings(own)
	sort.Strings(others)
	switch {
	case s.all == rs && len(others) == 0:
		return "every site"
	case s.all == rs:
		return "every site but " + strings.Join(others, ", ")
	case len(own) == 1:
		return "site " + own[0]
	}
	return "sites " + strings.Join(own, ", ")
}

// UnknownSites returns, sorted, the sites given their own robots.txt that
// none of sites (the sites an audit found) is: a typo, or logs of another
// site.
func (s *Set) UnknownSites(sites []string) []string {
	if s == nil {
		return nil
	}
	known := map[string]bool{}
	for _, x := range sites {
		known[x] = true
	}
	var names []string
	for site := range s.bySite {
		if !known[site] {
			names = append(names, site)
		}
	}
	sort.Strings(names)
	return names
}
