package cmd

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/conduct"
	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/internal/testutil"
)

// sitesCrawl is a genuine crawl of one site in combined format (no
// virtual host): a robots.txt fetch, then pages ten seconds apart.
func sitesCrawl(day time.Time, pages int) string {
	var b strings.Builder
	line := func(t time.Time, ip, path string) {
		fmt.Fprintf(&b, "%s - - [%s] \"GET %s HTTP/1.1\" 200 512 \"-\" \"LohiSoftBot/1.0 (+https://lohisoft.com/bot)\"\n",
			ip, t.Format("02/Jan/2006:15:04:05 -0700"), path)
	}
	line(day, "79.139.58.98", "/robots.txt")
	for i := 1; i <= pages; i++ {
		line(day.Add(time.Duration(i)*10*time.Second), "79.139.58.98", fmt.Sprintf("/page/%d", i))
	}
	return b.String()
}

// sitesTree writes a per-site log tree under a new directory:
//
//	sites/a.example/access.log        12 pages on 1 December
//	sites/a.example/access.log.1      3 pages on 29 November
//	sites/a.example/access.log.2.gz   3 pages on 28 November
//	sites/b.example/access.log        12 pages on 1 December, and a spoofer
//
// Each site keeps within the budget of 20 pages a day; the two together
// would not. It returns the directory and the files.
func sitesTree(t *testing.T) (string, []string) {
	t.Helper()
	dir := t.TempDir()
	write := func(rel, content string, gz bool) string {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		data := []byte(content)
		if gz {
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			zw.Write(data)
			zw.Close()
			data = buf.Bytes()
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	dec1 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	spoofer := `203.0.113.50 - - [01/Dec/2026:11:00:00 +0000] "GET /admin HTTP/1.1" 200 512 "-" "LohiSoftBot/1.0 (+https://lohisoft.com/bot)"` + "\n"
	files := []string{
		write("sites/a.example/access.log", sitesCrawl(dec1, 12), false),
		write("sites/a.example/access.log.1", sitesCrawl(dec1.AddDate(0, 0, -2), 3), false),
		write("sites/a.example/access.log.2.gz", sitesCrawl(dec1.AddDate(0, 0, -3), 3), true),
		write("sites/b.example/access.log", sitesCrawl(dec1, 12)+spoofer, false),
	}
	return dir, files
}

func sitesArgs(t *testing.T, cmd []string, files []string, extra ...string) []string {
	list := testutil.TempFile(t, "ips.json", `["79.139.58.98"]`)
	args := append(append([]string{}, cmd...), "--offline", "--no-cache", "--ip-list", list)
	args = append(args, extra...)
	return append(args, files...)
}

func sitesReport(t *testing.T, out string) *audit.Report {
	t.Helper()
	var r audit.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("report is not JSON: %v\n%s", err, out)
	}
	return &r
}

// sitesPages maps each site of the report to its genuine pages.
func sitesPages(r *audit.Report) map[string]int64 {
	out := map[string]int64{}
	for _, s := range r.Sites {
		out[s.Site] = s.Pages
	}
	return out
}

// TestLogsPerSiteDirectories is the per-site tree of the issue: two files
// named access.log in different directories are two sites, named after
// their directories, and the report says so; rotated siblings stay one
// site.
func TestLogsPerSiteDirectories(t *testing.T) {
	_, files := sitesTree(t)
	code, out, errOut := runInMemory(t, "", sitesArgs(t, []string{"logs", "--format", "json", "--fail-on", "violations"}, files)...)
	if code != fail.ExitOK {
		t.Fatalf("exit %d, want 0 (no violation); stderr:\n%s", code, errOut)
	}
	r := sitesReport(t, out)
	if got, want := sitesPages(r), map[string]int64{"a.example": 18, "b.example": 12}; !reflect.DeepEqual(got, want) {
		t.Errorf("sites and pages = %v, want %v", got, want)
	}
	if len(r.Violations) != 0 {
		t.Errorf("violations: %+v", r.Violations)
	}
	var warning string
	for _, w := range r.Warnings {
		if strings.Contains(w, "share the base name access.log") {
			warning = w
		}
	}
	if warning == "" {
		t.Fatalf("no warning about the shared base name; warnings: %q", r.Warnings)
	}
	for _, f := range files {
		if !strings.Contains(warning, f) {
			t.Errorf("the warning does not name %s: %q", f, warning)
		}
	}
	for _, s := range []string{"a.example", "b.example", "--site GLOB=SITE"} {
		if !strings.Contains(warning, s) {
			t.Errorf("the warning does not say %q: %q", s, warning)
		}
	}
	if !strings.Contains(errOut, "lohibot-audit: warning: "+warning+"\n") {
		t.Errorf("stderr does not carry the warning:\n%s", errOut)
	}
}

// TestEmitPerSiteDirectories runs the same tree through emit: the
// spoofer is blocked, and the site naming is said on stderr.
func TestEmitPerSiteDirectories(t *testing.T) {
	_, files := sitesTree(t)
	code, out, errOut := runInMemory(t, "", sitesArgs(t, []string{"emit", "nftables"}, files)...)
	if code != fail.ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, errOut)
	}
	if !strings.Contains(out, "203.0.113.50") || strings.Contains(out, "79.139.58.98 ") {
		t.Errorf("rules do not block exactly the spoofer:\n%s", out)
	}
	if !strings.Contains(errOut, "share the base name access.log") || !strings.Contains(errOut, "b.example") {
		t.Errorf("stderr does not say how the sites were named:\n%s", errOut)
	}
}

// TestLogsSiteFlag checks --site GLOB=SITE (first match wins, the path as
// given) beside the directory rule, and plain --site SITE for every file.
func TestLogsSiteFlag(t *testing.T) {
	dir, files := sitesTree(t)
	sites := filepath.Join(dir, "sites")
	tests := []struct {
		name       string
		flags      []string
		want       map[string]int64
		violations bool
	}{
		{"glob for one directory", []string{"--site", filepath.Join(sites, "b.example", "*") + "=shop.example"},
			map[string]int64{"a.example": 18, "shop.example": 12}, false},
		{"first match wins", []string{"--site", filepath.Join(sites, "a.example", "access.log*") + "=first.example",
			"--site", filepath.Join(sites, "*", "access.log*") + "=second.example"},
			map[string]int64{"first.example": 18, "second.example": 12}, false},
		{"glob on rotated files only", []string{"--site", filepath.Join(sites, "a.example", "access.log.*") + "=old.example"},
			map[string]int64{"a.example": 12, "old.example": 6, "b.example": 12}, false},
		{"plain site for every file", []string{"--site", "one.example"},
			map[string]int64{"one.example": 30}, true},
		{"glob, then plain site for the rest", []string{"--site", filepath.Join(sites, "a.example", "*") + "=a.test", "--site", "rest.example"},
			map[string]int64{"a.test": 18, "rest.example": 12}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := runInMemory(t, "", sitesArgs(t, []string{"logs", "--format", "json"}, files, tc.flags...)...)
			if code != fail.ExitOK {
				t.Fatalf("exit %d; stderr:\n%s", code, errOut)
			}
			r := sitesReport(t, out)
			if got := sitesPages(r); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("sites and pages = %v, want %v", got, tc.want)
			}
			if got := len(r.Violations) > 0; got != tc.violations {
				t.Errorf("violations %+v, want some: %v", r.Violations, tc.violations)
			}
		})
	}
}

// TestLogsSiteGlobMatchesNothing checks that a --site glob that matches
// no file is said.
func TestLogsSiteGlobMatchesNothing(t *testing.T) {
	_, files := sitesTree(t)
	code, out, errOut := runInMemory(t, "", sitesArgs(t, []string{"logs", "--format", "json"}, files, "--site", "sites/*/access.log=shop.example")...)
	if code != fail.ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, errOut)
	}
	want := "--site sites/*/access.log=shop.example matches none of the files given"
	if r := sitesReport(t, out); !slices.ContainsFunc(r.Warnings, func(w string) bool { return strings.HasPrefix(w, want) }) {
		t.Errorf("warnings %q, want one starting %q", r.Warnings, want)
	}
}

// TestSiteFlagErrors checks that a bad --site value (audit.ParseSites says
// which) is exit 2, said with its hint, before any log is read.
func TestSiteFlagErrors(t *testing.T) {
	good := filepath.Join("..", "testdata", "logs", "combined.log")
	for _, tc := range []struct {
		flags []string
		want  string
	}{
		{[]string{"--site", "a.example", "--site", "b.example"}, "--site given twice for every file (a.example and b.example)"},
		{[]string{"--site", "*.example"}, `--site "*.example" is a glob without a site: a plain --site names the site of every file
lohibot-audit: hint: give GLOB=SITE for the files it matches, such as --site '*.example=shop.example'`},
	} {
		code, _, errOut := runInMemory(t, "", append(append([]string{"logs", "--offline", "--no-cache", "--format", "json"}, tc.flags...), good)...)
		if code != fail.ExitUsage || !strings.Contains(errOut, "lohibot-audit: error: "+tc.want) {
			t.Errorf("%q: exit %d, stderr %q; want exit 2 and %q", tc.flags, code, errOut, tc.want)
		}
	}
}

// TestLogsRobotsUnknownSite checks that --robots SITE=FILE for a site no
// log has is said, and a known site is not.
func TestLogsRobotsUnknownSite(t *testing.T) {
	_, files := sitesTree(t)
	robots := testutil.TempFile(t, "robots.txt", "User-agent: *\nAllow: /\n")
	code, out, errOut := runInMemory(t, "", sitesArgs(t, []string{"logs", "--format", "json"}, files,
		"--robots", "a.example="+robots, "--robots", "c.example="+robots)...)
	if code != fail.ExitOK {
		t.Fatalf("exit %d; stderr:\n%s", code, errOut)
	}
	r := sitesReport(t, out)
	var got []string
	for _, w := range r.Warnings {
		if strings.Contains(w, "--robots") {
			got = append(got, w)
		}
	}
	sort.Strings(got)
	if len(got) != 1 || !strings.Contains(got[0], "c.example") || strings.Contains(got[0], "--robots a.example") ||
		!strings.Contains(got[0], "a.example, b.example") {
		t.Errorf("warnings about --robots: %q; want one, naming c.example and the sites found (a.example, b.example)", got)
	}
	for _, s := range r.Sites {
		if skipped := slices.Contains(s.ChecksSkipped, conduct.KindRobots); skipped != (s.Site == "b.example") {
			t.Errorf("%s: checks skipped %q: want robots skipped for b.example only", s.Site, s.ChecksSkipped)
		}
	}
}
