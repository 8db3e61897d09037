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
	v := &verify.Verifier{Offline: true}
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
	rep, err := Run(context.Background(), Options{
		Inputs:     []Input{fileInput("combined.log", "a.example"), broken, fileInput("common.log", "b.example")},
		Audit:      &Audit{Settled: v.Settled},
		Classifier: offlineClassifier{v},
		Conduct:    conduct.Config{Budget: 20, BudgetWindow: 24 * time.Hour},
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
			v := &verify.Verifier{Offline: true}
			rep, err := Run(ctx, Options{
				Inputs:     []Input{fileInput("combined.log", "a.example")},
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
