package emit

import (
	"slices"
	"testing"

	"github.com/lohisoft/lohibot-audit/audit"
	"github.com/lohisoft/lohibot-audit/verify"
)

// TestAddAudit: the rules' sources name the logs ("-" and none are
// stdin), the report's list source and spoofers come along, and without
// an identity the crawlers are left as they were.
func TestAddAudit(t *testing.T) {
	rep := &audit.Report{Tool: "lohibot-audit"}
	rep.Summary.IPListSource = "built-in"
	rep.IPs = []audit.IPReport{{IP: "203.0.113.9", Verdict: verify.Spoofed}}
	for _, tc := range []struct {
		files, want []string
	}{
		{nil, []string{"stdin"}},
		{[]string{"a.log", "-"}, []string{"a.log", "stdin"}},
	} {
		in := Input{Crawlers: []CrawlerInput{{Name: "x"}}}
		in.AddAudit(rep, nil, false, tc.files)
		if !slices.Equal(in.Sources, tc.want) || in.IPListSource != "built-in" {
			t.Errorf("%v: sources %q, list source %q", tc.files, in.Sources, in.IPListSource)
		}
		if len(in.Crawlers) != 1 || len(in.Crawlers[0].Spoofed) != 1 {
			t.Errorf("%v: crawlers %+v", tc.files, in.Crawlers)
		}
	}
}
