package render

import (
	"encoding/csv"
	"io"
	"iter"
	"strconv"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/parse"
)

// csvHeader is the header of the csv output: one row per address.
var csvHeader = []string{"ip", "verdict", "method", "reason", "in_ip_list", "hits", "first_seen", "last_seen", "ptr", "forward", "user_agents", "warnings"}

// WriteIPsCSV prints one row per address, as `logs --format csv` does.
// Cells that a spreadsheet would take for a formula are prefixed with a
// quote: user agents and PTR names are written by strangers.
func WriteIPsCSV(w io.Writer, ips iter.Seq[audit.IPReport]) error {
	return writeIPsCSV(w, ips, false)
}

// writeIPsCSV is WriteIPsCSV, with a first column naming each address's
// crawler when crawlers is set.
func writeIPsCSV(w io.Writer, ips iter.Seq[audit.IPReport], crawlers bool) error {
	cw := csv.NewWriter(w)
	header := csvHeader
	if crawlers {
		header = append([]string{"crawler"}, csvHeader...)
	}
	if err := cw.Write(header); err != nil {
		return err
	}
	for ip := range ips {
		row := make([]string, 0, len(header))
		if crawlers {
			row = append(row, ip.Crawler)
		}
		row = append(row,
			ip.IP, string(ip.Verdict), ip.Method, ip.Reason,
			strconv.FormatBool(ip.InIPList), strconv.FormatInt(ip.Hits, 10),
			csvTime(ip.FirstSeen), csvTime(ip.LastSeen),
			strings.Join(ip.PTR, " "), strings.Join(ip.Forward, " "),
			strings.Join(ip.UserAgents, " | "), strings.Join(ip.Warnings, " "),
		)
		if err := writeCSVRow(cw, row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// writeReportCSV writes the report's addresses, with a crawler column
// when the report names its crawlers: in its totals, sites or
// violations, or on its first address (the addresses of a report name
// their crawlers all or none).
func writeReportCSV(w io.Writer, r *audit.Report) error {
	var first iter.Seq[audit.IPReport] = func(yield func(audit.IPReport) bool) {
		for ip := range r.AllIPs() {
			yield(ip)
			return
		}
	}
	return writeIPsCSV(w, r.AllIPs(), namesCrawlers(r, first))
}

// WriteCSV prints a header and rows, each cell made safe as WriteIPsCSV
// makes them.
func WriteCSV(w io.Writer, header []string, rows iter.Seq[[]string]) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return err
	}
	for row := range rows {
		if err := writeCSVRow(cw, row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func writeCSVRow(cw *csv.Writer, row []string) error {
	for i := range row {
		row[i] = csvCell(row[i])
	}
	return cw.Write(row)
}

func csvTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// csvCell escapes control characters and prefixes with a quote a cell that
// a spreadsheet would take for a formula.
func csvCell(s string) string {
	s = parse.EscapeControl(s)
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}
