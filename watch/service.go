package watch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"

	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/crowdsec"
	"github.com/lohisoft/lohibot-audit/emit"
	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/metrics"
	"github.com/lohisoft/lohibot-audit/nftset"
	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/lohisoft/lohibot-audit/watchstate"
)

// ServiceConfig is a watch as its command line asks for it: NewFor's
// Config, where spoofers are blocked, the state directory it holds and
// where its metrics are served. Start makes a Service of it.
type ServiceConfig struct {
	Config
	// NFTables, when set, opens the nftables table of its options
	// (nftset.Open; its TTL should be BlockTTL) and adds each spoofer
	// to its live sets; NFTNetNS, when set, is the network namespace
	// file (--nft-netns) whose nftables to use instead of its NetNS,
	// kept in the state for unblock.
	NFTables *nftset.Options
	NFTNetNS string
	// ExecCommand is the --exec command as given, kept in the state; a
	// failure of an Options.Exec command without an OnDone of its own is
	// said.
	ExecCommand string
	// CrowdSec, when set, pushes each spoofer of the crawlers watched to
	// the Local API of these credentials, read from CrowdSecFile (kept in
	// the state), each decision lasting BlockTTL.
	CrowdSec     *crowdsec.Credentials
	CrowdSecFile string
	// State is the state directory held (watchstate.Open): its state is
	// restored, kept up to date, and its control socket answered. Nil
	// keeps no state.
	State *watchstate.Held
	// Metrics is the HOST:PORT to serve Prometheus metrics at; "" serves
	// none.
	Metrics string
}

// Service is a Watcher with its blocking targets, state directory and
// metrics, as the watch command runs it.
type Service struct {
	*Watcher
	adder   *nftset.Adder
	netns   *os.File
	control net.Listener
	metrics *metrics.Server
	say     func(string)
}

// Start sets up the watch c asks for: its nftables table opened (a table
// no rule of which drops what its live sets hold is said), its --exec
// failures said, its CrowdSec queue, its Watcher (NewFor) with the state
// found restored, and its metrics address bound. An error says what
// could not be set up and what to do (startError; a network namespace
// file that cannot be opened is a usage error), with nothing left open.
func Start(ctx context.Context, c ServiceConfig) (*Service, error) {
	o := c.Options
	if o.Say == nil {
		o.Say = func(string) {}
	}
	s := &Service{say: o.Say}
	o.Targets = c.targets()
	if c.State != nil {
		o.StateDir, s.control = c.State.Dir, c.State.Listener
	}
	if c.NFTables != nil {
		nft := *c.NFTables
		if c.NFTNetNS != "" {
			nsf, err := os.Open(c.NFTNetNS)
			if err != nil {
				return nil, fail.Usagef("--nft-netns: %v", fail.PathCause(err))
			}
			s.netns, nft.NetNS = nsf, int(nsf.Fd())
		}
		adder, err := nftset.Open(nft)
		if err != nil {
			s.Close()
			return nil, startError("nftables", err, c.Metrics)
		}
		s.adder = adder
		o.Adder = adder
		o.Sets = nftset.Sets{Options: nftset.Options{NFTOptions: emit.NFTOptions{Table: nft.Table, SetOnly: true}, NetNS: nft.NetNS}}
		if u := adder.Unreferenced(); len(u) > 0 {
			o.Say(unreferenced(c.NFTables.Table, u))
		}
	}
	if x := o.Exec; x != nil && x.OnDone == nil {
		say := o.Say
		x.OnDone = func(args []string, err error) {
			if err != nil {
				say(fmt.Sprintf("exec %s %s: %v", x.Argv[0], strings.Join(args, " "), err))
			}
		}
	}
	if c.CrowdSec != nil {
		agent := crowdsec.Agent{Version: o.Version, Now: o.Now}
		o.CrowdSec = agent.Queue(*c.CrowdSec, crawler.Names(c.Identity.Profiles), o.BlockTTL, o.Say)
	}
	c.Options = o
	s.Watcher = NewFor(ctx, c.Config)
	if c.State != nil && c.State.Loaded != nil {
		s.Restore(c.State.Loaded)
	}
	if c.Metrics != "" {
		srv, err := metrics.Listen(c.Metrics, metrics.Registry(s.Status, s.o.Now, o.Version))
		if err != nil {
			s.Close()
			return nil, startError("metrics", err, c.Metrics)
		}
		s.metrics = srv
		o.Say(fmt.Sprintf("metrics: serving at http://%s%s", srv.Addr(), metrics.Path))
	}
	return s, nil
}

// startError says why part of the watch ("nftables" or "metrics") could
// not start, and what to do: a metrics address that cannot be bound and
// a bad table are usage errors; an nftables this system lacks, or a
// permission the process lacks, say how else to block.
func startError(part string, err error, metricsAddr string) error {
	switch {
	case part == "metrics":
		// Without net.Listen's "listen tcp ADDR:": the message names it.
		if oe := (*net.OpError)(nil); errors.As(err, &oe) && oe.Err != nil {
			err = oe.Err
		}
		return fail.Usagef("--metrics %s: %v: give a free HOST:PORT, such as 127.0.0.1:9571", parse.EscapeControl(metricsAddr), err)
	case errors.Is(err, nftset.ErrUnsupported):
		return fail.Hinted(fmt.Errorf("--nftables: %w", err), "on this system block with --exec, which runs your firewall's own command for each spoofer")
	case errors.Is(err, os.ErrPermission):
		return fail.New(fail.Other, fmt.Errorf("nftables: %w", err), "run as root or with CAP_NET_ADMIN (the lohibot-audit-watch.service unit grants it)")
	}
	return fail.New(fail.Usage, fmt.Errorf("nftables: %w", err), "")
}

// targets says where the watch blocks, for the state.
func (c ServiceConfig) targets() watchstate.Targets {
	var t watchstate.Targets
	if c.NFTables != nil {
		if nc, err := (emit.NFTOptions{Table: c.NFTables.Table, SetOnly: true}).Config(); err == nil {
			t.NFTables = nc.TableRef()
		}
		t.NFTNetNS = c.NFTNetNS
	}
	if c.CrowdSec != nil {
		t.CrowdSec, t.CrowdSecCredentials = c.CrowdSec.URL, c.CrowdSecFile
	}
	if c.Options.Exec != nil {
		t.Exec = c.ExecCommand
	}
	return t
}

// unreferenced is what is said when no rule of a --set-only table looks
// addresses up in the sets watch adds spoofers to.
func unreferenced(table string, sets []string) string {
	if table == "" {
		table = emit.DefaultNFTTable
	}
	var refs, rules []string
	for _, s := range sets {
		refs = append(refs, "@"+s)
		if strings.HasSuffix(s, "v6") {
			rules = append(rules, "'ip6 saddr @"+s+" drop'")
		} else {
			rules = append(rules, "'ip saddr @"+s+" drop'")
		}
	}
	return fmt.Sprintf("nftables: no rule in table %s refers to %s, where watch adds spoofers: they are not dropped until a chain of yours has %s",
		table, strings.Join(refs, " or "), strings.Join(rules, " and "))
}

// Signals are what the process asks of a running watch.
type Signals struct {
	// Reload (SIGHUP) asks for the configuration, the IP lists and
	// robots.txt anew: OnReload loads them and hands them to
	// Watcher.Reload; its error is said, and the watch goes on as before.
	Reload   <-chan os.Signal
	OnReload func() error
	// Summary (SIGUSR1) asks for a summary line (Watcher.Summary), said.
	Summary <-chan os.Signal
}

// Serve runs the watch until ctx ends (nil then) or Run does, answering
// the state's control socket, serving the metrics, and acting on sig
// meanwhile.
func (s *Service) Serve(ctx context.Context, sig Signals) error {
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	if s.control != nil {
		go watchstate.Serve(runCtx, s.control, s.Watcher)
	}
	if s.metrics != nil {
		go func() {
			if err := s.metrics.Serve(runCtx); err != nil {
				s.say(fmt.Sprintf("metrics: %v", err))
			}
		}()
	}
	done := make(chan error, 1)
	go func() { done <- s.Run(runCtx) }()
	for {
		select {
		case err := <-done:
			if err != nil && ctx.Err() == nil {
				return err
			}
			return nil
		case <-sig.Summary:
			s.say(s.Summary())
		case <-sig.Reload:
			s.say("reloading the config, the IP list and robots.txt")
			if err := sig.OnReload(); err != nil {
				s.say(fmt.Sprintf("reload failed: %v; going on as before", err))
			} else {
				s.say("reloaded: addresses are judged again as they are seen")
			}
		}
	}
}

// Close lets go of the nftables table and its network namespace. A nil
// Service does nothing.
func (s *Service) Close() {
	if s == nil {
		return
	}
	if s.adder != nil {
		s.adder.Close()
	}
	if s.netns != nil {
		s.netns.Close()
	}
}

// EventsTo writes events to w (lines for people when terminal), saying
// once when writing fails, going on meanwhile, and again when it works.
func EventsTo(w io.Writer, terminal bool, say func(string)) *Events {
	return &Events{W: w, Terminal: terminal, OnError: func(err error) {
		if err != nil {
			say(fmt.Sprintf("cannot write events: %v: going on; events are lost until writing works again", err))
		} else {
			say("events are written again")
		}
	}}
}
