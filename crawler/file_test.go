package crawler

import (
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestLoadFileExample(t *testing.T) {
	p, err := LoadFile("testdata/examplebot.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := &Profile{
		Name:        "examplebot",
		Tokens:      []string{"ExampleBot"},
		RobotsToken: "ExampleBot",
		FCrDNS:      []string{"crawl.example.net"},
		IPLists:     []string{"https://example.net/bot/ips.json"},
		BuiltinIPs:  []netip.Prefix{netip.MustParsePrefix("192.0.2.0/28"), netip.MustParsePrefix("192.0.2.10/32")},
		Conduct: Conduct{
			Robots:       true,
			Budget:       &Budget{Pages: 5, Window: time.Hour},
			MinPause:     2 * time.Second,
			Backoff:      &Backoff{Min: time.Minute},
			NoAuthBypass: true,
		},
		Source: "testdata/examplebot.yaml",
	}
	if p.Name != want.Name || !slices.Equal(p.Tokens, want.Tokens) || p.RobotsToken != want.RobotsToken ||
		!slices.Equal(p.FCrDNS, want.FCrDNS) || !slices.Equal(p.IPLists, want.IPLists) ||
		!slices.Equal(p.BuiltinIPs, want.BuiltinIPs) || p.IPv6 != want.IPv6 || p.Source != want.Source {
		t.Errorf("got  %+v\nwant %+v", p, want)
	}
	c := p.Conduct
	if c.Robots != true || c.NoAuthBypass != true || c.MinPause != 2*time.Second ||
		c.Budget == nil || *c.Budget != *want.Conduct.Budget || c.Backoff == nil || *c.Backoff != *want.Conduct.Backoff {
		t.Errorf("conduct = %+v", c)
	}
}

func TestParseFileCategoryContactRobots(t *testing.T) {
	p, err := ParseFile([]byte("name: fetchbot\ncategory: user-triggered\ncontact: bots@fetch.example\ntokens: [FetchBot]\nfcrdns: [crawl.fetch.example]\nconduct:\n  robots: not-promised\n"), "f.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if p.Category != CategoryUserTriggered || p.Contact != "bots@fetch.example" || !p.Conduct.RobotsNotPromised || p.Conduct.Robots {
		t.Errorf("category %q contact %q robots %v not promised %v", p.Category, p.Contact, p.Conduct.Robots, p.Conduct.RobotsNotPromised)
	}
	p, err = ParseFile([]byte("name: x\ntokens: [XBot]\nfcrdns: [x.example]\n"), "x.yaml")
	if err != nil || p.Category != CategoryOther || p.Contact != "" {
		t.Errorf("defaults: %v, category %q contact %q", err, p.Category, p.Contact)
	}
}

func TestParseFileMinimal(t *testing.T) {
	p, err := ParseFile([]byte("name: mini\ntokens: MiniBot\nip_lists: [https://mini.example/ips.json]\n"), "mini.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if p.Conduct.Robots || p.Conduct.Budget != nil || p.Conduct.Backoff != nil || p.Conduct.MinPause != 0 {
		t.Errorf("a profile without conduct promises something: %+v", p.Conduct)
	}
	if p.RobotsToken != "MiniBot" || !slices.Equal(p.Tokens, []string{"MiniBot"}) {
		t.Errorf("tokens %v robots token %q", p.Tokens, p.RobotsToken)
	}
}

func TestParseFileErrors(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		line       int
		want       string
	}{
		{"empty", "", 0, "empty file"},
		{"not a mapping", "- a\n- b\n", 1, "mapping"},
		{"syntax", "name: [a\n", 1, ""},
		{"unknown key", "name: x\ntokens: [XBot]\nfcrdns: [x.example]\nbudget: 20\n", 4, `unknown key "budget"`},
		{"unknown conduct key", "name: x\ntokens: [XBot]\nfcrdns: [x.example]\nconduct:\n  speed: 3\n", 5, "conduct.speed"},
		{"twice", "name: x\nname: y\ntokens: [XBot]\nfcrdns: [x.example]\n", 2, "twice"},
		{"bad name", "name: X Bot\ntokens: [XBot]\nfcrdns: [x.example]\n", 1, "name"},
		{"bad suffix", "name: x\ntokens: [XBot]\nfcrdns:\n  - com\n", 4, "two labels"},
		{"wrong type", "name: x\ntokens: {a: b}\nfcrdns: [x.example]\n", 2, "tokens"},
		{"bad bool", "name: x\ntokens: [XBot]\nfcrdns: [x.example]\nipv6: maybe\n", 4, "true or false"},
		{"bad address", "name: x\ntokens: [XBot]\nbuiltin_ips:\n  - 192.0.2.1\n  - 300.1.1.1\n", 5, "300.1.1.1"},
		{"bad duration", "name: x\ntokens: [XBot]\nfcrdns: [x.example]\nconduct:\n  min_pause: fast\n", 5, "duration"},
		{"budget half", "name: x\ntokens: [XBot]\nfcrdns: [x.example]\nconduct:\n  budget: {pages: 3}\n", 5, "both pages and window"},
		{"budget zero", "name: x\ntokens: [XBot]\nfcrdns: [x.example]\nconduct:\n  budget:\n    pages: -1\n    window: 1h\n", 6, "conduct.budget.pages"},
		{"nothing to verify", "name: x\ntokens: [XBot]\n", 1, "no way to verify"},
		{"bad robots", "name: x\ntokens: [XBot]\nfcrdns: [x.example]\nconduct:\n  robots: sometimes\n", 5, "not-promised"},
		{"bad contact", "name: x\ncontact: nobody\ntokens: [XBot]\nfcrdns: [x.example]\n", 2, "contact"},
		{"bad category", "name: x\ncategory: Search Engine\ntokens: [XBot]\nfcrdns: [x.example]\n", 2, "category"},
		{"public suffix", "name: x\ntokens: [XBot]\nfcrdns:\n  - crawl.example.net\n  - co.uk\n", 5, `fcrdns: "co.uk" is a public suffix`},
		{"private public suffix", "name: x\ntokens: [XBot]\nfcrdns: [github.io]\n", 3, "Public Suffix List"},
		{"cloud zone", "name: x\ntokens: [XBot]\nfcrdns:\n- googleusercontent.com\n", 4, "Google Compute Engine names every customer's VM under bc.googleusercontent.com"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseFile([]byte(tc.yaml), "p.yaml")
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("ParseFile = %v, want a *FileError", err)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("error %v does not wrap ErrInvalid", err)
			}
			if fe.File != "p.yaml" || fe.Line != tc.line {
				t.Errorf("error at %s:%d, want p.yaml:%d (%v)", fe.File, fe.Line, tc.line, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q is not one line", err)
			}
		})
	}
}

func TestLoadFileTooLarge(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(path, []byte("# "+strings.Repeat("x", MaxFileSize)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadFile(path); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("LoadFile of a huge file = %v", err)
	}
	if _, err := LoadFile(filepath.Join(t.TempDir(), "missing.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("LoadFile of a missing file = %v, want ErrNotExist", err)
	}
}

func FuzzParseFile(f *testing.F) {
	seed, _ := os.ReadFile("testdata/examplebot.yaml")
	f.Add(seed)
	f.Add([]byte("name: x\ntokens: [XBot]\nfcrdns: [x.example]\nconduct: {budget: {pages: 1, window: 1s}}\n"))
	f.Add([]byte("name: &a x\ntokens: *a\n"))
	f.Add([]byte("name: x\ncategory: ai-search\ncontact: a@b.example\ntokens: [XBot]\nfcrdns: [co.uk, x.example]\nconduct: {robots: not-promised}\n"))
	f.Add([]byte("name: x\ntokens: [XBot]\nfcrdns:\n  - compute-1.amazonaws.com\n  - googleusercontent.com\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParseFile(data, "fuzz.yaml")
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("multi-line error %q", err)
			}
			return
		}
		// What parses validates, and stays valid when validated again.
		if err := p.Validate(); err != nil {
			t.Errorf("parsed profile does not validate again: %v", err)
		}
		if p.RobotsToken == "" || len(p.Tokens) == 0 {
			t.Errorf("accepted profile without tokens: %+v", p)
		}
		for _, q := range p.BuiltinIPs {
			if q != q.Masked() || q.Addr().Is4In6() {
				t.Errorf("builtin prefix %s not normalised", q)
			}
		}
	})
}
