package audit

import (
	"context"
	"errors"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/conduct"
	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/lohisoft/lohibot-audit/verify"
)

// offlineClassifier gives the verdicts of an offline verifier: the
// crawler's built-in IP list decides.
type offlineClassifier struct{ v *verify.Verifier }

func (c offlineClassifier) Classify(ctx context.Context, _ int, addrs []netip.Addr) map[netip.Addr]verify.Result {
	out := map[netip.Addr]verify.Result{}
	for i, r := range c.v.Verify(ctx, addrs) {
		out[addrs[i]] = r
	}
	return out
}

func (c offlineClassifier) Warnings() []string { return []string{"from the classifier"} }

// fileInput opens a file of the repository's test logs.
func fileInput(name, site string) Input {
	return Input{Name: name, Site: site, Open: func(context.Context) (io.ReadCloser, int64, error) {
		f, err := os.Open(filepath.Join("..", "testdata", "logs", name))
		return f, -1, err
	}}
}

// recordingProgress notes what Run tells it.
type recordingProgress struct{ events []string }

func (p *recordingProgress) Start(name string, _ int64, r *parse.Reader) {
	if r == nil {
		name += " without a reader"
	}
	p.events = append(p.events, "start "+name)
}
func (p *recordingProgress) Done() { p.events = append(p.events, "done") }

// TestRun: Run reads every input it can, says which it could not, calls
// its hooks in order, and its observer sees every claimed hit with the
// verdict the report gives its address.
func TestRun(t *testing.T) {
	v := &verify.Verifier{Offline: true, Profile: builtinProfiles(t, "lohisoftbot")[0]}
	broken := Input{Name: "gone.log", Site: "gone", Open: func(context.Context) (io.ReadCloser, int64, error) {
		return nil, -1, errors.New("no such file or directory")
	}}
	var phases []Phase
	var readReports []InputReport
	type seen struct {
		site string
		ip   string
		v    verify.Verdict
	}
	var observed []seen
	prog := &recordingProgress{}
	lohi := builtinProfiles(t, "lohisoftbot")[0]
	rep, err := Run(context.Background(), Options{
		Inputs: []Input{fileInput("combined.log", "a.example"), broken, fileInput("common.log", "b.example")},
		Subjects: []Subject{{Profile: lohi, List: verify.BuiltinList(lohi), Audit: &Audit{Settled: v.Settled},
			Conduct: conduct.Config{Token: lohi.RobotsToken, Budget: 20, BudgetWindow: 24 * time.Hour}}},
		Classifier: offlineClassifier{v},
		ReadWarnings: func(ins []InputReport) []string {
			readReports = slices.Clone(ins)
			return []string{"after reading"}
		},
		Observe: func(site string, crawler int, h conduct.Hit, vd verify.Verdict) {
			if crawler != 0 || site != h.Site {
				t.Errorf("observed crawler %d, site %q for a hit of %q", crawler, site, h.Site)
			}
			observed = append(observed, seen{site, h.IP, vd})
		},
		Progress: prog,
		OnPhase:  func(p Phase) { phases = append(phases, p) },
	})
	var ie *InputError
	if !errors.As(err, &ie) || !slices.Equal(ie.Inputs, []string{"gone.log"}) {
		t.Fatalf("err = %v, want an InputError naming gone.log", err)
	}
	if rep == nil {
		t.Fatal("no report beside the InputError")
	}
	if want := []Phase{PhaseRead, PhaseDNS, PhaseConduct}; !slices.Equal(phases, want) {
		t.Errorf("phases %q, want %q", phases, want)
	}
	if want := []string{"start combined.log", "done", "start common.log", "done"}; !slices.Equal(prog.events, want) {
		t.Errorf("progress %q, want %q", prog.events, want)
	}
	if len(readReports) != 3 || readReports[1].File != "gone.log" || readReports[1].Error == "" || readReports[2].Site != "b.example" {
		t.Errorf("ReadWarnings got %+v", readReports)
	}
	for _, w := range []string{"cannot read gone.log: no such file or directory", "after reading", "from the classifier"} {
		if !slices.Contains(rep.Warnings, w) {
			t.Errorf("warning %q missing from %q", w, rep.Warnings)
		}
	}
	if !rep.Summary.Incomplete || rep.Summary.Files != 3 || rep.Summary.ClaimedHits == 0 {
		t.Errorf("summary %+v", rep.Summary)
	}
	// A report that names no crawler: its list's source, no crawler
	// anywhere.
	if rep.Summary.IPListSource != verify.IPListSourceBuiltin || rep.Summary.Crawlers != nil {
		t.Errorf("ip list source %q, crawlers %+v; want built-in and none", rep.Summary.IPListSource, rep.Summary.Crawlers)
	}
	for ip := range rep.AllIPs() {
		if ip.Crawler != "" {
			t.Errorf("address %s names crawler %q in a report that names none", ip.IP, ip.Crawler)
		}
	}
	if int64(len(observed)) != rep.Summary.ClaimedHits {
		t.Errorf("observed %d hits, the report claims %d", len(observed), rep.Summary.ClaimedHits)
	}
	verdicts := map[string]verify.Verdict{}
	for ip := range rep.AllIPs() {
		verdicts[ip.IP] = ip.Verdict
	}
	kinds := map[verify.Verdict]int{}
	for _, o := range observed {
		if want, ok := verdicts[o.ip]; !ok || o.v != want {
			t.Errorf("hit of %s on %s observed as %s, the report says %s", o.ip, o.site, o.v, want)
		}
		kinds[o.v]++
	}
	if kinds[verify.Genuine] == 0 || kinds[verify.Genuine] == len(observed) {
		t.Errorf("observed verdicts %v: want genuine and other hits", kinds)
	}
}

// TestRunInterrupted: a run cancelled between its phases returns the
// context's error and no report.
func TestRunInterrupted(t *testing.T) {
	for _, at := range []Phase{PhaseRead, PhaseDNS, PhaseConduct} {
		t.Run(string(at), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			v := &verify.Verifier{Offline: true, Profile: builtinProfiles(t, "lohisoftbot")[0]}
			rep, err := Run(ctx, Options{
				Inputs:     []Input{fileInput("combined.log", "a.example")},
				Subjects:   []Subject{{Profile: builtinProfiles(t, "lohisoftbot")[0]}},
				Classifier: offlineClassifier{v},
				OnPhase: func(p Phase) {
					if p == at {
						cancel()
					}
				},
			})
			if rep != nil || !errors.Is(err, context.Canceled) {
				t.Errorf("Run = %v, %v; want no report and context.Canceled", rep != nil, err)
			}
		})
	}
}

// TestRunShapes: one crawler audited gives the same counts whether or not
// the report names it; named, the report says so in summary.crawlers, in
// each address and in its IP list source.
func TestRunShapes(t *testing.T) {
	lohi := builtinProfiles(t, "lohisoftbot")[0]
	run := func(named bool) *Report {
		v := &verify.Verifier{Offline: true, Profile: lohi}
		rep, err := Run(context.Background(), Options{
			Inputs:     []Input{fileInput("combined.log", "a.example")},
			Subjects:   []Subject{{Profile: lohi, List: verify.BuiltinList(lohi), Audit: &Audit{Settled: v.Settled}, Conduct: conduct.ConfigOf(lohi, conduct.Overrides{})}},
			Named:      named,
			Classifier: offlineClassifier{v},
		})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	plain, named := run(false), run(true)
	p, n := plain.Summary, named.Summary
	if p.ClaimedHits == 0 || p.ClaimedHits != n.ClaimedHits || p.GenuineHits != n.GenuineHits || p.SpoofedHits != n.SpoofedHits ||
		p.UnclaimedHit != n.UnclaimedHit || p.Violations != n.Violations || plain.NumIPs() != named.NumIPs() {
		t.Errorf("counts differ by shape: %+v and %+v", p, n)
	}
	if len(p.Crawlers) != 0 || len(n.Crawlers) != 1 || n.Crawlers[0].Name != "lohisoftbot" || n.Crawlers[0].ClaimedHits != n.ClaimedHits {
		t.Errorf("summary crawlers %+v and %+v; want none, then lohisoftbot's", p.Crawlers, n.Crawlers)
	}
	if p.IPListSource != "built-in" || n.IPListSource != "lohisoftbot: built-in" {
		t.Errorf("ip list sources %q and %q", p.IPListSource, n.IPListSource)
	}
	for ip := range named.AllIPs() {
		if ip.Crawler != "lohisoftbot" {
			t.Errorf("named report: address %s names crawler %q", ip.IP, ip.Crawler)
		}
	}
}
