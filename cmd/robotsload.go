package cmd

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strings"

	"github.com/lohisoft/lohibot-audit/internal/urlarg"
	"github.com/lohisoft/lohibot-audit/robots"
)

// parseOnFetchError reads --on-fetch-error.
func parseOnFetchError(v string) (robots.OnFetchError, error) {
	switch v {
	case "fail":
		return robots.FetchFail, nil
	case "rfc":
		return robots.FetchRFC, nil
	}
	return 0, usageError("unknown --on-fetch-error %q: use fail (exit 3, could not check) or rfc (RFC 9309: disallow all)", v)
}

// loadRobots reads robots.txt from a file, "-" (env.Stdin) or an http(s)
// URL fetched as robots.Fetcher does, with onError for a URL that cannot be
// fetched now. An unusable argument or an unreadable file is an error
// (exit 2), a read cut short or a URL that could not be checked too (exit
// 3).
func loadRobots(ctx context.Context, env *Env, src string, onError robots.OnFetchError) (*robots.Source, error) {
	switch {
	case src == "":
		return nil, usageError("robots.txt source is empty: give a file, - for stdin, or an http(s):// URL")
	case src == "-":
		data, err := readAllContext(ctx, env.Stdin, robots.MaxBytes+1)
		if errors.Is(err, errInterrupted) {
			return nil, err
		}
		if err != nil {
			return nil, &exitError{code: ExitIncomplete, err: fmt.Errorf("cannot read robots.txt from stdin: %w", err)}
		}
		return robots.ParseSource("stdin", "", data), nil
	case strings.HasPrefix(src, robots.GitPrefix):
		repo, path, ok := robots.SplitGit(src)
		if !ok {
			return nil, &exitError{code: ExitUsage, err: withHint(fmt.Errorf("robots.txt %q: not git:REPO:PATH", src),
				"give the repository and the path of robots.txt in it: git:/srv/www/site:public/robots.txt")}
		}
		h, err := robots.LoadGit(ctx, repo, path)
		if ctx.Err() != nil {
			return nil, errInterrupted
		}
		if err != nil {
			return nil, &exitError{code: ExitUsage, err: withHint(err,
				"REPO is a git repository (its HEAD's first-parent commits that changed PATH are the versions)")}
		}
		return robots.HistorySource(h), nil
	case urlarg.IsURL(src):
		if err := urlarg.Check(src, "http", "https"); err != nil {
			return nil, &exitError{code: ExitUsage, err: withHint(fmt.Errorf("robots.txt %q: %w", src, err),
				"give the robots.txt URL with http:// or https://, or download it and give the file")}
		}
		return fetchRobots(ctx, env, src, onError)
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
		h, err := robots.LoadDir(src)
		if err != nil {
			return nil, &exitError{code: ExitUsage, err: withHint(fmt.Errorf("%s is a directory, read as dated versions: %w", src, err),
				"give the robots.txt file itself, or a directory of versions each named by the time it came into force: 2026-11-20.txt, 2026-11-20T14:05:00Z.txt")}
		}
		return robots.HistorySource(h), nil
	}
	data, err := readAllContext(ctx, f, robots.MaxBytes+1)
	if errors.Is(err, errInterrupted) {
		return nil, err
	}
	if err != nil {
		return nil, &exitError{code: ExitIncomplete, err: fmt.Errorf("cannot read robots.txt %s whole: %w", src, err)}
	}
	return robots.ParseSource(src, src, data), nil
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

// fetchRobots fetches a robots.txt URL with env's HTTP client and maps the
// library's errors to exit codes.
func fetchRobots(ctx context.Context, env *Env, src string, onError robots.OnFetchError) (*robots.Source, error) {
	f := robots.Fetcher{Client: env.HTTPClient, UserAgent: "lohibot-audit/" + Version, OnError: onError}
	rs, err := f.Fetch(ctx, src)
	var ue *robots.UnavailableError
	switch {
	case err == nil:
		return rs, nil
	case errors.Is(err, robots.ErrBadURL):
		return nil, usageError("%v", err)
	case errors.As(err, &ue):
		return nil, &exitError{code: ExitIncomplete, err: withHint(
			fmt.Errorf("could not check: %w", err),
			"a gate checks the file, not the network: try again, or give --on-fetch-error rfc to read it as RFC 9309 does (5xx and unreachable mean disallow all)")}
	}
	return nil, &exitError{code: ExitIncomplete, err: err}
}

// loadRobotsSet resolves the --robots values (see robots.SplitValue),
// loading each distinct source once. A URL that cannot be fetched now
// leaves the robots check of its sites out (see robots.Set.Warnings).
// Giving two sources for every site, or two for one site, is a usage
// error.
func loadRobotsSet(ctx context.Context, env *Env, values []string) (*robots.Set, error) {
	return robotsSetOf(values, func(src string) (*robots.Source, error) {
		return loadRobots(ctx, env, src, robots.FetchSkip)
	})
}

// checkRobotsValues says what is wrong with the --robots values, as
// loadRobotsSet would, without reading or fetching anything.
func checkRobotsValues(values []string) error {
	_, err := robotsSetOf(values, func(src string) (*robots.Source, error) {
		return &robots.Source{Name: src}, nil
	})
	return err
}

// robotsSetOf builds the set of --robots values with load, and words its
// errors for the command line.
func robotsSetOf(values []string, load func(src string) (*robots.Source, error)) (*robots.Set, error) {
	s, err := robots.LoadSet(values, load)
	var dup *robots.DuplicateError
	var empty *robots.EmptySourceError
	switch {
	case errors.As(err, &dup) && dup.Site == "":
		return nil, usageError("--robots given twice for every site (%s and %s): use SITE=FILE|URL for per-site files", dup.First, dup.Second)
	case errors.As(err, &dup):
		return nil, usageError("--robots given twice for site %s (%s and %s)", dup.Site, dup.First, dup.Second)
	case errors.As(err, &empty):
		return nil, usageError("--robots %q names no robots.txt: use FILE, URL or SITE=FILE|URL", empty.Value)
	}
	return s, err
}

// robotsUnknownSiteWarnings says which --robots SITE=… values name a site
// that none of sites (the sites the audit found) is: a typo, or logs of
// another site.
// robotsSetWarnings gives the audit the robots.txt set with the warnings
// about sites that no log has, worded for the command line.
type robotsSetWarnings struct{ *robots.Set }

func (s robotsSetWarnings) UnknownSiteWarnings(sites []string) []string {
	return robotsUnknownSiteWarnings(s.Set, sites)
}

func robotsUnknownSiteWarnings(s *robots.Set, sites []string) []string {
	found := "none"
	if len(sites) > 0 {
		found = strings.Join(sites, ", ")
	}
	var out []string
	for _, site := range s.UnknownSites(sites) {
		out = append(out, fmt.Sprintf("--robots %s=%s names a site that no log read has (sites found: %s); check the site name", site, s.Source(site).Name, found))
	}
	return out
}
