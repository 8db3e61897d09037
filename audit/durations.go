package audit

import (
	"time"

	"github.com/lohisoft/lohibot-audit/internal/fail"
)

// CheckDurations says what is wrong with the durations of a merge
// (MergeOptions.OptOutGrace and ClockSkew, --opt-out-grace and
// --clock-skew) before any snapshot is read: neither may be negative.
func CheckDurations(optOutGrace, clockSkew time.Duration) error {
	if optOutGrace < 0 {
		return fail.Usagef("--opt-out-grace %s: give a duration of 0 or more, such as 48h", optOutGrace)
	}
	if clockSkew < 0 {
		return fail.Usagef("--clock-skew %s: give a duration of 0 or more, such as 1s", clockSkew)
	}
	return nil
}
