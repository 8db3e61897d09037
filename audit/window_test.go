package audit

import (
	"strings"
	"testing"
	"time"

	"github.com/lohisoft/lohibot-audit/internal/fail"
)

func TestParseBound(t *testing.T) {
	now := time.Date(2026, 12, 8, 12, 0, 0, 0, time.UTC)
	if got, err := ParseBound("since", "7d", now); err != nil || !got.Equal(now.Add(-7*24*time.Hour)) {
		t.Errorf("ParseBound(7d) = %v, %v", got, err)
	}
	got, err := ParseBound("since", "yesterday", now)
	if fail.KindOf(err) != fail.Usage || !strings.HasPrefix(err.Error(), `--since "yesterday" is neither`) {
		t.Errorf("ParseBound(yesterday) = %v, %v; want a usage error naming --since", got, err)
	}
}

func TestParseWindowEmpty(t *testing.T) {
	now := time.Date(2026, 12, 8, 12, 0, 0, 0, time.UTC)
	_, _, err := ParseWindow("1d", "7d", now)
	if fail.KindOf(err) != fail.Usage || fail.HintOf(err) == "" || !strings.Contains(err.Error(), "is not before --until") {
		t.Errorf("ParseWindow(1d, 7d) = %v; want a usage error with a hint", err)
	}
	if _, _, err := ParseWindow("2026-12-01", "2026-12-02", now); err != nil {
		t.Errorf("ParseWindow of a day = %v", err)
	}
}
