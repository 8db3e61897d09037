package render_test

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/cmd"
	"github.com/lohisoft/lohibot-audit/render"
)

// TestLogsHTMLHostile runs `logs --format html` on a log whose user
// agents, paths and virtual hosts are markup (the reader takes such a
// host for a malformed line, which the page shows): no tag, attribute or script of
// theirs survives on the page, and each is there to read as text.
func TestLogsHTMLHostile(t *testing.T) {
	hostile := []string{
		`<script>alert(1)</script>`,
		`"><img src=x onerror=alert(2)>`,
		`'><svg onload=alert(3)>`,
		`</title><style>*{display:none}</style>`,
		`javascript:alert(4)`,
		"\x1b]0;owned\x07",
	}
	var log strings.Builder
	for i, h := range hostile {
		when := time.Date(2026, 12, 1, 7, 0, i, 0, time.UTC).Format("02/Jan/2006:15:04:05 -0700")
		for _, client := range []string{"79.139.58.98", "203.0.113.9"} {
			for _, host := range []string{"www.example.org:443", h + ".example:443"} {
				fmt.Fprintf(&log, "%s %s - - [%s] \"GET /p%d/%s HTTP/1.1\" 200 10 \"-\" \"LohiSoftBot/1.0 %s\"\n",
					host, client, when, i, strings.ReplaceAll(h, " ", "%20"), strings.ReplaceAll(h, `"`, `\"`))
			}
		}
	}
	log.WriteString("not a log line " + hostile[0] + "\n")
	var out, errb bytes.Buffer
	env := &cmd.Env{
		Stdin: strings.NewReader(log.String()), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string {
			if k == "HOME" || k == "XDG_CACHE_HOME" || k == "XDG_CONFIG_HOME" {
				return t.TempDir()
			}
			return ""
		},
		Now: func() time.Time { return time.Date(2026, 12, 2, 12, 0, 0, 0, time.UTC) },
	}
	code := cmd.Run(context.Background(), env, []string{"logs", "--format", "html", "--offline", "--no-cache", "--log-format", "vhost_combined", "-"})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	page := out.Bytes()
	for _, p := range render.StructureProblems(page) {
		t.Error(p)
	}
	s := string(page)
	for _, h := range hostile[:4] {
		if !strings.Contains(s, html.EscapeString(h)) {
			t.Errorf("%q is not on the page as text", h)
		}
	}
	if !strings.Contains(s, html.EscapeString(`bad virtual host "<script>alert(1)</script>.example:443"`)) {
		t.Error("a hostile virtual host is not on the page as text")
	}
	if !strings.Contains(s, "79.139.58.98") || !strings.Contains(s, "www.example.org") {
		t.Error("the claimed hits are not on the page")
	}
	if !strings.Contains(s, `\x1b]0;owned\x07`) {
		t.Error("the terminal escape is not shown written out")
	}
	for _, tag := range []string{"<script", "<img", "<svg onload", "<style>*", "<title><"} {
		if strings.Contains(s, tag) {
			t.Errorf("%s from the log reached the page", tag)
		}
	}
}
