package render

import (
	"bytes"
	"encoding/csv"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/internal/nouns"
	"github.com/lohisoft/lohibot-audit/parse"
	"github.com/lohisoft/lohibot-audit/verify"
)

// Verdicts is what `verify` prints: the verdicts of addresses, address by
// address, each address judged as every crawler in turn. As JSON and YAML
// it is {"ips": [...], "warnings": [...]}, each address with the fields
// of a report's (SPEC §5) but the times, which only a log can tell.
type Verdicts struct {
	// Rows are the verdicts, in the order printed.
	Rows []Verdict
	// Lists are the IP lists in force, by the crawler's index.
	Lists []*verify.IPList
	// Warnings are the run's warnings.
	Warnings []string
	// Now is when the verdicts were made, to say the lists' ages.
	Now time.Time
}

// Verdict is one address judged as one crawler.
type Verdict struct {
	// Crawler names the crawler when the crawlers are named (--crawler);
	// "" keeps the columns of a report that names none.
	Crawler string
	// List is the crawler's index in Verdicts.Lists.
	List   int
	Result verify.Result
}

// VerdictRows orders the verdicts of addrs address by address, each
// judged as every crawler in turn (results[i] are crawler i's). names,
// when not nil, name the crawlers on the rows (--crawler).
func VerdictRows(addrs []netip.Addr, results []map[netip.Addr]verify.Result, names []string) []Verdict {
	rows := make([]Verdict, 0, len(addrs)*len(results))
	for _, a := range addrs {
		for i, r := range results {
			v := Verdict{List: i, Result: r[a]}
			if names != nil {
				v.Crawler = names[i]
			}
			rows = append(rows, v)
		}
	}
	return rows
}

// Spoofed counts the rows whose verdict is spoofed.
func (d *Verdicts) Spoofed() int64 {
	var n int64
	for _, r := range d.Rows {
		if r.Result.Verdict == verify.Spoofed {
			n++
		}
	}
	return n
}

// verdictsData is the JSON and YAML of Verdicts.
type verdictsData struct {
	IPs      []audit.IPReport `json:"ips" yaml:"ips"`
	Warnings []string         `json:"warnings,omitempty" yaml:"warnings,omitempty"`
}

func (d *Verdicts) Data() any {
	out := verdictsData{IPs: make([]audit.IPReport, len(d.Rows)), Warnings: d.Warnings}
	for i, r := range d.Rows {
		out.IPs[i] = audit.IPReportOf(r.Result)
		out.IPs[i].Crawler = r.Crawler
	}
	return out
}

// named says whether --crawler named the crawlers: the rows then say
// which crawler each verdict is about.
func (d *Verdicts) named() bool { return len(d.Rows) > 0 && d.Rows[0].Crawler != "" }

func (d *Verdicts) WriteCSV(w io.Writer) error {
	reps := make([]audit.IPReport, len(d.Rows))
	for i, r := range d.Rows {
		reps[i] = audit.IPReportOf(r.Result)
	}
	if !d.named() {
		return WriteIPsCSV(w, slices.Values(reps))
	}
	// The crawler of each row in a first column.
	var buf bytes.Buffer
	if err := WriteIPsCSV(&buf, slices.Values(reps)); err != nil {
		return err
	}
	records, err := csv.NewReader(&buf).ReadAll()
	if err != nil {
		return err
	}
	cw := csv.NewWriter(w)
	for i, rec := range records {
		first := "crawler"
		if i > 0 {
			first = d.Rows[i-1].Crawler
		}
		if err := cw.Write(append([]string{first}, rec...)); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func (d *Verdicts) WriteText(t *Text) error {
	named := d.named()
	head := []string{"IP", "VERDICT", "WHY", "PTR", "FORWARD", "IN IP LIST"}
	if named {
		head = append([]string{"CRAWLER"}, head...)
	}
	tab := &Table{Header: head, TitleColumns: 2}
	for _, row := range d.Rows {
		r := row.Result
		inList := "no"
		if r.InIPList {
			inList = "yes"
		}
		cells := []string{t.Cell(r.Addr.String(), 45), string(r.Verdict), t.Cell(verdictWhy(r), 100),
			t.Cell(OrDash(strings.Join(r.PTR, " ")), 100), t.Cell(OrDash(strings.Join(r.Forward, " ")), 100), inList}
		if named {
			cells = append([]string{t.Cell(row.Crawler, 32)}, cells...)
		}
		tab.Rows = append(tab.Rows, cells)
	}
	t.Table(tab)
	if !named {
		t.Printf("\nIP list: %s\n", t.Esc(ListDescription(d.Lists[0], d.Now)))
		return nil
	}
	t.Printf("\n")
	seen := map[int]bool{}
	for _, row := range d.Rows {
		if !seen[row.List] {
			seen[row.List] = true
			t.Printf("IP list (%s): %s\n", t.Esc(row.Crawler), t.Esc(ListDescription(d.Lists[row.List], d.Now)))
		}
	}
	return nil
}

// verdictWhy is the method and reason for people, with the warnings and
// the DNS error, if any.
func verdictWhy(r verify.Result) string {
	why := withProxy(Why(r.Method, r.Reason, r.DNSFailure, r.Warnings), r.Reason, r.Proxy)
	if r.DNSError != "" && (r.Reason == verify.ReasonDNSError || r.Method == verify.MethodIPList) {
		why += " [" + r.DNSError + "]"
	}
	return OrDash(why)
}

// ListDescription is one line saying which IP list is in force: its
// source, size, age and creation time; "-" for none.
func ListDescription(l *verify.IPList, now time.Time) string {
	if l == nil {
		return "-"
	}
	if l.Source == verify.IPListSourceNone {
		return parse.EscapeControl("no list: " + l.Missing)
	}
	s := l.Source + ", " + nouns.Count(len(l.Prefixes), "prefix", "prefixes")
	if !l.Fetched.IsZero() {
		s += ", fetched " + Age(now.Sub(l.Fetched)) + " ago"
	}
	if !l.CreationTime.IsZero() {
		s += ", created " + l.CreationTime.UTC().Format(time.RFC3339)
	}
	return parse.EscapeControl(s)
}

// Age prints a duration for people: 45s, 12m, 3h, 4d.
func Age(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d/time.Hour))
	}
	return fmt.Sprintf("%dd", int(d/(24*time.Hour)))
}
