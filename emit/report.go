package emit

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"slices"
	"strconv"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/verify"
)

// AddAudit fills in from an audit run of the logs files ("-" or none:
// stdin): their names as the rules' sources, the report's IP list source,
// and its addresses and verdicts (AddReport; what it leaves out the
// audit's own warnings said). id, when not nil, is the identity that
// judged them: its crawlers, their lists and the proxies; named says
// whether --crawler named the crawlers.
func (in *Input) AddAudit(rep *audit.Report, id *verify.Identity, named bool, files []string) {
	in.Sources = make([]string, 0, max(len(files), 1))
	for _, f := range files {
		if f == "-" {
			f = "stdin"
		}
		in.Sources = append(in.Sources, f)
	}
	if len(files) == 0 {
		in.Sources = append(in.Sources, "stdin")
	}
	in.IPListSource = rep.Summary.IPListSource
	if id != nil {
		in.Proxies = id.Proxies
		in.Crawlers = CrawlersOf(crawler.Names(id.Profiles), id.Profiles, id.Lists)
		in.Named = named
	}
	_ = in.AddReport(rep)
}

// MaxReportSize bounds the size of a JSON report read back for rules.
const MaxReportSize = 256 << 20

var (
	// ErrReportJSON means a report is not valid JSON.
	ErrReportJSON = errors.New("not valid JSON")
	// ErrNotReport means a report is JSON but not a lohibot-audit report.
	ErrNotReport = errors.New(`not a lohibot-audit report (it has no "tool": "lohibot-audit")`)
)

// DecodeReport parses a JSON report written by an audit. It returns an
// error wrapping [ErrReportJSON] for data that is not JSON, and
// [ErrNotReport] for JSON that is not a lohibot-audit report.
func DecodeReport(data []byte) (*audit.Report, error) {
	var rep audit.Report
	if err := json.Unmarshal(data, &rep); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrReportJSON, err)
	}
	if rep.Tool != "lohibot-audit" {
		return nil, ErrNotReport
	}
	return &rep, nil
}

// AddReport adds the addresses of an audit's report to in.Crawlers, by
// the rules' policy: spoofed addresses to block (Spoofed), genuine ones
// to spare (Genuine), those in the crawler's IP list to the list
// (Listed); unverified addresses are never blocked. When the rules name
// their crawlers (in.Named), each address goes to the crawler its
// "crawler" field names (SPEC §10), and addresses of other crawlers are
// left out, with one line per such crawler; else every address goes to
// the one crawler. It returns one line per address it left out: a client
// that is not an IP address, or a verdict it does not know (never
// blocked). The lines quote text from the report without escaping it.
func (in *Input) AddReport(rep *audit.Report) (skipped []string) {
	if rep == nil || len(in.Crawlers) == 0 {
		return nil
	}
	byName := map[string]*CrawlerInput{}
	for i := range in.Crawlers {
		byName[in.Crawlers[i].Name] = &in.Crawlers[i]
	}
	if !in.named() && in.Crawlers[0].Spoofed == nil {
		in.Crawlers[0].Spoofed = make([]netip.Addr, 0, rep.NumIPs()) // at most; a botnet's million
	}
	other := map[string]int{}
	for r := range rep.AllIPs() {
		c := &in.Crawlers[0]
		if in.named() {
			if c = byName[r.Crawler]; c == nil {
				other[r.Crawler]++
				continue
			}
		}
		if line := addReportIP(r, &c.Spoofed, &c.Genuine, &c.Listed); line != "" {
			skipped = append(skipped, line)
		}
		in.addEvidence(r, c.Name)
	}
	for _, name := range slices.Sorted(maps.Keys(other)) {
		who := "no crawler"
		if name != "" {
			who = "crawler " + strconv.Quote(name)
		}
		skipped = append(skipped, fmt.Sprintf("%d addresses of %s are left out: the rules are not for it", other[name], who))
	}
	return skipped
}

// addEvidence keeps the evidence of a spoofing address of a report, as
// the crawler named crawler's, when in.Evidence asks for it.
func (in *Input) addEvidence(r audit.IPReport, crawler string) {
	if in.Evidence == nil || r.Verdict != verify.Spoofed {
		return
	}
	a, err := netip.ParseAddr(r.IP)
	if err != nil {
		return
	}
	a = normAddr(a)
	in.Evidence[a] = append(in.Evidence[a], EvidenceOf(r, a, crawler))
}

// addReportIP adds one address of a report to the sets, by its verdict,
// or returns why it was left out.
func addReportIP(r audit.IPReport, spoofed, genuine *[]netip.Addr, listed *[]netip.Prefix) string {
	a, err := netip.ParseAddr(r.IP)
	if err != nil {
		return fmt.Sprintf("skipping %q: not an IP address", r.IP)
	}
	if r.InIPList {
		a := a.Unmap().WithZone("")
		*listed = append(*listed, netip.PrefixFrom(a, a.BitLen()))
	}
	switch r.Verdict {
	case verify.Spoofed:
		*spoofed = append(*spoofed, a)
	case verify.Genuine:
		*genuine = append(*genuine, a)
	case verify.Unverified:
	default:
		return fmt.Sprintf("%s has the unknown verdict %q; it is not blocked", r.IP, r.Verdict)
	}
	return ""
}
