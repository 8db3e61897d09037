package cmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/conduct"
	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/lohisoft/lohibot-audit/render"
	"github.com/lohisoft/lohibot-audit/robots"
	"github.com/spf13/cobra"
)

func newLogsCmd(env *Env) *cobra.Command {
	o := &auditOptions{}
	c := &cobra.Command{
		Use:   "logs [FILE...]",
		Short: "Audit access logs: who claimed to be LohiSoftBot, who really was, and how it behaved",
		Long: `Read access logs (plain or gzip, "-" for stdin; several files are read as one
stream), find every request whose User-Agent claims LohiSoftBot, decide for
each address whether it is the genuine crawler, and check the genuine
crawler's conduct. Lines that do not match the log format are counted as
malformed and reported with their file and line number.`,
		Example: `  lohibot-audit logs /var/log/nginx/access.log /var/log/nginx/access.log.*.gz
  lohibot-audit logs --log-format vhost_combined --robots robots.txt --fail-on any access.log
  zcat access.log.*.gz | lohibot-audit logs --site example.com -`,
		Args: cobra.ArbitraryArgs,
		RunE: func(c *cobra.Command, files []string) error {
			if err := loadConfig(env, c, o.Config); err != nil {
				return err
			}
			return runLogs(c.Context(), env, o, files)
		},
	}
	f := c.Flags()
	addFormatFlag(f, o, render.Names())
	addTopFlag(f, o)
	addLogFlags(f, o)
	addIdentityFlags(f, o)
	addConfigFlag(f, o)
	return c
}

func runLogs(ctx context.Context, env *Env, o *auditOptions, files []string) error {
	format, err := o.reportFormat(env)
	if err != nil {
		return err
	}
	if err := refuseTerminal(env, format); err != nil {
		return err
	}
	if _, err := failOnMatch(o.FailOn, 0, 0); err != nil {
		return err
	}
	rep, _, err := runAudit(ctx, env, o, files)
	if err != nil && !errors.Is(err, errIncomplete) {
		return err
	}
	env.phase(phaseWrite)
	werr := format.WriteReport(env.Stdout, rep, reportOptions(env, o))
	if ctx.Err() != nil {
		return errInterrupted
	}
	// The report shows its warnings only in table and markdown on a
	// terminal; everywhere else (a cron job with csv or json) stderr must
	// say them too.
	if !(env.StdoutTTY && (format.Name() == "table" || format.Name() == "markdown")) {
		warnAll(env, rep.Warnings)
	}
	if werr != nil {
		return writeFailed("the report", werr)
	}
	if err != nil {
		return err
	}
	fail, _ := failOnMatch(o.FailOn, rep.Summary.SpoofedHits, rep.Summary.Violations)
	if fail {
		return errFindings
	}
	return nil
}

// warnAll prints each distinct warning once on stderr, in order.
func warnAll(env *Env, warnings []string) {
	said := make(map[string]bool, len(warnings))
	for _, w := range warnings {
		if !said[w] {
			said[w] = true
			warnf(env, "%s", w)
		}
	}
}

// runAudit reads the logs, verifies the claimed addresses and checks the
// genuine crawler's conduct. It returns errIncomplete, with the report of
// everything read, when an input could not be read whole.
func runAudit(ctx context.Context, env *Env, o *auditOptions, files []string) (*audit.Report, *identity, error) {
	logFormat, err := parse.ParseFormatSpec(o.LogFormat)
	if err != nil {
		return nil, nil, &exitError{code: ExitUsage, err: withHint(err, "see 'lohibot-audit logs --help' for the formats")}
	}
	now := env.Now()
	since, until, err := timeWindow(o.Since, o.Until, now)
	if err != nil {
		return nil, nil, err
	}
	if err := checkConductFlags(o); err != nil {
		return nil, nil, err
	}
	if len(files) == 0 {
		if env.StdinTTY() {
			return nil, nil, &exitError{code: ExitUsage, err: withHint(errors.New("no log files given"), "name files, or pipe a log and give '-': zcat access.log.*.gz | lohibot-audit logs -")}
		}
		files = []string{"-"}
	}
	siteRules, sitePlain, err := parseSiteFlags(o.Site)
	if err != nil {
		return nil, nil, err
	}
	if o.Offline {
		for _, v := range o.Robots {
			if _, src := robots.SplitValue(v); robots.IsURL(src) {
				return nil, nil, usageError("--offline forbids fetching --robots URL %s; give a file", src)
			}
		}
	}
	env.phase(phaseRobots)
	robots, err := loadRobotsSet(ctx, env, o.Robots)
	if err != nil {
		return nil, nil, err
	}
	env.phase(phaseIPList)
	id, err := newIdentity(ctx, env, o)
	if err != nil {
		return nil, nil, err
	}
	// A fetch cut short leaves a fallback list in force: read nothing with
	// it.
	if ctx.Err() != nil {
		return nil, nil, errInterrupted
	}
	listed := parse.NewAddrSet(id.List.Prefixes)

	au := &audit.Audit{Since: since, Until: until, Settled: id.Verifier.Settled}
	incomplete := false
	prog := newProgress(env, o)
	defer prog.stop()
	sites := chooseSites(files, siteRules, sitePlain)
	hostLogged := make([]bool, len(files))
	env.phase(phaseRead)
	for i, name := range files {
		if ctx.Err() != nil {
			return nil, nil, errInterrupted
		}
		ok, host := readLog(ctx, env, o, name, sites[i].Site, logFormat, listed, au, prog)
		if !ok {
			incomplete = true
		}
		hostLogged[i] = host
	}
	prog.stop()
	if ctx.Err() != nil {
		return nil, nil, errInterrupted
	}

	for _, w := range unmatchedSiteRules(siteRules, files) {
		au.Warn(w)
	}
	for _, w := range siteWarnings(sites, hostLogged) {
		au.Warn(w)
	}
	for _, w := range robots.Warnings() {
		au.Warn(w)
	}
	env.phase(phaseDNS)
	results := id.classify(ctx, au.Addresses())
	// A cancelled lookup is unverified for want of an answer, not for
	// want of DNS: such results must not be reported as if complete.
	if ctx.Err() != nil {
		return nil, nil, errInterrupted
	}
	for _, w := range id.Warnings {
		au.Warn(w)
	}
	// The conduct checks and the report of a long audit take a while and
	// cannot be stopped midway: an interrupted run leaves them behind.
	rep, err := untilDone(ctx, func() *audit.Report {
		env.phase(phaseConduct)
		return au.Report(results, conduct.Config{
			Token:        parse.Token,
			Budget:       o.Budget,
			BudgetWindow: o.BudgetWindow,
			MinPause:     o.MinPause,
			MinBackoff:   o.MinBackoff,
			Robots:       robots.For,
		})
	})
	if err != nil {
		return nil, nil, err
	}
	rep.Warnings = append(rep.Warnings, robotsUnknownSiteWarnings(robots, reportSites(rep))...)
	rep.Version = Version
	rep.GeneratedAt = env.Now().UTC().Truncate(time.Second)
	rep.Summary.IPListSource = id.List.Source
	if incomplete {
		return rep, id, errIncomplete
	}
	return rep, id, nil
}

// checkConductFlags rejects conduct flag values that make no sense, naming
// the flag, its value and what is allowed.
func checkConductFlags(o *auditOptions) error {
	switch {
	case o.Budget < 1:
		return usageError("--budget %d: give a number of pages of 1 or more, such as 20", o.Budget)
	case o.BudgetWindow <= 0:
		return usageError("--budget-window %s: give a duration above 0, such as 24h", o.BudgetWindow)
	case o.MinPause < 0:
		return usageError("--min-pause %s: give a duration of 0 or more, such as 1s", o.MinPause)
	case o.MinBackoff < 0:
		return usageError("--min-backoff %s: give a duration of 0 or more, such as 30s", o.MinBackoff)
	}
	return nil
}

// readLog reads one input into the audit, its lines without a virtual
// host under site. ok is false when the input could not be read whole, or
// its format could not be detected (the audit keeps what was read, and the
// reason is a warning and the input's Error), or when ctx was cancelled
// while reading (the caller checks ctx). hostLogged says whether the
// input's format records the virtual host.
func readLog(ctx context.Context, env *Env, o *auditOptions, name, site string, f *parse.Format, listed *parse.AddrSet, au *audit.Audit, prog *progress) (ok, hostLogged bool) {
	var src io.Reader
	var size int64 = -1
	failed := func(msg string) (bool, bool) {
		au.Warn(msg)
		au.AddInput(audit.InputReport{File: name, Error: msg}, nil)
		return false, false
	}
	if name == "-" {
		src = env.Stdin
	} else {
		fh, err := openInput(ctx, name)
		if err != nil {
			if ctx.Err() != nil {
				return false, false
			}
			return failed(fmt.Sprintf("cannot read %s: %v", name, unwrapPathError(err)))
		}
		defer fh.Close()
		if st, err := fh.Stat(); err == nil {
			if st.IsDir() {
				return failed(fmt.Sprintf("cannot read %s: it is a directory", name))
			}
			if st.Mode().IsRegular() {
				size = st.Size()
			}
		}
		src = fh
	}
	r := parse.NewReader(src, parse.Options{Name: name, Format: f, Site: site, TrustXFF: o.TrustXFF, Listed: listed})
	// Stop, unlike a check between records, ends a read that finds
	// nothing to keep, or waits on a pipe, as soon as the run is cancelled.
	stop := context.AfterFunc(ctx, r.Stop)
	defer stop()
	prog.start(name, size, r)
	// The reader runs aside, so that an interrupted run returns at once
	// even when the reader is slow to notice Stop; it is then left behind
	// and nothing here touches the audit again.
	scanned := make(chan struct{})
	go func() {
		defer close(scanned)
		for r.Scan() {
			au.Add(r.Record())
		}
	}()
	select {
	case <-scanned:
	case <-ctx.Done():
		prog.done()
		return false, false
	}
	prog.done()
	err := r.Err()
	if errors.Is(err, parse.ErrStopped) || ctx.Err() != nil {
		return false, false
	}
	st := r.Stats()
	in := audit.InputReport{File: name, Lines: st.Lines, Malformed: st.Malformed, Bytes: st.Bytes, Gzip: st.Gzip,
		FirstTime: st.FirstTime.UTC(), LastTime: st.LastTime.UTC(), MalformedClaims: st.MalformedClaims, Site: site}
	if st.MalformedClaims > 0 {
		au.Warn(fmt.Sprintf("%s: %d malformed lines carry the LohiSoftBot token: those claims could not be checked (see malformed_examples; is --log-format right?)", name, st.MalformedClaims))
	}
	if rf := r.Format(); rf != nil {
		in.LogFormat = rf.Name()
		in.HostLogged = rf.HasHost()
		hostLogged = rf.HasHost()
		if !rf.HasUserAgent() {
			au.Warn(fmt.Sprintf("%s: the log format %s records no User-Agent, so no request can be seen claiming to be LohiSoftBot; only the crawler's listed addresses are looked for", name, rf.Name()))
		}
	}
	switch {
	case err == nil:
	case errors.Is(err, parse.ErrUnknownFormat):
		// Like an unreadable file: error.log among access logs, or a
		// compression it cannot read, must not discard the other inputs.
		in.Error = fmt.Sprintf("%v; none of it was read; give its format with --log-format (combined, common, vhost_combined, json, 'nginx:<log_format>' or 'apache:<LogFormat>'), or leave it out", err)
		au.Warn(in.Error)
	default:
		var re *parse.ReadError
		msg := err.Error()
		if errors.As(err, &re) {
			msg = fmt.Sprintf("%s: %v at byte %d; the %d lines before it were read", re.File, re.Err, re.Offset, st.Lines)
		}
		au.Warn(msg)
		in.Error = msg
	}
	au.AddInput(in, r.Examples())
	return err == nil, hostLogged
}

// openInput opens a log file. Opening a named pipe waits for a writer, so
// it is done aside and given up when ctx is cancelled (the open is left
// to end, or not, on its own).
func openInput(ctx context.Context, name string) (*os.File, error) {
	if fi, err := os.Stat(name); err != nil || fi.Mode().IsRegular() || fi.IsDir() {
		return os.Open(name)
	}
	type opened struct {
		f   *os.File
		err error
	}
	ch := make(chan opened, 1)
	go func() {
		f, err := os.Open(name)
		ch <- opened{f, err}
	}()
	select {
	case o := <-ch:
		return o.f, o.err
	case <-ctx.Done():
		go func() {
			if o := <-ch; o.f != nil {
				o.f.Close()
			}
		}()
		return nil, errInterrupted
	}
}

// readAllContext reads r to its end, or up to limit bytes, aside: an
// interrupted run does not wait for a pipe that never ends
// (errInterrupted).
func readAllContext(ctx context.Context, r io.Reader, limit int64) ([]byte, error) {
	type read struct {
		data []byte
		err  error
	}
	got, err := untilDone(ctx, func() read {
		data, err := io.ReadAll(io.LimitReader(r, limit))
		return read{data, err}
	})
	if err != nil {
		return nil, err
	}
	return got.data, got.err
}

// untilDone runs f aside and returns its result, or errInterrupted as soon
// as ctx is cancelled (f is then left to finish on its own; its result is
// dropped).
func untilDone[T any](ctx context.Context, f func() T) (T, error) {
	ch := make(chan T, 1)
	go func() { ch <- f() }()
	var zero T
	select {
	case v := <-ch:
		if ctx.Err() != nil {
			return zero, errInterrupted
		}
		return v, nil
	case <-ctx.Done():
		return zero, errInterrupted
	}
}

// reportSites returns the sites an audit has: those of its claimed hits,
// and the site of every input without a virtual host.
func reportSites(rep *audit.Report) []string {
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, s := range rep.Sites {
		add(s.Site)
	}
	for _, in := range rep.Inputs {
		if in.LogFormat != "" && !in.HostLogged {
			add(in.Site)
		}
	}
	sort.Strings(out)
	return out
}

// unwrapPathError returns the cause of a *fs.PathError (the operation and
// the path are said by the caller), or err itself.
func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
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

// StdinTTY reports whether standard input is a terminal (nothing piped).
func (e *Env) StdinTTY() bool {
	f, ok := e.Stdin.(*os.File)
	return ok && isTerminal(f)
}

// progress prints a status line on stderr while logs are read, only when
// stderr is a terminal and not in CI.
type progress struct {
	env     *Env
	enabled bool
	mu      sync.Mutex
	name    string
	size    int64
	r       *parse.Reader
	t0      time.Time
	ticker  *time.Ticker
	quit    chan struct{}
	exited  chan struct{}
	shown   atomic.Bool
	once    sync.Once
}

func newProgress(env *Env, o *auditOptions) *progress {
	p := &progress{env: env, enabled: env.StderrTTY && !o.NoProgress && env.Getenv("CI") == "" && env.Getenv("TERM") != "dumb"}
	if p.enabled {
		p.ticker = time.NewTicker(250 * time.Millisecond)
		p.quit = make(chan struct{})
		p.exited = make(chan struct{})
		go p.loop()
	}
	return p
}

func (p *progress) start(name string, size int64, r *parse.Reader) {
	if !p.enabled {
		return
	}
	p.mu.Lock()
	p.name, p.size, p.r, p.t0 = name, size, r, time.Now()
	p.mu.Unlock()
}

func (p *progress) done() {
	if !p.enabled {
		return
	}
	p.mu.Lock()
	p.r = nil
	p.mu.Unlock()
}

func (p *progress) loop() {
	defer close(p.exited)
	for {
		select {
		case <-p.quit:
			return
		case <-p.ticker.C:
			p.mu.Lock()
			r, name, size, t0 := p.r, p.name, p.size, p.t0
			p.mu.Unlock()
			if r == nil || time.Since(t0) < time.Second {
				continue
			}
			read := r.BytesRead()
			el := time.Since(t0).Seconds()
			rate := float64(read) / el
			line := fmt.Sprintf("%s: %s read, %d lines, %s/s", render.Cell(name, 40), humanBytes(float64(read)), r.LinesRead(), humanBytes(rate))
			if size > 0 && rate > 0 && read <= size {
				eta := time.Duration(float64(size-read) / rate * float64(time.Second))
				line += fmt.Sprintf(", %d%%, %s left", read*100/size, eta.Round(time.Second))
			}
			fmt.Fprintf(p.env.Stderr, "\r\x1b[K%s", line)
			p.shown.Store(true)
		}
	}
}

func (p *progress) stop() {
	if !p.enabled {
		return
	}
	p.once.Do(func() {
		p.ticker.Stop()
		close(p.quit)
		<-p.exited
		if p.shown.Load() {
			fmt.Fprint(p.env.Stderr, "\r\x1b[K")
		}
	})
}

func humanBytes(b float64) string {
	const unit = 1024
	if b < unit {
		return fmt.Sprintf("%.0f B", b)
	}
	div, exp := float64(unit), 0
	for n := b / unit; n >= unit && exp < 4; n /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", b/div, "KMGTP"[exp])
}
