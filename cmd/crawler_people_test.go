package cmd

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// TestLogsCrawlersPeople writes the report of TestLogsCrawlers (four
// crawlers over a real-looking log) in the formats for people: each
// names every crawler and carries a crawler column, the table fits 80
// columns, and each is its golden file.
func TestLogsCrawlersPeople(t *testing.T) {
	resolver, cache := crawlerTestZone(t), crawlerTestCache(t)
	for _, format := range []string{"table", "markdown", "csv", "html"} {
		t.Run(format, func(t *testing.T) {
			env := &Env{Now: func() time.Time { return fixedNow }, Getenv: func(k string) string {
				if k == "COLUMNS" {
					return "80"
				}
				return ""
			}}
			code, stdout, stderr := identityRun(t, env, "logs", "--format", format, "--resolver", resolver, "--cache-dir", cache, "--site", "example.org",
				"--crawler", "lohisoftbot", "--crawler", "googlebot", "--crawler", "bingbot", "--crawler", "../testdata/crawlers/examplebot.yaml",
				"../testdata/crawlers/access.log")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			golden(t, "crawlers."+format, stdout)
			for _, name := range []string{"lohisoftbot", "googlebot", "bingbot", "examplebot"} {
				if !strings.Contains(stdout, name) {
					t.Errorf("%s names no %s", format, name)
				}
			}
			if format == "table" {
				for i, line := range strings.Split(stdout, "\n") {
					if n := utf8.RuneCountInString(line); n > 80 {
						t.Errorf("line %d is %d wide: %q", i+1, n, line)
					}
				}
			}
		})
	}
}
