package audit

import (
	"errors"
	"testing"
	"time"
)

func TestParseTime(t *testing.T) {
	now := time.Date(2026, 12, 8, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		in   string
		want time.Time
		bad  bool
	}{
		{in: "", want: time.Time{}},
		{in: "24h", want: now.Add(-24 * time.Hour)},
		{in: "1d", want: now.Add(-24 * time.Hour)},
		{in: "7d", want: now.Add(-7 * 24 * time.Hour)},
		{in: "1d12h", want: now.Add(-36 * time.Hour)},
		{in: "90m", want: now.Add(-90 * time.Minute)},
		{in: "-24h", want: now.Add(-24 * time.Hour)},
		{in: "2026-12-01", want: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)},
		{in: "2026-12-01T10:00:00+02:00", want: time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)},
		{in: "2026-12-01 10:00:00", want: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)},
		{in: "1w", bad: true},
		{in: "d", bad: true},
		{in: "2026-13-01", bad: true},
		{in: "yesterday", bad: true},
	}
	for _, tc := range tests {
		got, err := ParseTime(tc.in, now)
		if tc.bad {
			if !errors.Is(err, ErrBadTime) {
				t.Errorf("ParseTime(%q) = %v, %v; want ErrBadTime", tc.in, got, err)
			}
			continue
		}
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("ParseTime(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}
