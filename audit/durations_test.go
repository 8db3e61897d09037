package audit

import (
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
