// Package metrics serves what `watch` does as Prometheus metrics (SPEC
// §16), through the official Go client. Every value is read, at each
// scrape, from one watchstate.Status: the same numbers `watch status`
// shows, so the two never disagree.
//
// Names follow Prometheus' naming guide: the application prefix
// lohibot_audit_, base units in the name (seconds), _total on counters,
// one quantity per metric. Labels are bounded by what watch is given: the
// followed files, the crawlers watched, the resolvers, the three block
// targets and the verdicts. No address is ever a label.
//
// The metrics:
//
//	lohibot_audit_log_lines_total{file}                 counter
//	lohibot_audit_log_malformed_lines_total{file}       counter
//	lohibot_audit_log_last_line_timestamp_seconds{file} gauge
//	lohibot_audit_log_last_line_age_seconds{file}       gauge
//	lohibot_audit_claims_total{crawler}                 counter
//	lohibot_audit_verdicts_total{crawler,verdict}       counter
//	lohibot_audit_addresses{crawler,verdict}            gauge
//	lohibot_audit_violations_total{crawler}             counter
//	lohibot_audit_blocks_total{target}                  counter
//	lohibot_audit_block_failures_total{target}          counter
//	lohibot_audit_blocked_addresses{target}             gauge
//	lohibot_audit_held_addresses                        gauge
//	lohibot_audit_dns_queries_total{resolver}           counter
//	lohibot_audit_dns_query_failures_total{resolver}    counter
//	lohibot_audit_dns_resolver_up{resolver}             gauge
//	lohibot_audit_dns_query_duration_seconds            histogram
//	lohibot_audit_judge_queue_length                    gauge
//	lohibot_audit_action_queue_length                   gauge
//	lohibot_audit_block_queue_length{target}            gauge
//	lohibot_audit_conduct_queue_length                  gauge
//	lohibot_audit_events_written_total                  counter
//	lohibot_audit_events_lost_total                     counter
//	lohibot_audit_build_info{version}                   gauge
//
// and the Go runtime's and the process's metrics (go_*, process_*).
package metrics

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/lohisoft/lohibot-audit/watchstate"
)

// Path is where the metrics are served.
const Path = "/metrics"

const ns = "lohibot_audit"

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(ns+"_"+name, help, labels, nil)
}

var (
	linesDesc     = desc("log_lines_total", "Lines read from the followed log file.", "file")
	malformedDesc = desc("log_malformed_lines_total", "Lines of the log file that claim a crawler but cannot be read in the log's format.", "file")
	lastLineDesc  = desc("log_last_line_timestamp_seconds", "Unix time when the last line of the log file was read; absent before the first.", "file")
	lastAgeDesc   = desc("log_last_line_age_seconds", "Seconds since the last line of the log file was read, or since watch started before the first.", "file")
	claimsDesc    = desc("claims_total", "Requests read whose User-Agent claims the crawler.", "crawler")
	verdictsDesc  = desc("verdicts_total", "Judgements of addresses claiming the crawler, by verdict.", "crawler", "verdict")
	addrsDesc     = desc("addresses", "Addresses claiming the crawler known now, by verdict (pending: not judged yet).", "crawler", "verdict")
	violDesc      = desc("violations_total", "Conduct violations of the genuine crawler found.", "crawler")
	blocksDesc    = desc("blocks_total", "Spoofing addresses blocked, by target (nftables: added to a set; crowdsec: a decision put or kept in force; exec: a command that succeeded).", "target")
	blockFailDesc = desc("block_failures_total", "Blocks that failed, by target (for crowdsec: pushes to the Local API that failed, each retried).", "target")
	blockedDesc   = desc("blocked_addresses", "Addresses watch holds blocked now, by target.", "target")
	heldDesc      = desc("held_addresses", "Addresses an operator unblocked, held out of blocking now.")
	dnsQDesc      = desc("dns_queries_total", "DNS queries sent to the resolver.", "resolver")
	dnsFailDesc   = desc("dns_query_failures_total", "DNS queries to the resolver that got no usable answer (timeouts, network errors, answers that do not match).", "resolver")
	dnsUpDesc     = desc("dns_resolver_up", "Whether the resolver answered its last query (1) or not (0).", "resolver")
	dnsLatDesc    = desc("dns_query_duration_seconds", "Time DNS queries took, answered or not.")
	judgeQDesc    = desc("judge_queue_length", "Addresses waiting to be judged.")
	actQDesc      = desc("action_queue_length", "Spoofing addresses waiting for their actions to be decided.")
	blockQDesc    = desc("block_queue_length", "Blocks waiting for their target, by target.", "target")
	conductQDesc  = desc("conduct_queue_length", "Requests of the crawlers waiting for their addresses' verdicts before their conduct is checked.")
	writtenDesc   = desc("events_written_total", "Event lines written to standard output.")
	lostDesc      = desc("events_lost_total", "Event lines that could not be written (a full disk, a closed pipe).")
	buildDesc     = desc("build_info", "Always 1: the version of lohibot-audit in its label.", "version")
)

// collector reads a Status at each scrape.
type collector struct {
	status  func() watchstate.Status
	now     func() time.Time
	version string
}

func (c *collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{linesDesc, malformedDesc, lastLineDesc, lastAgeDesc, claimsDesc, verdictsDesc, addrsDesc,
		violDesc, blocksDesc, blockFailDesc, blockedDesc, heldDesc, dnsQDesc, dnsFailDesc, dnsUpDesc, dnsLatDesc, judgeQDesc,
		actQDesc, blockQDesc, conductQDesc, writtenDesc, lostDesc, buildDesc} {
		ch <- d
	}
}

func (c *collector) Collect(ch chan<- prometheus.Metric) {
	s := c.status()
	now := c.now()
	counter := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.CounterValue, v, labels...)
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for _, f := range s.Files {
		counter(linesDesc, float64(f.Lines), f.Name)
		counter(malformedDesc, float64(f.Malformed), f.Name)
		since := s.Started
		if !f.LastLine.IsZero() {
			gauge(lastLineDesc, float64(f.LastLine.UnixNano())/1e9, f.Name)
			since = f.LastLine
		}
		if !since.IsZero() {
			gauge(lastAgeDesc, max(now.Sub(since).Seconds(), 0), f.Name)
		}
	}
	for _, cr := range s.Crawlers {
		counter(claimsDesc, float64(cr.Claims), cr.Name)
		counter(verdictsDesc, float64(cr.Verdicts.Genuine), cr.Name, "genuine")
		counter(verdictsDesc, float64(cr.Verdicts.Spoofed), cr.Name, "spoofed")
		counter(verdictsDesc, float64(cr.Verdicts.Unverified), cr.Name, "unverified")
		gauge(addrsDesc, float64(cr.Addresses.Genuine), cr.Name, "genuine")
		gauge(addrsDesc, float64(cr.Addresses.Spoofed), cr.Name, "spoofed")
		gauge(addrsDesc, float64(cr.Addresses.Unverified), cr.Name, "unverified")
		gauge(addrsDesc, float64(cr.Pending), cr.Name, "pending")
		counter(violDesc, float64(cr.Violations), cr.Name)
	}
	for _, b := range s.Blocks {
		counter(blocksDesc, float64(b.Blocked), b.Target)
		counter(blockFailDesc, float64(b.Failed), b.Target)
		gauge(blockedDesc, float64(b.InForce), b.Target)
		var waiting int64
		switch b.Target {
		case watchstate.TargetNFTables:
			waiting = s.Queue.NFTables
		case watchstate.TargetCrowdSec:
			waiting = s.Queue.CrowdSec
		case watchstate.TargetExec:
			waiting = s.Queue.Exec
		}
		gauge(blockQDesc, float64(waiting), b.Target)
	}
	gauge(heldDesc, float64(s.Held))
	for _, r := range s.DNS.Resolvers {
		counter(dnsQDesc, float64(r.Queries), r.Server)
		counter(dnsFailDesc, float64(r.Failures), r.Server)
		up := 0.0
		if r.Up {
			up = 1
		}
		gauge(dnsUpDesc, up, r.Server)
	}
	h := s.DNS.Latency
	buckets := make(map[float64]uint64, len(h.Bounds))
	for i, b := range h.Bounds {
		if i < len(h.Counts) {
			buckets[b] = h.Counts[i]
		}
	}
	ch <- prometheus.MustNewConstHistogram(dnsLatDesc, h.Count, h.Sum, buckets)
	gauge(judgeQDesc, float64(s.Queue.Judge))
	gauge(actQDesc, float64(s.Queue.Actions))
	gauge(conductQDesc, float64(s.Queue.Conduct))
	counter(writtenDesc, float64(s.Events.Written))
	counter(lostDesc, float64(s.Events.Lost))
	gauge(buildDesc, 1, c.version)
}

// Registry returns a registry of the metrics of status (called at each
// scrape), with the Go runtime's and the process's. now is the clock of
// the age gauges; nil means time.Now.
func Registry(status func() watchstate.Status, now func() time.Time, version string) *prometheus.Registry {
	if now == nil {
		now = time.Now
	}
	r := prometheus.NewRegistry()
	r.MustRegister(&collector{status: status, now: now, version: version},
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return r
}

// Handler serves the registry's metrics at Path.
func Handler(r *prometheus.Registry) http.Handler {
	mux := http.NewServeMux()
	mux.Handle(Path, promhttp.HandlerFor(r, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	mux.HandleFunc("/", func(w http.ResponseWriter, req *http.Request) {
		if req.URL.Path != "/" {
			http.NotFound(w, req)
			return
		}
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Write([]byte("lohibot-audit watch: metrics at " + Path + "\n"))
	})
	return mux
}

// Server serves metrics on a listener until its context ends.
type Server struct {
	ln  net.Listener
	srv *http.Server
}

// Listen binds addr (HOST:PORT) for the metrics of r: an error here (an
// address in use, not an address) is for the caller to say at start.
func Listen(addr string, r *prometheus.Registry) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &Server{ln: ln, srv: &http.Server{Handler: Handler(r), ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout: 30 * time.Second, WriteTimeout: 30 * time.Second, IdleTimeout: time.Minute}}, nil
}

// Addr is the address bound (with the port chosen for port 0).
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Serve serves until ctx ends; the error is nil then.
func (s *Server) Serve(ctx context.Context) error {
	stop := context.AfterFunc(ctx, func() {
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		s.srv.Shutdown(sctx)
	})
	defer stop()
	err := s.srv.Serve(s.ln)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}
