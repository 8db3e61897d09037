package cmd

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot-audit/internal/fail"
)

// emitCrawlersArgs audit Googlebot and a crawler of a profile file in a
// real-looking log, with a loopback DNS zone and cached lists.
func emitCrawlersArgs(t *testing.T) []string {
	resolver, cache := crawlerTestZone(t), crawlerTestCache(t)
	return []string{"--resolver", resolver, "--cache-dir", cache, "--site", "example.org",
		"--crawler", "googlebot", "--crawler", "../testdata/crawlers/examplebot.yaml"}
}

// TestEmitCrawlersEndToEnd: a custom YAML crawler and Googlebot, for all
// three targets, straight from logs and from a report of
// 'logs --crawler ... --format json', the report read with and without
// --crawler. Straight from logs and from the report the rules are the
// same but for the header's inputs.
func TestEmitCrawlersEndToEnd(t *testing.T) {
	args := emitCrawlersArgs(t)
	const log = "../testdata/crawlers/access.log"
	code, report, stderr := runInMemory(t, "", append(append([]string{"logs", "--format", "json"}, args...), log)...)
	if code != 0 {
		t.Fatalf("logs: exit %d: %s", code, stderr)
	}
	dir := t.TempDir()
	reportFile := filepath.Join(dir, "r.json")
	if err := os.WriteFile(reportFile, []byte(report), 0o644); err != nil {
		t.Fatal(err)
	}
	// The report's path and the lists' provenance aside, the rules from
	// the report are those from logs.
	norm := func(s string) string {
		s = strings.ReplaceAll(s, `"report `+reportFile+`"`, `INPUTS`)
		s = strings.ReplaceAll(s, `\"report `+reportFile+`\"`, `INPUTS`)
		s = strings.ReplaceAll(s, `"`+log+`"`, `INPUTS`)
		s = strings.ReplaceAll(s, `\"`+log+`\"`, `INPUTS`)
		return s
	}
	for _, target := range []struct{ name, ext string }{{"nftables", "nft"}, {"cloudflare", "json"}, {"modsecurity", "conf"}} {
		t.Run(target.name, func(t *testing.T) {
			code, fromLogs, stderr := runInMemory(t, "", append(append([]string{"emit", target.name}, args...), log)...)
			if code != 0 {
				t.Fatalf("from logs: exit %d: %s", code, stderr)
			}
			golden(t, "emit-crawlers."+target.ext, norm(fromLogs))
			withCrawler := append([]string{"emit", target.name, "--report", reportFile}, args[:4]...)
			withCrawler = append(withCrawler, args[6:]...)
			code, fromReport, stderr := runInMemory(t, "", withCrawler...)
			if code != 0 {
				t.Fatalf("from the report: exit %d: %s", code, stderr)
			}
			if norm(fromReport) != norm(fromLogs) {
				t.Errorf("from the report:\n%s\nfrom logs:\n%s", fromReport, fromLogs)
			}
			for _, want := range []string{"203.0.113.50", "203.0.113.66", "googlebot", "examplebot"} {
				if !strings.Contains(fromLogs, want) {
					t.Errorf("rules lack %s:\n%s", want, fromLogs)
				}
			}
			if target.name != "nftables" {
				for _, want := range []string{"googlebot", "examplebot", "66.249.64.0/27", "198.51.100.77", "192.0.2.0/28"} {
					if !strings.Contains(fromLogs, want) {
						t.Errorf("token rules lack %s:\n%s", want, fromLogs)
					}
				}
			}
			// Without --crawler the report's crawlers are taken; the
			// custom one is known by name only.
			code, plain, stderr := runInMemory(t, "", "emit", target.name, "--offline", "--cache-dir", args[3], "--report", reportFile)
			switch target.name {
			case "nftables":
				// Its list is none: the report's addresses of it alone.
				plain = strings.Replace(plain, "examplebot: none", "examplebot: built-in", 1)
				if code != 0 || norm(plain) != norm(fromLogs) {
					t.Errorf("nftables --report without --crawler: exit %d: %s\n%s", code, stderr, plain)
				}
				if !strings.Contains(stderr, "crawler examplebot is not built in") {
					t.Errorf("no warning about examplebot's lists: %s", stderr)
				}
			default:
				if code != fail.ExitUsage || !strings.Contains(stderr, "examplebot match its User-Agent tokens, and none is known") || !strings.Contains(stderr, "--crawler FILE") {
					t.Errorf("%s --report without the profile: exit %d: %s", target.name, code, stderr)
				}
			}
		})
	}
	// --crawler chooses among the report's crawlers.
	code, only, stderr := runInMemory(t, "", "emit", "modsecurity", "--offline", "--cache-dir", args[3], "--report", reportFile, "--crawler", "googlebot")
	if code != 0 || strings.Contains(only, "examplebot") || !strings.Contains(only, "203.0.113.50") || strings.Contains(only, "203.0.113.66") {
		t.Errorf("--crawler googlebot: exit %d: %s\n%s", code, stderr, only)
	}
	if !strings.Contains(stderr, `addresses of crawler "examplebot" are left out`) {
		t.Errorf("no word of examplebot's addresses left out: %s", stderr)
	}
	code, _, stderr = runInMemory(t, "", "emit", "nftables", "--offline", "--report", reportFile, "--crawler", "bingbot")
	if code != fail.ExitUsage || !strings.Contains(stderr, "has no crawler bingbot: it audits googlebot, examplebot") {
		t.Errorf("--crawler bingbot: exit %d: %s", code, stderr)
	}
	_, one, _ := runInMemory(t, "", "logs", "--format", "json", "--offline", log)
	oneFile := filepath.Join(dir, "one.json")
	if err := os.WriteFile(oneFile, []byte(one), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr = runInMemory(t, "", "emit", "nftables", "--offline", "--report", oneFile, "--crawler", "googlebot")
	if code != fail.ExitUsage || !strings.Contains(stderr, "audits one crawler") {
		t.Errorf("--crawler with a one-crawler report: exit %d: %s", code, stderr)
	}
}
