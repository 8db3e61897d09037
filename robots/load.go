package robots

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"strings"

	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/internal/logfiles"
	"github.com/lohisoft/lohibot-audit/internal/urlarg"
)

// ParseOnFetchError reads an --on-fetch-error value.
func ParseOnFetchError(v string) (OnFetchError, error) {
	switch v {
	case "fail":
		return FetchFail, nil
	case "rfc":
		return FetchRFC, nil
	}
	return 0, fail.Usagef("unknown --on-fetch-error %q: use fail (exit 3, could not check) or rfc (RFC 9309: disallow all)", v)
}

// Loader reads the robots.txt sources the command line names (ROBOTS,
// --robots): a file, a directory of dated versions, git:REPO:PATH, "-"
// (Stdin) or an http(s) URL fetched with Client as Fetcher does.
type Loader struct {
	Stdin     io.Reader
	Client    *http.Client
	UserAgent string
}

// Load reads src, with onError for a URL that cannot be fetched now. An
// unusable argument or an unreadable file is a usage error; a read cut
// short or a URL that could not be checked leaves the input incomplete
// (internal/fail); a cancelled ctx gives ctx's error.
func (l *Loader) Load(ctx context.Context, src string, onError OnFetchError) (*Source, error) {
	switch {
	case src == "":
		return nil, fail.Usagef("robots.txt source is empty: give a file, - for stdin, or an http(s):// URL")
	case src == "-":
		data, err := logfiles.ReadAll(ctx, l.Stdin, MaxBytes+1)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err != nil {
			return nil, fail.New(fail.Incomplete, fmt.Errorf("cannot read robots.txt from stdin: %w", err), "")
		}
		return ParseSource("stdin", "", data), nil
	case strings.HasPrefix(src, GitPrefix):
		repo, path, ok := SplitGit(src)
		if !ok {
			return nil, fail.Hinted(fmt.Errorf("robots.txt %q: not git:REPO:PATH", src),
				"give the repository and the path of robots.txt in it: git:/srv/www/site:public/robots.txt")
		}
		h, err := LoadGit(ctx, repo, path)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if err != nil {
			return nil, fail.Hinted(err, "REPO is a git repository (its HEAD's first-parent commits that changed PATH are the versions)")
		}
		return HistorySource(h), nil
	case urlarg.IsURL(src):
		if err := urlarg.Check(src, "http", "https"); err != nil {
			return nil, fail.Hinted(fmt.Errorf("robots.txt %q: %w", src, err),
				"give the robots.txt URL with http:// or https://, or download it and give the file")
		}
		return l.fetch(ctx, src, onError)
	}
	f, err := logfiles.Open(ctx, src)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, fileError(src, err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		h, err := LoadDir(src)
		if err != nil {
			return nil, fail.Hinted(fmt.Errorf("%s is a directory, read as dated versions: %w", src, err),
				"give the robots.txt file itself, or a directory of versions each named by the time it came into force: 2026-11-20.txt, 2026-11-20T14:05:00Z.txt")
		}
		return HistorySource(h), nil
	}
	data, err := logfiles.ReadAll(ctx, f, MaxBytes+1)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, fail.New(fail.Incomplete, fmt.Errorf("cannot read robots.txt %s whole: %w", src, err), "")
	}
	return ParseSource(src, src, data), nil
}

func fileError(src string, err error) error {
	err = fail.PathCause(err)
	hint := "check the path; ROBOTS is a file, - for stdin, or an http(s):// URL"
	if errors.Is(err, fs.ErrPermission) {
		hint = "check the file's permissions, or pipe it in with - for stdin"
	}
	return fail.Hinted(fmt.Errorf("cannot read robots.txt %s: %w", src, err), hint)
}

// fetch fetches a robots.txt URL and says what its errors mean for the
// run.
func (l *Loader) fetch(ctx context.Context, src string, onError OnFetchError) (*Source, error) {
	f := Fetcher{Client: l.Client, UserAgent: l.UserAgent, OnError: onError}
	rs, err := f.Fetch(ctx, src)
	var ue *UnavailableError
	switch {
	case err == nil:
		return rs, nil
	case errors.Is(err, ErrBadURL):
		return nil, fail.Usagef("%v", err)
	case errors.As(err, &ue):
		return nil, fail.New(fail.Incomplete, fmt.Errorf("could not check: %w", err),
			"a gate checks the file, not the network: try again, or give --on-fetch-error rfc to read it as RFC 9309 does (5xx and unreachable mean disallow all)")
	}
	return nil, fail.New(fail.Incomplete, err, "")
}

// LoadSet resolves the --robots values (see SplitValue), loading each
// distinct source once. A URL that cannot be fetched now leaves the
// robots check of its sites out (see Set.Warnings). Giving two sources
// for every site, or two for one site, is a usage error.
func (l *Loader) LoadSet(ctx context.Context, values []string) (*Set, error) {
	return setOf(values, func(src string) (*Source, error) {
		return l.Load(ctx, src, FetchSkip)
	})
}

// CheckValues says what is wrong with the --robots values, as LoadSet
// would, without reading or fetching anything.
func CheckValues(values []string) error {
	_, err := setOf(values, func(src string) (*Source, error) {
		return &Source{Name: src}, nil
	})
	return err
}

// CheckOffline says which --robots value names a URL, for a run that
// fetches nothing (--offline): it can read robots.txt only from files.
func CheckOffline(values []string) error {
	for _, v := range values {
		if _, src := SplitValue(v); urlarg.IsURL(src) {
			return fail.Usagef("--offline forbids fetching --robots URL %s; give a file", src)
		}
	}
	return nil
}

// setOf builds the set of --robots values with load, and words its errors
// for the command line.
func setOf(values []string, load func(src string) (*Source, error)) (*Set, error) {
	s, err := LoadSet(values, load)
	var dup *DuplicateError
	var empty *EmptySourceError
	switch {
	case errors.As(err, &dup) && dup.Site == "":
		return nil, fail.Usagef("--robots given twice for every site (%s and %s): use SITE=FILE|URL for per-site files", dup.First, dup.Second)
	case errors.As(err, &dup):
		return nil, fail.Usagef("--robots given twice for site %s (%s and %s)", dup.Site, dup.First, dup.Second)
	case errors.As(err, &empty):
		return nil, fail.Usagef("--robots %q names no robots.txt: use FILE, URL or SITE=FILE|URL", empty.Value)
	}
	return s, err
}

// UnknownSiteWarnings says which --robots SITE=… values name a site that
// none of sites (the sites the audit found) is: a typo, or logs of
// another site.
func (s *Set) UnknownSiteWarnings(sites []string) []string {
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
