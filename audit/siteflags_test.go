package audit

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/fail"
)

// FuzzParseSites checks that --site values never panic the parser and
// that every rule it accepts has a valid glob and a site fit for a log
// record.
func FuzzParseSites(f *testing.F) {
	for _, s := range []string{"a.example", "/var/log/*/access.log=a.example", "=x", "a=", "[=x", "x=a=b", "a b", "A.Example:443"} {
		f.Add(s, "b.example")
	}
	f.Fuzz(func(t *testing.T, a, b string) {
		sites, err := ParseSites([]string{a, b})
		rules, plain := sites.Rules, sites.Default
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q is not one line", err)
			}
			return
		}
		for _, r := range rules {
			if _, err := filepath.Match(r.Glob, "x"); err != nil {
				t.Errorf("rule %+v: bad glob accepted", r)
			}
			if r.Site == "" || r.Site != strings.ToLower(r.Site) || strings.ContainsAny(r.Site, "/= \t\n") {
				t.Errorf("rule %+v: site unfit for a log record", r)
			}
		}
		if plain != "" && plain != strings.ToLower(plain) {
			t.Errorf("plain site %q is not lower case", plain)
		}
	})
}

// TestParseSitesErrors checks the words of each --site value that names
// no site rule, its hint, and that it is a usage error.
func TestParseSitesErrors(t *testing.T) {
	for _, tc := range []struct {
		values     []string
		want, hint string
	}{
		{[]string{"=a.example"}, `--site "=a.example": the glob before "=" is empty; give GLOB=SITE, such as '/var/log/sites/shop/*=shop.example'`, ""},
		{[]string{"logs/*="}, `--site "logs/*=": no site after "="; give GLOB=SITE, such as '/var/log/sites/shop/*=shop.example'`, ""},
		{[]string{"logs/[=a.example"}, `--site "logs/[=a.example": "logs/[" is not a valid glob (syntax error in pattern)`, ""},
		{[]string{"a.example", "b.example"}, "--site given twice for every file (a.example and b.example): give GLOB=SITE to name the site of some files", ""},
		{[]string{"a b"}, `--site "a b": a site is a host name such as www.example.org`, ""},
		{[]string{"logs/*=shop*"}, `--site "logs/*=shop*": a site is a host name such as www.example.org`, ""},
		// A glob without "=SITE" is not taken for the site's name.
		{[]string{"*.example"}, `--site "*.example" is a glob without a site: a plain --site names the site of every file`,
			"give GLOB=SITE for the files it matches, such as --site '*.example=shop.example'"},
		{[]string{"logs/access.log.?"}, `--site "logs/access.log.?" is a glob without a site: a plain --site names the site of every file`,
			"give GLOB=SITE for the files it matches, such as --site 'logs/access.log.?=shop.example'"},
		{[]string{"logs/[ab].log"}, `--site "logs/[ab].log" is a glob without a site: a plain --site names the site of every file`,
			"give GLOB=SITE for the files it matches, such as --site 'logs/[ab].log=shop.example'"},
	} {
		_, err := ParseSites(tc.values)
		if err == nil || err.Error() != tc.want {
			t.Errorf("%q: error %v, want %q", tc.values, err, tc.want)
			continue
		}
		if fail.KindOf(err) != fail.Usage || fail.HintOf(err) != tc.hint {
			t.Errorf("%q: kind %d, hint %q; want a usage error and hint %q", tc.values, fail.KindOf(err), fail.HintOf(err), tc.hint)
		}
	}
	// An IPv6 address in brackets is a site, not a glob.
	if sites, err := ParseSites([]string{"[2001:db8::1]"}); err != nil || sites.Default == "" {
		t.Errorf("[2001:db8::1]: %+v, %v; want a plain site", sites, err)
	}
}

func TestCheckDurations(t *testing.T) {
	for _, tc := range []struct {
		grace, skew time.Duration
		want        string
	}{
		{0, 0, ""},
		{48 * time.Hour, time.Second, ""},
		{-time.Hour, time.Second, "--opt-out-grace -1h0m0s: give a duration of 0 or more, such as 48h"},
		{time.Hour, -time.Second, "--clock-skew -1s: give a duration of 0 or more, such as 1s"},
		{-time.Hour, -time.Second, "--opt-out-grace -1h0m0s: give a duration of 0 or more, such as 48h"},
	} {
		err := CheckDurations(tc.grace, tc.skew)
		if tc.want == "" {
			if err != nil {
				t.Errorf("CheckDurations(%s, %s) = %v, want nil", tc.grace, tc.skew, err)
			}
			continue
		}
		if err == nil || err.Error() != tc.want || fail.KindOf(err) != fail.Usage {
			t.Errorf("CheckDurations(%s, %s) = %v, want the usage error %q", tc.grace, tc.skew, err, tc.want)
		}
	}
}

func TestCheckSnapshotArgs(t *testing.T) {
	for _, tc := range []struct {
		files []string
		msg   string
	}{
		{[]string{"a.snap", "b.snap"}, ""},
		{nil, "no snapshots given"},
		{[]string{"a.snap", "-"}, "merge reads snapshots from files, not from standard input: save it to a file first"},
	} {
		err := CheckSnapshotArgs(tc.files)
		if tc.msg == "" {
			if err != nil {
				t.Errorf("%q: %v, want nil", tc.files, err)
			}
			continue
		}
		if err == nil || err.Error() != tc.msg || fail.KindOf(err) != fail.Usage {
			t.Errorf("%q: %v, want the usage error %q", tc.files, err, tc.msg)
		}
	}
	if hint := fail.HintOf(CheckSnapshotArgs(nil)); !strings.Contains(hint, "logs --snapshot FILE") {
		t.Errorf("no snapshots: hint %q, want it to name logs --snapshot", hint)
	}
}

func TestSnapshotServer(t *testing.T) {
	host := func(name string, err error) func() (string, error) {
		return func() (string, error) { return name, err }
	}
	for _, tc := range []struct {
		given    string
		hostname func() (string, error)
		want     string
		msg      string
	}{
		{"web-1", nil, "web-1", ""},
		{"", host("web-2", nil), "web-2", ""},
		{"", host("", errors.New("uname failed")), "", "cannot tell this host's name for the --snapshot (uname failed): give --server-name NAME"},
		{"", host("", nil), "", "cannot tell this host's name for the --snapshot (<nil>): give --server-name NAME"},
	} {
		got, err := SnapshotServer(tc.given, tc.hostname)
		if tc.msg == "" {
			if err != nil || got != tc.want {
				t.Errorf("SnapshotServer(%q) = %q, %v; want %q", tc.given, got, err, tc.want)
			}
			continue
		}
		if err == nil || err.Error() != tc.msg || fail.KindOf(err) != fail.Usage {
			t.Errorf("SnapshotServer(%q) = %q, %v; want the usage error %q", tc.given, got, err, tc.msg)
		}
	}
}
