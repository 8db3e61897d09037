package watch

import (
	"context"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot-audit/crawler"
	"github.com/lohisoft/lohibot-audit/internal/fail"
	"github.com/lohisoft/lohibot-audit/robots"
	"github.com/lohisoft/lohibot-audit/verify"
)

// groundsSources are Sources of a robots.txt file and an offline identity
// of the profiles asked for, which warns once.
func groundsSources(t *testing.T, robotsText string, never ...string) (Sources, *int) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "robots.txt")
	if err := os.WriteFile(path, []byte(robotsText), 0o600); err != nil {
		t.Fatal(err)
	}
	loads := 0
	return Sources{
		NeverBlock:   never,
		Robots:       []string{path},
		RobotsLoader: &robots.Loader{},
		Identity: func(_ context.Context, profiles []*crawler.Profile) (*verify.Identity, error) {
			loads++
			id := verify.NewIdentity(&verify.Verifier{Offline: true}, profiles, nil)
			id.Warn("the IP list could not be fetched")
			return id, nil
		},
	}, &loads
}

// Load gives the never-block prefixes, the robots.txt in force and the
// identity of the profiles given; its warnings are robots.txt's, then
// the identity's.
func TestSourcesLoad(t *testing.T) {
	src, loads := groundsSources(t, "User-agent: *\nDisallow: /private\nDisallow: nothing\n", "192.0.2.0/24,2001:db8::7")
	lohi, _ := crawler.Builtin("lohisoftbot")
	g, err := src.Load(context.Background(), []*crawler.Profile{lohi})
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24"), netip.MustParsePrefix("2001:db8::7/128")}
	if !slices.Equal(g.NeverBlock, want) {
		t.Errorf("never-block %v, want %v", g.NeverBlock, want)
	}
	if *loads != 1 || len(g.Identity.Profiles) != 1 || g.Identity.Profiles[0] != lohi {
		t.Errorf("identity loaded %d times, of %v; want once, of the profile given", *loads, g.Identity.Profiles)
	}
	if rb := g.Robots.For("any.example"); rb == nil || rb.Decide("lohisoftbot", "/private").Allowed {
		t.Errorf("robots.txt in force for any.example: %v, want the file's (/private disallowed)", rb)
	}
	w := g.Warnings()
	if len(w) < 2 || !strings.Contains(w[0], "robots.txt") || w[len(w)-1] != "the IP list could not be fetched" {
		t.Errorf("warnings %q, want robots.txt's first, then the identity's", w)
	}
}

// A --never-block value that is neither an address nor a CIDR is a usage
// error, before anything is read.
func TestSourcesLoadRefusesNeverBlock(t *testing.T) {
	src, loads := groundsSources(t, "User-agent: *\nAllow: /\n", "192.0.2.0/33")
	src.Robots = []string{"/nonexistent/robots.txt"}
	_, err := src.Load(context.Background(), nil)
	if fail.KindOf(err) != fail.Usage || !strings.Contains(err.Error(), `--never-block "192.0.2.0/33"`) {
		t.Errorf("Load = %v (kind %v), want the never-block usage error", err, fail.KindOf(err))
	}
	if *loads != 0 {
		t.Error("the identity was loaded after a bad --never-block")
	}
}

// Check refuses a bad --never-block or --robots value without reading
// anything; Load refuses what Check refuses.
func TestSourcesCheck(t *testing.T) {
	for _, tc := range []struct {
		never, robots []string
		want          string
	}{
		{nil, nil, ""},
		{[]string{"192.0.2.0/24", "2001:db8::1"}, []string{"/nonexistent/robots.txt"}, ""},
		{[]string{"192.0.2.0/33"}, nil, `--never-block "192.0.2.0/33"`},
		{nil, []string{"a/robots.txt", "b/robots.txt"}, "--robots given twice"},
		{nil, []string{"example.com="}, "names no robots.txt"},
	} {
		src, loads := groundsSources(t, "")
		src.NeverBlock, src.Robots = tc.never, tc.robots
		err := src.Check()
		if tc.want == "" {
			if err != nil {
				t.Errorf("Check(%q, %q) = %v, want nil", tc.never, tc.robots, err)
			}
			continue
		}
		if err == nil || fail.KindOf(err) != fail.Usage || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("Check(%q, %q) = %v (kind %v), want a usage error naming %s", tc.never, tc.robots, err, fail.KindOf(err), tc.want)
		}
		if _, lerr := src.Load(context.Background(), nil); lerr == nil || lerr.Error() != err.Error() || *loads != 0 {
			t.Errorf("Load = %v with %d identity loads, want Check's error and none", lerr, *loads)
		}
	}
}

// A robots.txt file that cannot be read ends Load before the identity
// is loaded.
func TestSourcesLoadRobotsError(t *testing.T) {
	src, loads := groundsSources(t, "")
	src.Robots = []string{filepath.Join(t.TempDir(), "missing.txt")}
	if _, err := src.Load(context.Background(), nil); err == nil || *loads != 0 {
		t.Errorf("Load = %v with %d identity loads, want robots.txt's error and none", err, *loads)
	}
}

// The identity's error is Load's.
func TestSourcesLoadIdentityError(t *testing.T) {
	src, _ := groundsSources(t, "User-agent: *\nAllow: /\n")
	bad := errors.New("cannot read --ip-list list.json")
	src.Identity = func(context.Context, []*crawler.Profile) (*verify.Identity, error) { return nil, bad }
	if _, err := src.Load(context.Background(), nil); !errors.Is(err, bad) {
		t.Errorf("Load = %v, want the identity's error", err)
	}
}
