package robots

import (
	"errors"
	"slices"
	"testing"
)

func TestSplitValue(t *testing.T) {
	tests := []struct{ in, site, src string }{
		{"robots.txt", "", "robots.txt"},
		{"/etc/robots.txt", "", "/etc/robots.txt"},
		{"https://example.com/robots.txt?a=b", "", "https://example.com/robots.txt?a=b"},
		{"HTTP://example.com/x=y", "", "HTTP://example.com/x=y"},
		{"example.com=robots.txt", "example.com", "robots.txt"},
		{"Example.COM:443=https://example.com/robots.txt", "example.com", "https://example.com/robots.txt"},
		{"[::1]:8080=r.txt", "::1", "r.txt"},
		{"./a=b.txt", "", "./a=b.txt"},
		{"dir/a=b.txt", "", "dir/a=b.txt"},
		{"=robots.txt", "", "=robots.txt"},
		{"site=", "site", ""},
	}
	for _, tc := range tests {
		site, src := SplitValue(tc.in)
		if site != tc.site || src != tc.src {
			t.Errorf("SplitValue(%q) = %q, %q; want %q, %q", tc.in, site, src, tc.site, tc.src)
		}
	}
}

// testLoader serves sources from memory and counts the loads of each.
type testLoader struct {
	files map[string]string // source → robots.txt; a missing one is unavailable
	loads map[string]int
}

func (l *testLoader) load(src string) (*Source, error) {
	l.loads[src]++
	if src == "broken" {
		return nil, errors.New("cannot read broken")
	}
	data, ok := l.files[src]
	if !ok {
		return &Source{Name: src, Unavailable: "answered 503"}, nil
	}
	return ParseSource(src, src, []byte(data)), nil
}

func TestLoadSet(t *testing.T) {
	l := &testLoader{
		files: map[string]string{
			"blocked.txt": "User-agent: LohiSoftBot\nDisallow: /\n",
			"partial.txt": "User-agent: LohiSoftBot\nDisallow: /private/\nDissallow: /typo\n",
		},
		loads: map[string]int{},
	}
	set, err := LoadSet([]string{
		"partial.txt",
		"Blog.Example:8443=blocked.txt",
		"shop.example=https://down.example/robots.txt",
		"api.example=https://down.example/robots.txt",
	}, l.load)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		site    string
		source  string
		allowed bool // for LohiSoftBot on /
	}{
		{"blog.example", "blocked.txt", false},
		{"BLOG.example", "blocked.txt", false},
		{"blog.example.", "blocked.txt", false},
		{"other.example", "partial.txt", true},
		{"", "partial.txt", true},
	}
	for _, tc := range tests {
		src := set.Source(tc.site)
		if src == nil || src.Name != tc.source {
			t.Errorf("Source(%q) = %+v, want %s", tc.site, src, tc.source)
			continue
		}
		if d := set.For(tc.site).Decide(testToken, "/"); d.Allowed != tc.allowed {
			t.Errorf("For(%q).Decide(/) = %+v, want allowed %v", tc.site, d, tc.allowed)
		}
	}
	// A source unavailable now says nothing of what the crawler found: its
	// sites have no robots.txt (the check is skipped), and it is said.
	for _, site := range []string{"shop.example", "api.example"} {
		if src := set.Source(site); src == nil || src.Unavailable != "answered 503" {
			t.Errorf("Source(%q) = %+v, want the unavailable URL", site, src)
		}
		if r := set.For(site); r != nil {
			t.Errorf("For(%q) = %v, want nil: the robots check is skipped", site, r)
		}
	}
	if n := l.loads["https://down.example/robots.txt"]; n != 1 {
		t.Errorf("the shared source was loaded %d times, want once", n)
	}
	want := []string{
		"robots.txt https://down.example/robots.txt answered 503 now: the robots check is skipped for sites api.example, shop.example (RFC 9309's disallow-all binds the crawler when it fetched, not this audit)",
		`robots.txt partial.txt: line 3: "Dissallow" is a misspelling of disallow; read as disallow as Google does, but a strict RFC 9309 parser ignores it`,
	}
	if got := set.Warnings(); !slices.Equal(got, want) {
		t.Errorf("Warnings() =\n%q\nwant\n%q", got, want)
	}
	if got := set.UnknownSites([]string{"blog.example", "shop.example"}); !slices.Equal(got, []string{"api.example"}) {
		t.Errorf("UnknownSites = %q, want [api.example]", got)
	}

	// Only per-site files: other sites have none.
	set, err = LoadSet([]string{"blog.example=blocked.txt"}, l.load)
	if err != nil {
		t.Fatal(err)
	}
	if r := set.For("other.example"); r != nil {
		t.Errorf("For(other.example) = %v, want nil", r)
	}
	var none *Set
	if none.For("x") != nil || none.Warnings() != nil || none.UnknownSites([]string{"a"}) != nil {
		t.Error("a nil set must have no robots.txt, no warnings and no unknown sites")
	}
}

func TestSetSitesOf(t *testing.T) {
	l := &testLoader{files: map[string]string{"a.txt": ""}, loads: map[string]int{}}
	tests := []struct {
		values []string
		want   string
	}{
		{[]string{"down"}, "every site"},
		{[]string{"down", "b.example=a.txt", "a.example=a.txt"}, "every site but a.example, b.example"},
		{[]string{"a.example=down"}, "site a.example"},
		{[]string{"b.example=down", "a.example=down"}, "sites a.example, b.example"},
	}
	for _, tc := range tests {
		set, err := LoadSet(tc.values, l.load)
		if err != nil {
			t.Fatal(err)
		}
		w := set.Warnings()
		want := "robots.txt down answered 503 now: the robots check is skipped for " + tc.want + " ("
		if len(w) != 1 || len(w[0]) < len(want) || w[0][:len(want)] != want {
			t.Errorf("%q: Warnings() = %q, want %q...", tc.values, w, want)
		}
	}
}

func TestLoadSetErrors(t *testing.T) {
	l := &testLoader{files: map[string]string{"a.txt": ""}, loads: map[string]int{}}
	tests := []struct {
		name   string
		values []string
		want   error
	}{
		{"two for every site", []string{"a.txt", "b.txt"}, &DuplicateError{First: "a.txt", Second: "b.txt"}},
		{"two for one site", []string{"a.example=a.txt", "A.example:80=b.txt"}, &DuplicateError{Site: "a.example", First: "a.txt", Second: "b.txt"}},
		{"empty source", []string{"a.example="}, &EmptySourceError{Value: "a.example="}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadSet(tc.values, l.load)
			if err == nil || err.Error() != tc.want.Error() {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
	_, err := LoadSet([]string{"a.txt", "x.example=broken"}, l.load)
	if err == nil || err.Error() != "cannot read broken" {
		t.Errorf("err = %v, want the loader's error as it is", err)
	}
}
