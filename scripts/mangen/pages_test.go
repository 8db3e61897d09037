package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/cmd"
	"github.com/lohisoft/lohibot-audit/internal/manual"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// sections are the sections every page has, in this order.
var sections = []string{"NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "FILES", "ENVIRONMENT", "EXAMPLES", "SEE ALSO"}

func writeTestPages(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	when := time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)
	if err := writePages(cmd.NewRootCommand(), dir, when, "1.2.3"); err != nil {
		t.Fatal(err)
	}
	return dir
}

// eachCommand calls f for every command that has a page.
func eachCommand(t *testing.T, f func(c *cobra.Command, name string)) int {
	n := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.HasParent() && !c.IsAvailableCommand() {
			return
		}
		f(c, strings.ReplaceAll(c.CommandPath(), " ", "-")+".1")
		n++
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(cmd.NewRootCommand())
	return n
}

// TestWritePagesCoversEveryCommand checks that each command has a page
// with every section, in order, that documents each of its flags and each
// of its exit statuses.
func TestWritePagesCoversEveryCommand(t *testing.T) {
	dir := writeTestPages(t)
	n := eachCommand(t, func(c *cobra.Command, name string) {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Errorf("no page for %q: %v", c.CommandPath(), err)
			return
		}
		page := string(b)
		title := strings.ToUpper(strings.ReplaceAll(strings.TrimSuffix(name, ".1"), "-", `\-`))
		if !strings.Contains(page, `.TH "`+title+`" 1 "2026\-12\-02" "lohibot\-audit 1.2.3"`) {
			t.Errorf("%s: header lacks the title, section, date or version:\n%.300s", name, page)
		}
		at := 0
		for _, s := range sections {
			i := strings.Index(page[at:], "\n.SH "+s+"\n")
			if i < 0 {
				t.Errorf("%s: no section %s after the ones before it", name, s)
				continue
			}
			at += i + 1
		}
		c.NonInheritedFlags().VisitAll(func(f *pflag.Flag) {
			if !f.Hidden && !strings.Contains(page, `\fB\-\-`+strings.ReplaceAll(f.Name, "-", `\-`)+`\fR`) {
				t.Errorf("%s does not document --%s", name, f.Name)
			}
		})
		for _, e := range manual.Of(c).Exit {
			if !strings.Contains(page, ".TP\n\\fB"+e.Name+"\\fR\n") {
				t.Errorf("%s does not state exit status %s", name, e.Name)
			}
		}
	})
	if n < 10 {
		t.Errorf("%d pages, want every command (logs, verify, robots, emit, ips, watch, ...)", n)
	}
}

// groff finds groff, which renders the pages as man does; with CI set, a
// missing groff fails the test.
func groff(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("groff")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("groff is not installed and CI is set: .ci/install-release-tools installs groff-base")
		}
		t.Skip("groff is not installed (.ci/install-release-tools installs groff-base); skipped outside CI")
	}
	return p
}

// render renders a page for an 80-column terminal as man does, and
// returns the text and groff's warnings.
func render(t *testing.T, groffPath, page string) (text, warnings string) {
	t.Helper()
	var out, errb bytes.Buffer
	c := exec.Command(groffPath, "-man", "-Tutf8", "-ww", "-rLL=80n", "-rLT=80n", "-P-cbou", page)
	c.Stdout, c.Stderr = &out, &errb
	if err := c.Run(); err != nil {
		t.Fatalf("groff %s: %v\n%s", page, err, errb.String())
	}
	return out.String(), errb.String()
}

// TestPagesRenderWithMan renders every page with groff, as man shows it
// on an 80-column terminal: no warning, no line wider than the terminal,
// lists as lists, placeholders kept, exit statuses stated.
func TestPagesRenderWithMan(t *testing.T) {
	g := groff(t)
	dir := writeTestPages(t)
	rendered := map[string]string{}
	eachCommand(t, func(c *cobra.Command, name string) {
		text, warnings := render(t, g, filepath.Join(dir, name))
		if warnings != "" {
			t.Errorf("%s: groff warns:\n%s", name, warnings)
		}
		for i, line := range strings.Split(text, "\n") {
			if w := len([]rune(line)); w > 80 {
				t.Errorf("%s: line %d is %d columns wide: %q", name, i+1, w, line)
			}
		}
		for _, s := range sections {
			if !regexp.MustCompile(`(?m)^` + s + `$`).MatchString(text) {
				t.Errorf("%s: the section %s is not shown", name, s)
			}
		}
		rendered[name] = text
	})
	for _, tc := range []struct {
		page, what string
		re         string
	}{
		{"lohibot-audit-logs.1", "the log format's placeholders", `'nginx:<log_format>'\s+or\s+'apache:<LogFormat>'`},
		{"lohibot-audit-logs.1", "the compressions", `gzip,\s+bzip2,\s+xz\s+or\s+zstd`},
		{"lohibot-audit-verify.1", "the verdicts as a list", `(?m)^ {7}genuine\n {14}the PTR name ends in \.bot\.lohisoft\.com`},
		{"lohibot-audit-verify.1", "the last verdict", `(?m)^ {7}unverified\n {14}DNS could not answer`},
		{"lohibot-audit.1", "the numbered questions", `(?m)^ {7}1\. +Who is really the crawler\?`},
		{"lohibot-audit.1", "exit status 0", `(?m)^ {7}0 +done`},
		{"lohibot-audit.1", "exit status 3", `(?m)^ {7}3 +an input could not be read whole`},
		{"lohibot-audit.1", "exit status 130", `(?m)^ {7}130 +interrupted by SIGINT or SIGTERM`},
		{"lohibot-audit-emit.1", "the modes", `(?m)^ {7}block-spoofed\n {14}\(default\) block the addresses`},
		{"lohibot-audit-emit.1", "a long example cut as a shell reads it", `(?m)^ {11}lohibot-audit emit nftables /var/log/nginx/access.log -o \\\n {15}/etc/nftables.d/lohibot.nft`},
		{"lohibot-audit-emit.1", "--changed-exit's status", `(?m)^ {7}N +with -o and --changed-exit N`},
		{"lohibot-audit-robots-check.1", "GITHUB_ACTIONS", `(?m)^ {7}GITHUB_ACTIONS`},
		{"lohibot-audit-watch.1", "the unit", `lohibot-audit-watch.service`},
	} {
		if !regexp.MustCompile(tc.re).MatchString(rendered[tc.page]) {
			t.Errorf("%s does not show %s (%s):\n%s", tc.page, tc.what, tc.re, rendered[tc.page])
		}
	}
}

func TestSplitExample(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"short line", []string{"short line"}},
		{"lohibot-audit emit nftables /var/log/nginx/access.log -o /etc/nftables.d/lohibot.nft", []string{
			`lohibot-audit emit nftables /var/log/nginx/access.log -o \`,
			"    /etc/nftables.d/lohibot.nft"}},
		{"a 'quoted words that must stay together whatever the width of the terminal' b", []string{
			`a \`, "    'quoted words that must stay together whatever the width of the terminal' \\", "    b"}},
	} {
		got := splitExample(tc.in, 60)
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("splitExample(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestText(t *testing.T) {
	for in, want := range map[string]string{
		".starts with a dot":                  `\&.starts with a dot`,
		"'starts with a quote":                `\&'starts with a quote`,
		`back\slash --flag <FILE>`:            `back\eslash \-\-flag <FILE>`,
		"/a/very/long/path/of/many/parts.txt": `/\:a/\:very/\:long/\:path/\:of/\:many/\:parts.txt`,
		"one … two — é":                       `one \[u2026] two \[u2014] \[u00E9]`,
	} {
		if got := text(in); got != want {
			t.Errorf("text(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestPageDate(t *testing.T) {
	for _, tc := range []struct {
		date, epoch string
		want        string
		wantErr     bool
	}{
		{date: "2026-12-02", want: "2026-12-02"},
		{epoch: "1764633600", want: "2025-12-02"},
		{date: "2026-12-02", epoch: "0", want: "2026-12-02"},
		{date: "02/12/2026", wantErr: true},
		{epoch: "yesterday", wantErr: true},
	} {
		got, err := pageDate(tc.date, tc.epoch)
		if (err != nil) != tc.wantErr {
			t.Errorf("pageDate(%q, %q) error = %v, want error %v", tc.date, tc.epoch, err, tc.wantErr)
			continue
		}
		if err == nil && got.Format(time.DateOnly) != tc.want {
			t.Errorf("pageDate(%q, %q) = %s, want %s", tc.date, tc.epoch, got.Format(time.DateOnly), tc.want)
		}
	}
}
