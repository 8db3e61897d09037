package cmd

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lohisoft/lohibot-audit/verify"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"gopkg.in/yaml.v3"
)

// writeJSON prints v as indented JSON, without HTML escaping.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// writeYAML prints v as YAML with the same field names as the JSON.
func writeYAML(w io.Writer, v any) error {
	enc := yaml.NewEncoder(w)
	enc.SetIndent(2)
	if err := enc.Encode(v); err != nil {
		return err
	}
	return enc.Close()
}

// writeReport prints a logs report in the chosen format.
func writeReport(w io.Writer, r *verify.Report, format string) error {
	switch format {
	case "json":
		return writeJSON(w, r)
	case "yaml":
		return writeYAML(w, r)
	case "csv":
		return writeIPsCSV(w, r.IPs)
	case "markdown":
		return writeReportText(w, r, true)
	default:
		return writeReportText(w, r, false)
	}
}

// csvHeader is the header of the csv output: one row per address.
var csvHeader = []string{"ip", "verdict", "method", "reason", "in_ip_list", "hits", "first_seen", "last_seen", "ptr", "forward", "user_agents", "warnings"}

// writeIPsCSV prints one row per address. Cells that a spreadsheet would
// take for a formula are prefixed with a quote: user agents and PTR names
// are written by strangers.
func writeIPsCSV(w io.Writer, ips []verify.IPReport) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	for _, ip := range ips {
		row := []string{
			ip.IP, string(ip.Verdict), ip.Method, ip.Reason,
			strconv.FormatBool(ip.InIPList), strconv.FormatInt(ip.Hits, 10),
			csvTime(ip.FirstSeen), csvTime(ip.LastSeen),
			strings.Join(ip.PTR, " "), strings.Join(ip.Forward, " "),
			strings.Join(ip.UserAgents, " | "), strings.Join(ip.Warnings, " "),
		}
		for i := range row {
			row[i] = csvCell(row[i])
		}
		if err := cw.Write(row); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func csvTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

func csvCell(s string) string {
	s = sanitize(s)
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// cell makes text from logs safe and short enough for a table cell.
func cell(s string, max int) string {
	s = sanitize(s)
	if max > 0 && len(s) > max {
		cut := max
		for cut > 0 && s[cut]&0xc0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

func newTable(w io.Writer, markdown bool, header ...string) *tablewriter.Table {
	opts := []tablewriter.Option{
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		tablewriter.WithHeaderAutoWrap(tw.WrapNone),
	}
	if markdown {
		opts = append(opts, tablewriter.WithRenderer(renderer.NewMarkdown()))
	}
	t := tablewriter.NewTable(w, opts...)
	t.Header(header)
	return t
}

func heading(w io.Writer, markdown bool, title string) {
	if markdown {
		fmt.Fprintf(w, "\n## %s\n\n", title)
	} else {
		fmt.Fprintf(w, "\n%s\n", strings.ToUpper(title))
	}
}

// writeReportText prints the report for people, as a terminal table or
// as Markdown.
func writeReportText(w io.Writer, r *verify.Report, md bool) error {
	s := r.Summary
	if md {
		fmt.Fprintf(w, "# lohibot-audit report\n\n")
	}
	fmt.Fprintf(w, "%d file(s), %d lines (%d malformed), log format %s\n", s.Files, s.Lines, s.Malformed, orDash(s.LogFormat))
	fmt.Fprintf(w, "%d claimed LohiSoftBot hits: %d genuine, %d spoofed, %d unverified; %d violations\n",
		s.ClaimedHits, s.GenuineHits, s.SpoofedHits, s.UnverifiedHits, s.Violations)
	if s.FilteredOut > 0 {
		fmt.Fprintf(w, "%d claimed hits outside --since/--until left out\n", s.FilteredOut)
	}
	if s.UnclaimedHit > 0 {
		fmt.Fprintf(w, "%d requests from the crawler's listed addresses did not carry its User-Agent\n", s.UnclaimedHit)
	}
	fmt.Fprintf(w, "IP list: %s\n", orDash(s.IPListSource))

	if len(r.IPs) > 0 {
		heading(w, md, "Addresses claiming to be LohiSoftBot")
		t := newTable(w, md, "IP", "VERDICT", "WHY", "HITS", "PTR", "FIRST SEEN", "LAST SEEN")
		for _, ip := range r.IPs {
			why := ip.Method
			if ip.Reason != "" {
				why = strings.TrimPrefix(why+": "+ip.Reason, ": ")
			}
			if len(ip.Warnings) > 0 {
				why += " (" + strings.Join(ip.Warnings, ", ") + ")"
			}
			if err := t.Append([]string{cell(ip.IP, 45), string(ip.Verdict), cell(why, 60), strconv.FormatInt(ip.Hits, 10),
				cell(strings.Join(ip.PTR, " "), 60), tableTime(ip.FirstSeen), tableTime(ip.LastSeen)}); err != nil {
				return err
			}
		}
		if err := t.Render(); err != nil {
			return err
		}
	}

	if len(r.Sites) > 0 {
		heading(w, md, "Sites")
		t := newTable(w, md, "SITE", "CLAIMED HITS", "GENUINE PAGES", "ROBOTS.TXT FETCHES", "VIOLATIONS", "CHECKS SKIPPED")
		for _, site := range r.Sites {
			if err := t.Append([]string{cell(site.Site, 60), strconv.FormatInt(site.ClaimedHits, 10), strconv.FormatInt(site.Pages, 10),
				strconv.FormatInt(site.RobotsFetches, 10), strconv.Itoa(site.Violations), orDash(strings.Join(site.ChecksSkipped, ", "))}); err != nil {
				return err
			}
		}
		if err := t.Render(); err != nil {
			return err
		}
	}

	if len(r.Violations) > 0 {
		heading(w, md, "Violations by the genuine crawler")
		bySite := map[string][]verify.Violation{}
		var sites []string
		for _, v := range r.Violations {
			if _, ok := bySite[v.Site]; !ok {
				sites = append(sites, v.Site)
			}
			bySite[v.Site] = append(bySite[v.Site], v)
		}
		sort.Strings(sites)
		for _, site := range sites {
			vs := bySite[site]
			kinds := map[string]int{}
			for _, v := range vs {
				kinds[v.Kind]++
			}
			var counts []string
			for k, n := range kinds {
				counts = append(counts, fmt.Sprintf("%s %d", k, n))
			}
			sort.Strings(counts)
			if md {
				fmt.Fprintf(w, "### %s: %s\n\n", cell(site, 80), strings.Join(counts, ", "))
			} else {
				fmt.Fprintf(w, "%s: %s\n", cell(site, 80), strings.Join(counts, ", "))
			}
			t := newTable(w, md, "KIND", "TIME", "IP", "WHERE", "PATH", "DETAIL")
			for _, v := range vs {
				if err := t.Append([]string{v.Kind, tableTime(v.Time), cell(v.IP, 45), cell(fmt.Sprintf("%s:%d", v.File, v.Line), 60),
					cell(v.Path, 60), cell(v.Detail, 120)}); err != nil {
					return err
				}
			}
			if err := t.Render(); err != nil {
				return err
			}
		}
	}

	if len(r.MalformedExamples) > 0 {
		heading(w, md, "Malformed lines (first examples)")
		t := newTable(w, md, "WHERE", "LINE")
		for _, m := range r.MalformedExamples {
			if err := t.Append([]string{cell(fmt.Sprintf("%s:%d", m.File, m.Line), 60), cell(m.Text, 100)}); err != nil {
				return err
			}
		}
		if err := t.Render(); err != nil {
			return err
		}
	}
	if len(r.Warnings) > 0 {
		heading(w, md, "Warnings")
		for _, wn := range r.Warnings {
			fmt.Fprintf(w, "- %s\n", sanitize(wn))
		}
	}
	return nil
}

func tableTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format("2006-01-02 15:04:05Z")
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
