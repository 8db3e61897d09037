package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/parse"
)

// robotsFetchTimeout bounds one robots.txt fetch, redirects included.
const robotsFetchTimeout = 10 * time.Second

// robotsMaxRedirects is how many consecutive redirects a robots.txt fetch
// follows (RFC 9309 §2.3.1.2: at least five).
const robotsMaxRedirects = 5

// errRobotsTooManyRedirects stops a fetch after robotsMaxRedirects.
var errRobotsTooManyRedirects = errors.New("too many redirects")

// robotsSource is a robots.txt as loaded for a command.
type robotsSource struct {
	// Name says where it came from: the file path, the URL as given, or
	// "stdin".
	Name string
	// File is the local file path when the robots.txt was read from a
	// file, else "" (a URL or stdin).
	File string
	// Robots is nil only when Unavailable is set.
	Robots *parse.Robots
	// Note is "" for a robots.txt that was read, else why RFC 9309's
	// allow-all or disallow-all applies (a 4xx, or a 5xx or unreachable
	// URL read as RFC 9309 says).
	Note string
	// Unavailable says why a URL could not be fetched now (network error,
	// timeout, 5xx) when the caller asked to skip the robots check then.
	Unavailable string
}

// robotsFetchPolicy says what a robots.txt URL that cannot be fetched now
// (a network error, a timeout, a 5xx) stands for.
type robotsFetchPolicy int

const (
	// robotsFetchFail makes it an error (exit 3, "could not check"): a
	// gate checks the file, not the network.
	robotsFetchFail robotsFetchPolicy = iota
	// robotsFetchRFC reads it as RFC 9309 §2.3.1.4 tells a crawler to:
	// disallow all.
	robotsFetchRFC
	// robotsFetchSkip leaves the robots check out (Unavailable set): the
	// auditor's trouble today says nothing about what the crawler found
	// when it fetched.
	robotsFetchSkip
)

// parseRobotsFetchPolicy reads --on-fetch-error.
func parseRobotsFetchPolicy(v string) (robotsFetchPolicy, error) {
	switch v {
	case "fail":
		return robotsFetchFail, nil
	case "rfc":
		return robotsFetchRFC, nil
	}
	return 0, usageError("unknown --on-fetch-error %q: use fail (exit 3, could not check) or rfc (RFC 9309: disallow all)", v)
}

// robotsIsURL reports whether src names an http(s) URL rather than a file.
func robotsIsURL(src string) bool {
	l := strings.ToLower(src)
	return strings.HasPrefix(l, "http://") || strings.HasPrefix(l, "https://")
}

// loadRobots reads robots.txt from a file, "-" (env.Stdin) or an http(s)
// URL. A URL that answers 4xx, or redirects more than five times, gives
// RFC 9309's allow-all, with Note saying so; one that cannot be fetched now
// (5xx, timeout, network error) is what policy says. An unusable argument
// or an unreadable file is an error (exit 2), a read cut short too (exit
// 3).
func loadRobots(ctx context.Context, env *Env, src string, policy robotsFetchPolicy) (*robotsSource, error) {
	switch {
	case src == "":
		return nil, usageError("robots.txt source is empty: give a file, - for stdin, or an http(s):// URL")
	case src == "-":
		data, err := readAllContext(ctx, env.Stdin, parse.RobotsMaxBytes+1)
		if errors.Is(err, errInterrupted) {
			return nil, err
		}
		if err != nil {
			return nil, &exitError{code: ExitIncomplete, err: fmt.Errorf("cannot read robots.txt from stdin: %w", err)}
		}
		return &robotsSource{Name: "stdin", Robots: parse.ParseRobots(data)}, nil
	case robotsIsURL(src):
		return fetchRobots(ctx, env, src, policy)
	}
	f, err := openInput(ctx, src)
	if errors.Is(err, errInterrupted) {
		return nil, err
	}
	if err != nil {
		return nil, robotsFileError(src, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return nil, &exitError{code: ExitUsage, err: withHint(
			fmt.Errorf("cannot read robots.txt %s: it is a directory", src),
			"give the robots.txt file itself, - for stdin, or an http(s):// URL")}
	}
	data, err := readAllContext(ctx, f, parse.RobotsMaxBytes+1)
	if errors.Is(err, errInterrupted) {
		return nil, err
	}
	if err != nil {
		return nil, &exitError{code: ExitIncomplete, err: fmt.Errorf("cannot read robots.txt %s whole: %w", src, err)}
	}
	return &robotsSource{Name: src, File: src, Robots: parse.ParseRobots(data)}, nil
}

func robotsFileError(src string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	hint := "check the path; ROBOTS is a file, - for stdin, or an http(s):// URL"
	if errors.Is(err, fs.ErrPermission) {
		hint = "check the file's permissions, or pipe it in with - for stdin"
	}
	return &exitError{code: ExitUsage, err: withHint(fmt.Errorf("cannot read robots.txt %s: %w", src, err), hint)}
}

// fetchRobots fetches a robots.txt URL and applies RFC 9309 §2.3.1 to the
// answer, or policy when it cannot be fetched now.
func fetchRobots(ctx context.Context, env *Env, src string, policy robotsFetchPolicy) (*robotsSource, error) {
	u, err := url.Parse(src)
	if err != nil || u.Host == "" {
		return nil, usageError("robots.txt URL %q is not a valid http(s) URL", src)
	}
	var client http.Client
	if env.HTTPClient != nil {
		client = *env.HTTPClient
	}
	if client.Timeout == 0 || client.Timeout > robotsFetchTimeout {
		client.Timeout = robotsFetchTimeout
	}
	client.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if len(via) > robotsMaxRedirects {
			return errRobotsTooManyRedirects
		}
		return nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, usageError("robots.txt URL %q: %v", src, err)
	}
	req.Header.Set("User-Agent", "lohibot-audit/"+Version)
	req.Header.Set("Accept", "text/plain, */*;q=0.5")

	unavailable := func(what string) (*robotsSource, error) {
		switch policy {
		case robotsFetchRFC:
			note := fmt.Sprintf("%s %s: RFC 9309 §2.3.1.4 says disallow all", src, what)
			return &robotsSource{Name: src, Robots: parse.RobotsDisallowAll(note), Note: note}, nil
		case robotsFetchSkip:
			return &robotsSource{Name: src, Unavailable: what}, nil
		}
		return nil, &exitError{code: ExitIncomplete, err: withHint(
			fmt.Errorf("could not check: robots.txt %s %s", src, what),
			"a gate checks the file, not the network: try again, or give --on-fetch-error rfc to read it as RFC 9309 does (5xx and unreachable mean disallow all)")}
	}
	allow := func(what string) *robotsSource {
		note := fmt.Sprintf("%s %s: RFC 9309 §2.3.1.3 says allow all", src, what)
		return &robotsSource{Name: src, Robots: parse.RobotsAllowAll(note), Note: note}
	}

	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, &exitError{code: ExitIncomplete, err: fmt.Errorf("fetching robots.txt %s: %w", src, ctx.Err())}
		}
		if errors.Is(err, errRobotsTooManyRedirects) {
			note := fmt.Sprintf("%s redirected more than %d times: RFC 9309 §2.3.1.2 lets a crawler treat it as unavailable, so allow all", src, robotsMaxRedirects)
			return &robotsSource{Name: src, Robots: parse.RobotsAllowAll(note), Note: note}, nil
		}
		return unavailable("could not be fetched (" + robotsNetError(err) + ")")
	}
	defer resp.Body.Close()
	code := resp.StatusCode
	switch {
	case code >= 200 && code <= 299:
		data, err := io.ReadAll(io.LimitReader(resp.Body, parse.RobotsMaxBytes+1))
		if err != nil {
			if ctx.Err() != nil {
				return nil, &exitError{code: ExitIncomplete, err: fmt.Errorf("fetching robots.txt %s: %w", src, ctx.Err())}
			}
			return unavailable(fmt.Sprintf("answered %d but the body could not be read (%s)", code, robotsNetError(err)))
		}
		return &robotsSource{Name: src, Robots: parse.ParseRobots(data)}, nil
	case code >= 400 && code <= 499:
		return allow(fmt.Sprintf("answered %d", code)), nil
	case code >= 500 && code <= 599:
		return unavailable(fmt.Sprintf("answered %d", code))
	case code >= 300 && code <= 399:
		// A redirect that could not be followed (no Location, 304 and the
		// like): the file was not reached, as after too many redirects.
		note := fmt.Sprintf("%s answered %d without a usable redirect: RFC 9309 §2.3.1.2 lets a crawler treat it as unavailable, so allow all", src, code)
		return &robotsSource{Name: src, Robots: parse.RobotsAllowAll(note), Note: note}, nil
	}
	// 1xx and codes past 599: no answer a crawler could use.
	return unavailable(fmt.Sprintf("answered %d", code))
}

// robotsNetError shortens a client error to its cause: the URL is already
// in the message around it.
func robotsNetError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "timed out"
	}
	return err.Error()
}

// robotsSet is the robots.txt of each site for logs --robots: one for
// every site, one per named site, or both (a named site's own wins).
// A nil *robotsSet has none.
type robotsSet struct {
	all    *robotsSource
	bySite map[string]*robotsSource
}

// loadRobotsSet resolves the --robots values. A value is FILE or URL for
// every site, or SITE=FILE|URL for one site. A value that starts with
// http:// or https:// is always a URL; otherwise text before the first
// "=" is a site when it is not empty and has no "/" (write ./a=b.txt for a
// file whose name has "=" in it). Each distinct source is loaded once.
// A URL that cannot be fetched now leaves the robots check of its sites
// out (see Warnings). Giving two sources for every site, or two for one
// site, is a usage error.
func loadRobotsSet(ctx context.Context, env *Env, values []string) (*robotsSet, error) {
	s := &robotsSet{bySite: map[string]*robotsSource{}}
	loaded := map[string]*robotsSource{}
	load := func(src string) (*robotsSource, error) {
		if rs, ok := loaded[src]; ok {
			return rs, nil
		}
		rs, err := loadRobots(ctx, env, src, robotsFetchSkip)
		if err != nil {
			return nil, err
		}
		loaded[src] = rs
		return rs, nil
	}
	for _, v := range values {
		site, src := robotsSplitValue(v)
		if src == "" {
			return nil, usageError("--robots %q names no robots.txt: use FILE, URL or SITE=FILE|URL", v)
		}
		if site == "" {
			if s.all != nil {
				return nil, usageError("--robots given twice for every site (%s and %s): use SITE=FILE|URL for per-site files", s.all.Name, src)
			}
			rs, err := load(src)
			if err != nil {
				return nil, err
			}
			s.all = rs
			continue
		}
		if prev, ok := s.bySite[site]; ok {
			return nil, usageError("--robots given twice for site %s (%s and %s)", site, prev.Name, src)
		}
		rs, err := load(src)
		if err != nil {
			return nil, err
		}
		s.bySite[site] = rs
	}
	return s, nil
}

// robotsSplitValue splits a --robots value into its site ("" for every
// site) and source.
func robotsSplitValue(v string) (site, src string) {
	if robotsIsURL(v) {
		return "", v
	}
	i := strings.IndexByte(v, '=')
	if i <= 0 || strings.ContainsRune(v[:i], '/') {
		return "", v
	}
	return robotsSiteName(v[:i]), v[i+1:]
}

// robotsSiteName puts a site name in the form log records use: lower case,
// without a port or a final dot.
func robotsSiteName(s string) string { return parse.NormalizeSite(s) }

// For returns the robots.txt that applies to site (a log record's site:
// lower case, no port), or nil when none does or it could not be fetched:
// the robots check is then skipped for the site.
func (s *robotsSet) For(site string) *parse.Robots {
	if rs := s.Source(site); rs != nil {
		return rs.Robots
	}
	return nil
}

// Source is like For but returns where the robots.txt came from and its
// note, or nil.
func (s *robotsSet) Source(site string) *robotsSource {
	if s == nil {
		return nil
	}
	if rs, ok := s.bySite[robotsSiteName(site)]; ok {
		return rs
	}
	return s.all
}

// Warnings returns, once per source and sorted by source, what the loaded
// robots.txt files call for: the allow-all or disallow-all notes and the
// parser's warnings, each prefixed with the source. Text from robots.txt
// is not escaped: printing goes through sanitize.
func (s *robotsSet) Warnings() []string {
	if s == nil {
		return nil
	}
	seen := map[*robotsSource]bool{}
	var srcs []*robotsSource
	add := func(rs *robotsSource) {
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
		if rs.Note != "" {
			out = append(out, rs.Note)
		}
		for _, w := range rs.Robots.Warnings() {
			out = append(out, "robots.txt "+rs.Name+": "+w)
		}
	}
	return out
}

// sitesOf says which sites take their robots.txt from rs: "every site",
// "every site but a, b", "site a" or "sites a, b".
func (s *robotsSet) sitesOf(rs *robotsSource) string {
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

// UnknownSiteWarnings says which --robots SITE=… values name a site that
// none of sites (the sites the audit found) is: a typo, or logs of
// another site.
func (s *robotsSet) UnknownSiteWarnings(sites []string) []string {
	if s == nil {
		return nil
	}
	known := map[string]bool{}
	for _, x := range sites {
		known[x] = true
	}
	names := make([]string, 0, len(s.bySite))
	for site := range s.bySite {
		if !known[site] {
			names = append(names, site)
		}
	}
	sort.Strings(names)
	found := "none"
	if len(sites) > 0 {
		found = strings.Join(sites, ", ")
	}
	var out []string
	for _, site := range names {
		out = append(out, fmt.Sprintf("--robots %s=%s names a site that no log read has (sites found: %s); check the site name", site, s.bySite[site].Name, found))
	}
	return out
}
