package verify

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/internal/fail"
)

// TestUpdateEach: each crawler's lists are fetched in turn and said, a
// line per list fetched, named; the first list that cannot be had is the
// error, the others are warnings.
func TestUpdateEach(t *testing.T) {
	var profiles []*crawler.Profile
	for _, name := range []string{"googlebot", "gptbot", "bingbot"} {
		p, ok := crawler.Builtin(name)
		if !ok {
			t.Fatalf("no built-in %s", name)
		}
		profiles = append(profiles, p)
	}
	client, _ := operatorServer(t, map[string]string{profiles[0].IPLists[0]: operatorLayout("66.249.64.0/27")}) // the others: 404
	now := time.Date(2026, 12, 3, 6, 0, 0, 0, time.UTC)
	ld := &ListLoader{Fetcher: &IPListFetcher{Client: client}, Mode: ListFetchNow, Now: func() time.Time { return now }}
	u, err := ld.UpdateEach(context.Background(), profiles, "", true)
	if err != nil {
		t.Fatal(err)
	}
	if len(u.Lines) != 1 || u.Lines[0] != "googlebot: 200: "+profiles[0].IPLists[0]+", 1 prefix; not cached (--no-cache)" {
		t.Errorf("lines %q, want one for googlebot's list", u.Lines)
	}
	if fail.KindOf(u.Failed) != fail.Incomplete || !strings.HasPrefix(u.Failed.Error(), "gptbot: cannot fetch: ") {
		t.Errorf("failed %v, want gptbot's list, an input not had whole", u.Failed)
	}
	if len(u.Warnings) != 1 || !strings.HasPrefix(u.Warnings[0], "bingbot: cannot fetch: ") {
		t.Errorf("warnings %q, want bingbot's list that could not be had", u.Warnings)
	}

	// Lists fetched after these add their lines; their failure is a
	// warning after gptbot's, else the error.
	u.Add([]string{"cdn fastly: 200: https://cdn.example/fastly, 2 prefixes; cached"}, errors.New("cdn cloudflare: cannot fetch"))
	if len(u.Lines) != 2 || u.Lines[1] != "cdn fastly: 200: https://cdn.example/fastly, 2 prefixes; cached" ||
		len(u.Warnings) != 2 || u.Warnings[1] != "cdn cloudflare: cannot fetch" || !strings.HasPrefix(u.Failed.Error(), "gptbot: ") {
		t.Errorf("after Add: %+v", u)
	}
	var none ListsUpdate
	none.Add(nil, errors.New("cdn cloudflare: cannot fetch"))
	if fail.KindOf(none.Failed) != fail.Incomplete || none.Failed.Error() != "cdn cloudflare: cannot fetch" || len(none.Warnings) != 0 {
		t.Errorf("a failure when none came before: %+v, want it the error, an input not had whole", none)
	}

	// Not named: no prefix.
	u, err = ld.UpdateEach(context.Background(), profiles[:1], "", false)
	if err != nil || len(u.Lines) != 1 || !strings.HasPrefix(u.Lines[0], "200: ") || u.Failed != nil {
		t.Errorf("one crawler, not named: %+v, %v", u, err)
	}

	// A list file that cannot be read stops it, as a usage error.
	_, err = ld.UpdateEach(context.Background(), profiles[:1], filepath.Join(t.TempDir(), "missing.json"), false)
	if fail.KindOf(err) != fail.Usage || !strings.HasPrefix(err.Error(), "cannot read --ip-list ") {
		t.Errorf("a missing list file: %v, want a usage error", err)
	}
}

// TestLoadEach: each crawler's list in force, in order; a list file that
// cannot be read stops it, with the lists loaded before it.
func TestLoadEach(t *testing.T) {
	var profiles []*crawler.Profile
	for _, name := range []string{"googlebot", "gptbot"} {
		p, _ := crawler.Builtin(name)
		profiles = append(profiles, p)
	}
	ld := &ListLoader{Mode: ListNoFetch, Now: time.Now}
	lists, err := ld.LoadEach(context.Background(), profiles, "")
	if err != nil || len(lists) != 2 || lists[0].List == nil || lists[1].List == nil {
		t.Fatalf("LoadEach = %v, %v; want both crawlers' lists", lists, err)
	}
	lists, err = ld.LoadEach(context.Background(), profiles[:1], t.TempDir())
	if len(lists) != 0 || fail.KindOf(err) != fail.Usage || !strings.HasSuffix(err.Error(), ": it is a directory") {
		t.Errorf("an --ip-list that is a directory: %v, %v", lists, err)
	}
}
