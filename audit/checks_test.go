package audit

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/fail"
)

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
