package cmd

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/verify"
	"github.com/miekg/dns"
)

// identityResolvConf is where the system's resolvers are read from when no
// --resolver is given.
var identityResolvConf = "/etc/resolv.conf"

// identityMaxConcurrency is the most addresses --dns-concurrency lets be
// verified at once: more would flood the resolver (and each needs a
// socket).
const identityMaxConcurrency = 1024

// identityListFresh is how long a fetched IP list is used without asking
// the server again; `ips update` asks at once.
const identityListFresh = 6 * time.Hour

// identity is the IP list in force and a verifier built from the shared
// flags.
type identity struct {
	List     *verify.IPList
	Verifier *verify.Verifier
	// Warnings are for the user: a list rejected or not fetched, an
	// unreachable resolver, a cache that could not be used.
	Warnings []string
	cache    *verify.DNSCache
	// quiet holds verifier warnings already said better here.
	quiet map[string]bool
	// progress, when not nil, is where the verification's progress line
	// goes (stderr on a terminal).
	progress io.Writer
}

// newIdentity loads the IP list (fetching, revalidating and caching it as
// --ip-list, --offline, --cache-dir and --no-cache say; env.HTTPClient
// overrides the HTTP client) and builds the verifier from --resolver (else
// /etc/resolv.conf), --dns-timeout, --dns-retries and --dns-concurrency.
// Bad flags are a usage error; a list that cannot be had is a warning, with
// the cached or built-in list in force.
func newIdentity(ctx context.Context, env *Env, o *auditOptions) (*identity, error) {
	if err := identityCheckFlags(o); err != nil {
		return nil, err
	}
	servers, err := identityServers(o.Resolvers)
	if err != nil {
		return nil, err
	}
	id := &identity{quiet: map[string]bool{}}
	if progressWanted(env, o) {
		id.progress = env.Stderr
	}
	dir, warn := identityCacheDir(env, o)
	if warn != "" {
		id.Warnings = append(id.Warnings, warn)
	}
	mode := ipListAuto
	if o.Offline {
		mode = ipListNoFetch
	}
	ll, err := loadIPList(ctx, env, o, dir, mode)
	if err != nil {
		return nil, err
	}
	id.List = ll.List
	id.Warnings = append(id.Warnings, ll.Warnings...)

	v := &verify.Verifier{
		Timeout:     o.DNSTimeout,
		Retries:     o.DNSRetries,
		Concurrency: o.DNSConcurrency,
		Offline:     o.Offline,
		List:        id.List,
	}
	if !o.Offline {
		if len(servers) == 0 {
			servers, err = identitySystemServers()
			if err != nil {
				id.Warnings = append(id.Warnings, fmt.Sprintf("dns: %v; give a server with --resolver HOST:PORT; the ip list decides", err))
				id.quiet[verify.NoResolverWarning] = true
			}
		}
		v.Servers = servers
		if dir != "" {
			c, err := verify.OpenDNSCache(dir, env.Now)
			if err != nil {
				id.Warnings = append(id.Warnings, fmt.Sprintf("dns cache: %v", err))
			}
			v.Cache = c
			id.cache = c
		}
	}
	id.Verifier = v
	return id, nil
}

// classify verifies addrs and returns each one's result, keyed by the
// address as given (and by its unmapped form), with a progress line on a
// terminal. The verifier's run-level warnings, and what kept addresses
// unverified, are added to id.Warnings, and the DNS cache is saved.
func (id *identity) classify(ctx context.Context, addrs []netip.Addr) map[netip.Addr]verify.Result {
	prog := startVerifyProgress(id.progress, id.Verifier.Progress)
	results := id.Verifier.Verify(ctx, addrs)
	prog.stop()
	out := make(map[netip.Addr]verify.Result, len(addrs))
	for i, a := range addrs {
		out[a] = results[i]
		out[results[i].Addr] = results[i]
	}
	warnings := id.Verifier.Warnings()
	if w := unverifiedWarning(out); w != "" {
		warnings = append(warnings, w)
	}
	if n := id.Verifier.IgnoredAnswers(); n > 0 {
		warnings = append(warnings, fmt.Sprintf("dns: %d packets that did not answer their query (another id or question) were ignored: forged answers racing the resolver's, or a broken resolver", n))
	}
	for _, w := range warnings {
		if !id.quiet[w] && !slices.Contains(id.Warnings, w) {
			id.Warnings = append(id.Warnings, w)
		}
	}
	if err := id.cache.Save(); err != nil {
		w := fmt.Sprintf("dns cache: %v; answers were not kept for the next run", err)
		if !slices.Contains(id.Warnings, w) {
			id.Warnings = append(id.Warnings, w)
		}
	}
	return out
}

// identityCheckFlags rejects flag values that make no sense.
func identityCheckFlags(o *auditOptions) error {
	if o.DNSTimeout <= 0 || o.DNSTimeout > time.Minute {
		return usageError("--dns-timeout %s: give a duration above 0 and at most 1m, such as 2s", o.DNSTimeout)
	}
	if o.DNSRetries < 0 || o.DNSRetries > 10 {
		return usageError("--dns-retries %d: give a number from 0 to 10", o.DNSRetries)
	}
	if o.DNSConcurrency < 1 || o.DNSConcurrency > identityMaxConcurrency {
		return usageError("--dns-concurrency %d: give a number from 1 to %d, such as %d", o.DNSConcurrency, identityMaxConcurrency, verify.DefaultDNSConcurrency)
	}
	if strings.TrimSpace(o.IPList) == "" {
		return usageError("--ip-list is empty: give an https:// URL or a file")
	}
	if ipListIsURL(o.IPList) && !strings.HasPrefix(strings.ToLower(o.IPList), "https://") {
		return &exitError{code: ExitUsage, err: withHint(
			fmt.Errorf("--ip-list %q: the list is fetched over https only", o.IPList),
			"use an https:// URL, or download the list and give the file")}
	}
	return nil
}

// identityServers checks --resolver values: an IP address with a port
// (IPv6 in brackets), or a bare IP address for port 53.
func identityServers(values []string) ([]string, error) {
	var out []string
	for _, v := range values {
		host, port, err := net.SplitHostPort(v)
		if err != nil {
			host, port = strings.Trim(v, "[]"), "53"
		}
		a, aerr := netip.ParseAddr(host)
		p, perr := strconv.ParseUint(port, 10, 16)
		if aerr != nil || perr != nil || p == 0 {
			return nil, &exitError{code: ExitUsage, err: withHint(
				fmt.Errorf("--resolver %q is not an IP address and port", v),
				"give HOST:PORT with HOST an IP address, such as 127.0.0.1:53 or [::1]:53")}
		}
		out = append(out, net.JoinHostPort(a.String(), strconv.FormatUint(p, 10)))
	}
	return out, nil
}

// identitySystemServers reads the nameservers of /etc/resolv.conf.
func identitySystemServers() ([]string, error) {
	conf, err := dns.ClientConfigFromFile(identityResolvConf)
	if err != nil {
		return nil, fmt.Errorf("cannot read %s: %w", identityResolvConf, unwrapPathError(err))
	}
	var out []string
	for _, s := range conf.Servers {
		if a, err := netip.ParseAddr(s); err == nil {
			out = append(out, net.JoinHostPort(a.String(), conf.Port))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no nameserver in %s", identityResolvConf)
	}
	return out, nil
}

// identityCacheDir is --cache-dir, else $XDG_CACHE_HOME/lohibot-audit,
// else $HOME/.cache/lohibot-audit; "" with --no-cache, or with a warning
// when there is no place for it.
func identityCacheDir(env *Env, o *auditOptions) (dir, warning string) {
	switch {
	case o.NoCache:
		return "", ""
	case o.CacheDir != "":
		return o.CacheDir, ""
	}
	if x := env.Getenv("XDG_CACHE_HOME"); filepath.IsAbs(x) {
		return filepath.Join(x, "lohibot-audit"), ""
	}
	if h := env.Getenv("HOME"); filepath.IsAbs(h) {
		return filepath.Join(h, ".cache", "lohibot-audit"), ""
	}
	return "", "cache: neither $XDG_CACHE_HOME nor $HOME is set; nothing is cached between runs (set --cache-dir)"
}

// ipListIsURL reports whether an --ip-list value names a URL rather than a
// file.
func ipListIsURL(s string) bool {
	return strings.Contains(s, "://")
}

// ipListMode says whether loadIPList may use the network.
type ipListMode int

const (
	ipListAuto     ipListMode = iota // fetch when the cached copy is stale
	ipListNoFetch                    // cache or built-in only
	ipListFetchNow                   // fetch (revalidate) now
)

// ipListLoad is the list in force and how it came to be.
type ipListLoad struct {
	List     *verify.IPList
	Warnings []string
	// Status is the HTTP status of a fetch made now (200 or 304), else 0.
	Status int
	// FetchErr is why a fetch made now failed or its list was rejected;
	// FetchWarning is the warning about it (also in Warnings).
	FetchErr     error
	FetchWarning string
	// Cached says the list came from the cache directory.
	Cached bool
	// Saved says a fetched list was written to the cache directory.
	Saved bool
	// Stale says a cached list is older than identityListFresh.
	Stale bool
}

// loadIPList gets the list named by --ip-list: a file, or a URL fetched (as
// mode allows) and kept in dir (none when dir is ""). A list that cannot
// be had or is rejected leaves the cached copy, else the built-in list, in
// force, with a warning. Only an unreadable file is an error.
func loadIPList(ctx context.Context, env *Env, o *auditOptions, dir string, mode ipListMode) (*ipListLoad, error) {
	src := strings.TrimSpace(o.IPList)
	out := &ipListLoad{}
	now := env.Now()
	if !ipListIsURL(src) {
		data, err := ipListReadFile(src)
		if err != nil {
			return nil, err
		}
		l, err := verify.ParseIPList(data)
		if err == nil {
			l.Source = src
			out.List = l
			return out, nil
		}
		fallback, what := ipListFallback(dir, DefaultIPListURL)
		out.List, out.Cached = fallback, what != "the built-in list"
		out.FetchErr = fmt.Errorf("ip list %s: %w", src, err)
		out.FetchWarning = fmt.Sprintf("%v; rejected whole, %s stays in force", out.FetchErr, what)
		out.Warnings = append(out.Warnings, out.FetchWarning)
		return out, nil
	}

	var cached *verify.IPListCacheEntry
	if dir != "" {
		e, err := verify.LoadCachedIPList(dir, src)
		switch {
		case err == nil:
			cached = e
		case !errors.Is(err, fs.ErrNotExist):
			out.Warnings = append(out.Warnings, fmt.Sprintf("ip list cache: %v", err))
		}
	}
	useCached := func() {
		l, _ := cached.List()
		out.List, out.Cached = l, true
		out.Stale = now.Sub(cached.Fetched) > identityListFresh
	}
	switch {
	case mode == ipListNoFetch && cached != nil:
		useCached()
		return out, nil
	case mode == ipListNoFetch:
		out.List = verify.BuiltinIPList()
		if o.Offline {
			out.Warnings = append(out.Warnings, fmt.Sprintf("ip list: offline and no cached copy of %s; the built-in list (%s) decides", src, out.List))
		}
		return out, nil
	case mode == ipListAuto && cached != nil && now.Sub(cached.Fetched) >= 0 && now.Sub(cached.Fetched) < identityListFresh:
		useCached()
		return out, nil
	}

	f := &verify.IPListFetcher{Client: env.HTTPClient, UserAgent: "lohibot-audit/" + Version}
	var etag, lastMod string
	if cached != nil {
		etag, lastMod = cached.ETag, cached.LastModified
	}
	got, err := f.Fetch(ctx, src, etag, lastMod, now)
	if err == nil && got.NotModified && cached == nil {
		err = fmt.Errorf("ip list %s: the server answered 304 Not Modified to an unconditional request", src)
	}
	if err != nil {
		out.FetchErr = err
		what := "the built-in list"
		if cached != nil {
			useCached()
			what = fmt.Sprintf("the cached list of %s", cached.Fetched.UTC().Format(time.RFC3339))
		} else {
			out.List = verify.BuiltinIPList()
		}
		verb := "cannot fetch"
		if errors.Is(err, verify.ErrIPListInvalid) || errors.Is(err, verify.ErrIPListEmpty) || errors.Is(err, verify.ErrIPListTooLarge) {
			verb = "rejected whole"
		}
		out.FetchWarning = fmt.Sprintf("%v (%s); %s stays in force", err, verb, what)
		out.Warnings = append(out.Warnings, out.FetchWarning)
		return out, nil
	}
	out.Status = got.Status
	entry := cached
	if got.NotModified {
		entry.Fetched = now
		if got.ETag != "" {
			entry.ETag = got.ETag
		}
		if got.LastModified != "" {
			entry.LastModified = got.LastModified
		}
		useCached()
	} else {
		entry = &verify.IPListCacheEntry{Source: src, ETag: got.ETag, LastModified: got.LastModified, Fetched: now, Body: got.Body}
		out.List = got.List
	}
	if dir != "" {
		if err := verify.SaveCachedIPList(dir, entry); err != nil {
			out.Warnings = append(out.Warnings, fmt.Sprintf("ip list cache: %v", err))
		} else {
			out.Saved = true
		}
	}
	return out, nil
}

// ipListFallback is the list in force when the one asked for is rejected:
// the cached copy of source, else the built-in list; what names it.
func ipListFallback(dir, source string) (*verify.IPList, string) {
	if dir != "" {
		if e, err := verify.LoadCachedIPList(dir, source); err == nil {
			if l, err := e.List(); err == nil {
				return l, fmt.Sprintf("the cached list of %s", e.Fetched.UTC().Format(time.RFC3339))
			}
		}
	}
	return verify.BuiltinIPList(), "the built-in list"
}

// ipListReadFile reads an --ip-list file of at most verify.IPListMaxBytes
// (a larger one is read in part and then rejected by the parser).
func ipListReadFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &exitError{code: ExitUsage, err: withHint(
			fmt.Errorf("cannot read --ip-list %s: %w", path, unwrapPathError(err)),
			"give a file, or an https:// URL")}
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return nil, usageError("cannot read --ip-list %s: it is a directory", path)
	}
	data, err := io.ReadAll(io.LimitReader(f, verify.IPListMaxBytes+1))
	if err != nil {
		return nil, &exitError{code: ExitIncomplete, err: fmt.Errorf("cannot read --ip-list %s whole: %w", path, err)}
	}
	return data, nil
}

// unverifiedWarning says how many addresses stayed unverified because DNS
// could not answer, and why, or "" when none did, or when the only reason
// is that there was no resolver to ask (a warning of its own says that).
func unverifiedWarning(results map[netip.Addr]verify.Result) string {
	kinds := map[string]int{}
	seen := map[netip.Addr]bool{}
	n := 0
	for _, r := range results {
		if seen[r.Addr] || r.Verdict != verify.Unverified || r.Reason != verify.ReasonDNSError || r.DNSFailure == verify.DNSFailureCanceled {
			continue
		}
		seen[r.Addr] = true
		kind := r.DNSFailure
		if kind == "" {
			kind = verify.DNSFailureOther
		}
		kinds[kind]++
		n++
	}
	if n == kinds[verify.DNSFailureUnreachable]+kinds[verify.DNSFailureNoResolver] {
		return ""
	}
	names := slices.Collect(maps.Keys(kinds))
	slices.SortFunc(names, func(a, b string) int {
		if c := cmp.Compare(kinds[b], kinds[a]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	var why []string
	for _, k := range names {
		why = append(why, fmt.Sprintf("%s %d", k, kinds[k]))
	}
	noun := "addresses stay"
	if n == 1 {
		noun = "address stays"
	}
	return fmt.Sprintf("dns: %d %s unverified, DNS could not answer for them (%s); nftables rules never block unverified addresses, but the cloudflare and modsecurity block-spoofed rules stop them, since they refuse the token from every address but the genuine ones",
		n, noun, strings.Join(why, ", "))
}

// progressWanted says whether progress lines go to stderr: a terminal,
// not CI, not a dumb terminal, and no --no-progress.
func progressWanted(env *Env, o *auditOptions) bool {
	return env.StderrTTY && !o.NoProgress && env.Getenv("CI") == "" && env.Getenv("TERM") != "dumb"
}

// Progress line timing, as for reading logs: shown after a second, redrawn
// four times a second.
var (
	verifyProgressDelay    = time.Second
	verifyProgressInterval = 250 * time.Millisecond
)

// verifyProgress redraws a status line about the verification of
// addresses: how many are done, how fast, and how long the rest will take.
// The zero value (and nil) shows nothing.
type verifyProgress struct {
	w   io.Writer
	src func() verify.Progress
	// now is when the line starts; tick gives the time of each redraw.
	now    func() time.Time
	tick   <-chan time.Time
	delay  time.Duration
	quit   chan struct{}
	exited chan struct{}
	shown  bool
	// the pass shown (1 or 2, the second try of unverified addresses)
	// and when it began.
	phase int
	start time.Time
}

// startVerifyProgress starts redrawing the progress line on w from src;
// nil w shows nothing.
func startVerifyProgress(w io.Writer, src func() verify.Progress) *verifyProgress {
	if w == nil {
		return nil
	}
	t := time.NewTicker(verifyProgressInterval)
	p := &verifyProgress{w: w, src: src, now: time.Now, tick: t.C, delay: verifyProgressDelay}
	p.run(t.Stop)
	return p
}

// run starts the loop; stopTicker is called when it ends.
func (p *verifyProgress) run(stopTicker func()) {
	p.quit, p.exited = make(chan struct{}), make(chan struct{})
	begun := p.now()
	p.phase, p.start = 1, begun
	go func() {
		defer close(p.exited)
		defer stopTicker()
		for {
			select {
			case <-p.quit:
				return
			case now := <-p.tick:
				line := p.line(p.src(), now)
				if line == "" || now.Sub(begun) < p.delay {
					continue
				}
				fmt.Fprintf(p.w, "\r\x1b[K%s", line)
				p.shown = true
			}
		}
	}()
}

// line is the status for pr at now, "" when there is nothing to show.
func (p *verifyProgress) line(pr verify.Progress, now time.Time) string {
	line := fmt.Sprintf("dns: %d of %d addresses verified", pr.Done, pr.Total)
	done, total := pr.Done, pr.Total
	if pr.RetryTotal > 0 {
		line = fmt.Sprintf("dns: second try with a longer timeout: %d of %d unverified addresses", pr.Retried, pr.RetryTotal)
		done, total = pr.Retried, pr.RetryTotal
		if p.phase == 1 {
			p.phase, p.start = 2, now
		}
	}
	if total == 0 {
		return ""
	}
	el := now.Sub(p.start).Seconds()
	if el <= 0 || done == 0 {
		return line
	}
	rate := float64(done) / el
	line += fmt.Sprintf(", %s/s, %d%%", verifyRate(rate), done*100/total)
	if done < total {
		eta := time.Duration(float64(total-done) / rate * float64(time.Second))
		line += fmt.Sprintf(", %s left", eta.Round(time.Second))
	}
	return line
}

// verifyRate formats addresses per second: whole numbers, one decimal
// below ten.
func verifyRate(r float64) string {
	if r < 10 {
		return strconv.FormatFloat(r, 'f', 1, 64)
	}
	return strconv.FormatFloat(r, 'f', 0, 64)
}

// stop ends the redrawing and clears the line if one was shown.
func (p *verifyProgress) stop() {
	if p == nil || p.quit == nil {
		return
	}
	close(p.quit)
	<-p.exited
	p.quit = nil
	if p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
