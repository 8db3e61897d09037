package emit

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/verify"
)

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

// AddReport adds the addresses of an audit's report to in, by the rules'
// policy: spoofed addresses to block (Spoofed), genuine ones to spare
// (Genuine), those in the crawler's IP list to the list (Listed);
// unverified addresses are never blocked. It returns one line per address
// it left out: a client that is not an IP address, or a verdict it does
// not know (never blocked). The lines quote text from the report without
// escaping it.
func (in *Input) AddReport(rep *audit.Report) (skipped []string) {
	if rep == nil {
		return nil
	}
	if in.Spoofed == nil {
		in.Spoofed = make([]netip.Addr, 0, rep.NumIPs()) // at most; a botnet's million
	}
	for r := range rep.AllIPs() {
		a, err := netip.ParseAddr(r.IP)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("skipping %q: not an IP address", r.IP))
			continue
		}
		if r.InIPList {
			a := a.Unmap().WithZone("")
			in.Listed = append(in.Listed, netip.PrefixFrom(a, a.BitLen()))
		}
		switch r.Verdict {
		case verify.Spoofed:
			in.Spoofed = append(in.Spoofed, a)
		case verify.Genuine:
			in.Genuine = append(in.Genuine, a)
		case verify.Unverified:
		default:
			skipped = append(skipped, fmt.Sprintf("%s has the unknown verdict %q; it is not blocked", r.IP, r.Verdict))
		}
	}
	return skipped
}
