package audit

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestChooseSites checks the naming rule on paths alone.
func TestChooseSites(t *testing.T) {
	tests := []struct {
		name  string
		files []string
		want  []string
	}{
		{"one file", []string{"/var/log/nginx/access.log"}, []string{"access.log"}},
		{"rotated siblings stay one site", []string{"/l/access.log", "/l/access.log.1", "/l/access.log.2.gz", "/l/access.log-20261201"},
			[]string{"access.log", "access.log", "access.log", "access.log"}},
		{"different base names", []string{"/l/shop.log", "/m/blog.log.1"}, []string{"shop.log", "blog.log"}},
		{"same base name, two directories", []string{"/s/A.example/access.log", "/s/b.example/access.log.1.gz", "/s/A.example/access.log.1"},
			[]string{"a.example", "b.example", "a.example"}},
		{"directory names clash too", []string{"/x/logs/access.log", "/y/logs/access.log", "/z/other/access.log"},
			[]string{"x/logs", "y/logs", "other"}},
		{"stdin", []string{"-", "/l/access.log"}, []string{"stdin", "access.log"}},
		{"same directory written two ways", []string{"/l/access.log", "/l/./access.log.1"}, []string{"access.log", "access.log"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := Sites{}.Choose(tc.files)
			var names []string
			for _, c := range got {
				names = append(names, c.Site)
			}
			if !reflect.DeepEqual(names, tc.want) {
				t.Errorf("sites %q, want %q", names, tc.want)
			}
		})
	}
}

// TestSitesRulesAndWarnings: a rule wins over the default, the default
// over the path; a rule that matches nothing is said, and so is a site
// named after its directory, unless the input logs its virtual host.
func TestSitesRulesAndWarnings(t *testing.T) {
	s := Sites{Rules: []SiteRule{{Glob: "/s/shop/*", Site: "shop.example"}, {Glob: "/nowhere/*", Site: "x.example"}}, Default: "www.example"}
	got := s.Choose([]string{"/s/shop/access.log", "/s/blog/access.log", "-"})
	var names []string
	for _, c := range got {
		names = append(names, c.Site)
	}
	if want := []string{"shop.example", "www.example", "www.example"}; !slices.Equal(names, want) {
		t.Errorf("sites %q, want %q", names, want)
	}
	if u := s.Unmatched([]string{"/s/shop/access.log"}); len(u) != 1 || !strings.Contains(u[0], "--site /nowhere/*=x.example matches none") {
		t.Errorf("unmatched %q, want the /nowhere/* rule", u)
	}
	files := []string{"/a/x.example/access.log", "/a/y.example/access.log"}
	choices := Sites{}.Choose(files)
	w := SiteWarnings(choices, []InputReport{{}, {}})
	if len(w) != 1 || !strings.Contains(w[0], "share the base name access.log") || !strings.Contains(w[0], "/a/y.example/access.log (y.example)") {
		t.Errorf("warnings %q, want one naming both files and their sites", w)
	}
	if w := SiteWarnings(choices, []InputReport{{HostLogged: true}, {HostLogged: true}}); len(w) != 0 {
		t.Errorf("inputs that log their virtual host: warnings %q, want none", w)
	}
}

// SiteOf gives each file the site Choose gives it, and "" to any other.
func TestSiteOf(t *testing.T) {
	files := []string{"sites/a.example/access.log", "sites/b.example/access.log", "-"}
	of := Sites{Rules: []SiteRule{{Glob: "sites/b.*/*", Site: "shop.example"}}}.SiteOf(files)
	for file, want := range map[string]string{
		"sites/a.example/access.log": "a.example",
		"sites/b.example/access.log": "shop.example",
		"-":                          "stdin",
		"other.log":                  "",
	} {
		if got := of(file); got != want {
			t.Errorf("SiteOf(%q) = %q, want %q", file, got, want)
		}
	}
}
