package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/internal/urlarg"
	"github.com/lohisoft/lohibot-audit/proxy"
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

// newIdentityFor loads the IP lists of profiles (fetching, revalidating and
// caching them as --ip-list, --offline, --cache-dir and --no-cache say;
// env.HTTPClient overrides the HTTP client) and builds their verifiers from
// --resolver (else /etc/resolv.conf), --dns-timeout, --dns-retries and
// --dns-concurrency. Bad flags are a usage error; a list that cannot be had
// is a warning, with the cached or built-in list in force.
func newIdentityFor(ctx context.Context, env *Env, o *auditOptions, profiles []*crawler.Profile) (*verify.Identity, error) {
	if err := identityCheckFlags(o); err != nil {
		return nil, err
	}
	servers, err := identityServers(o.Resolvers)
	if err != nil {
		return nil, err
	}
	override, err := identityListOverride(o, profiles)
	if err != nil {
		return nil, err
	}
	var warnings []string
	dir, warn := identityCacheDir(env, o)
	if warn != "" {
		warnings = append(warnings, warn)
	}
	proxies, pw, err := identityProxies(o, dir)
	if err != nil {
		return nil, err
	}
	warnings = append(warnings, pw...)
	loader := identityLoader(env, o, dir, verify.ListAuto)
	lists := make([]*verify.IPList, len(profiles))
	for i, p := range profiles {
		ll, err := loader.Load(ctx, p, override)
		if err != nil {
			return nil, listFileError(err)
		}
		lists[i] = ll.List
		warnings = append(warnings, ll.Warnings...)
		for _, w := range ll.Repeated {
			if env.repeated == nil {
				env.repeated = map[string]bool{}
			}
			env.repeated[w] = true
		}
	}

	base := &verify.Verifier{
		Timeout:     o.DNSTimeout,
		Retries:     o.DNSRetries,
		Concurrency: o.DNSConcurrency,
		Offline:     o.Offline,
		Proxies:     proxies,
	}
	var quiet []string
	if !o.Offline {
		if len(servers) == 0 {
			servers, err = identitySystemServers()
			if err != nil {
				warnings = append(warnings, fmt.Sprintf("dns: %v; give a server with --resolver HOST:PORT; the ip list decides", err))
				quiet = append(quiet, verify.NoResolverWarning)
			}
		}
		base.Servers = servers
		if dir != "" {
			c, err := verify.OpenDNSCache(dir, env.Now)
			if err != nil {
				warnings = append(warnings, fmt.Sprintf("dns cache: %v", err))
			}
			base.Cache = c
		}
	}
	vid := verify.NewIdentity(base, profiles, lists)
	for _, w := range quiet {
		vid.Quiet(w)
	}
	for _, w := range warnings {
		vid.Warn(w)
	}
	if progressWanted(env, o) {
		vid.Watch = func(src func() verify.Progress) func() {
			return startVerifyProgress(env.Stderr, src).stop
		}
	}
	return vid, nil
}

// identityProxies is the proxies of a run: the CDN edge lists as `ips
// update` cached them in dir (else the built-in snapshot), and what
// --trusted-proxy and --trust-xff trust. A --trusted-proxy value that
// names nothing is a usage error.
func identityProxies(o *auditOptions, dir string) (*proxy.Set, []string, error) {
	edges, warnings := (&proxy.Loader{CacheDir: dir}).Load()
	s, err := proxy.NewSet(edges, o.TrustedProxies, o.TrustXFF)
	if err != nil {
		return nil, nil, usageError("%v", err)
	}
	return s, warnings, nil
}

// identityListOverride is the --ip-list value that replaces the profiles'
// own lists: "" for the default (each profile's lists), the value when one
// crawler is audited; with several, a usage error.
func identityListOverride(o *auditOptions, profiles []*crawler.Profile) (string, error) {
	v := strings.TrimSpace(o.IPList)
	if v == DefaultIPListURL {
		return "", nil
	}
	if len(profiles) > 1 {
		return "", &exitError{code: ExitUsage, err: withHint(
			fmt.Errorf("--ip-list %s with %d crawlers: it would stand for every crawler's list", v, len(profiles)),
			"give one --crawler with --ip-list, or name the lists in a profile file (ip_lists)")}
	}
	return v, nil
}

// identityLoader is the IP list loader the flags ask for.
func identityLoader(env *Env, o *auditOptions, dir string, mode verify.ListMode) *verify.ListLoader {
	return &verify.ListLoader{
		Fetcher:  &verify.IPListFetcher{Client: env.HTTPClient, UserAgent: "lohibot-audit/" + Version},
		CacheDir: dir,
		Now:      env.Now,
		Mode:     mode,
		Offline:  o.Offline,
	}
}

// listFileError maps an IP list file that cannot be read to its exit code.
func listFileError(err error) error {
	var fe *verify.ListFileError
	if !errors.As(err, &fe) {
		return err
	}
	if fe.Partial {
		return &exitError{code: ExitIncomplete, err: fmt.Errorf("cannot read --ip-list %s whole: %w", fe.Path, fe.Err)}
	}
	if fe.Err.Error() == "it is a directory" {
		return usageError("cannot read --ip-list %s: it is a directory", fe.Path)
	}
	return &exitError{code: ExitUsage, err: withHint(
		fmt.Errorf("cannot read --ip-list %s: %w", fe.Path, fe.Err),
		"give a file, or an https:// URL")}
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
	if err := urlarg.Check(o.IPList, "https"); err != nil {
		return &exitError{code: ExitUsage, err: withHint(
			fmt.Errorf("--ip-list %q: %w", o.IPList, err),
			"the list is fetched over https only: give its https:// URL, or download it and give the file")}
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
func ipListIsURL(s string) bool { return urlarg.IsURL(s) }

// The IP list modes, as the commands name them.
const (
	ipListAuto     = verify.ListAuto
	ipListNoFetch  = verify.ListNoFetch
	ipListFetchNow = verify.ListFetchNow
)

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
