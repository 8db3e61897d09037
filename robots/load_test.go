package robots

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lohisoft/lohibot-audit/internal/fail"
)

// TestLoaderLoadSetErrors checks that bad --robots values are usage
// errors that name the fault, before anything is fetched.
func TestLoaderLoadSetErrors(t *testing.T) {
	blocked := filepath.Join("..", "testdata", "robots", "lohisoftbot-blocked.txt")
	l := &Loader{Stdin: strings.NewReader("")}
	tests := []struct {
		name   string
		values []string
		msg    string
	}{
		{"two for every site", []string{blocked, blocked}, "--robots given twice for every site"},
		{"two for one site", []string{"a.example=" + blocked, "A.example:80=" + blocked}, "--robots given twice for site a.example"},
		{"empty source", []string{"a.example="}, "names no robots.txt"},
		{"missing file", []string{"a.example=" + filepath.Join("..", "testdata", "robots", "nope.txt")}, "cannot read robots.txt"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := l.LoadSet(context.Background(), tc.values)
			if err == nil || fail.KindOf(err) != fail.Usage {
				t.Fatalf("err = %v, want a usage error", err)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("err = %q, want it to contain %q", err, tc.msg)
			}
		})
	}
	if err := CheckValues([]string{blocked, blocked}); fail.KindOf(err) != fail.Usage {
		t.Errorf("CheckValues of two sources for every site = %v, want a usage error", err)
	}
	if _, err := l.LoadSet(context.Background(), []string{"a.example=" + blocked}); err != nil {
		t.Errorf("LoadSet of one file = %v", err)
	}
}

func TestCheckOffline(t *testing.T) {
	for _, tc := range []struct {
		values []string
		msg    string
	}{
		{[]string{"robots.txt", "a.example=a.txt", "-"}, ""},
		{[]string{"robots.txt", "https://a.example/robots.txt"}, "--offline forbids fetching --robots URL https://a.example/robots.txt; give a file"},
		{[]string{"b.example=http://b.example/robots.txt"}, "--offline forbids fetching --robots URL http://b.example/robots.txt; give a file"},
	} {
		err := CheckOffline(tc.values)
		if tc.msg == "" {
			if err != nil {
				t.Errorf("CheckOffline(%q) = %v, want nil", tc.values, err)
			}
			continue
		}
		if fail.KindOf(err) != fail.Usage || err.Error() != tc.msg {
			t.Errorf("CheckOffline(%q) = %v, want the usage error %q", tc.values, err, tc.msg)
		}
	}
}
