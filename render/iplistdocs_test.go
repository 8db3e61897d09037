package render

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/verify"
)

// TestNewIPListDocs: one crawler's list is its own document, several are
// a list of them, named only when the crawlers are.
func TestNewIPListDocs(t *testing.T) {
	now := time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)
	var lists []*verify.Lists
	for _, name := range []string{"googlebot", "gptbot"} {
		p, _ := crawler.Builtin(name)
		lists = append(lists, &verify.Lists{List: verify.BuiltinList(p)})
	}
	if d, ok := NewIPListDocs(lists[:1], nil, now).(*IPListDoc); !ok || d.out.Crawler != "" {
		t.Errorf("one crawler, not named: %#v, want its document, unnamed", d)
	}
	docs, ok := NewIPListDocs(lists, []string{"googlebot", "gptbot"}, now).(IPListDocs)
	if !ok || len(docs) != 2 {
		t.Fatalf("two crawlers: %#v, want IPListDocs", docs)
	}
	b, err := json.Marshal(docs.Data())
	if err != nil || !strings.Contains(string(b), `"crawler":"googlebot"`) || !strings.Contains(string(b), `"crawler":"gptbot"`) {
		t.Errorf("two crawlers' data %s (%v), want each named", b, err)
	}
}
