package render

import (
	"strconv"
	"time"
)

// axisTick is one labelled tick of a time axis, in UTC.
type axisTick struct {
	Time time.Time
	// Label is the time of day (or the day, for steps of a day and
	// more); Context is the date (or the year) when it differs from the
	// tick before, and on the first tick.
	Label, Context string
}

// tickStep is a candidate distance between two ticks: a fixed duration, or
// a number of calendar months.
type tickStep struct {
	d      time.Duration
	months int
}

var tickSteps = func() []tickStep {
	var s []tickStep
	for _, d := range []time.Duration{
		time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
		time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
		time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour,
		24 * time.Hour, 2 * 24 * time.Hour, 7 * 24 * time.Hour, 14 * 24 * time.Hour,
	} {
		s = append(s, tickStep{d: d})
	}
	for _, m := range []int{1, 2, 3, 6, 12, 24, 60, 120, 240, 600, 1200, 2400, 6000, 12000, 24000, 60000, 120000} {
		s = append(s, tickStep{months: m})
	}
	return s
}()

// approxMS returns the step's length in milliseconds, counting a month as
// 30.44 days (a time.Duration holds no more than 292 years).
func (s tickStep) approxMS() int64 {
	if s.months > 0 {
		return int64(s.months) * 2_629_746_000
	}
	return s.d.Milliseconds()
}

// axisTicks returns ticks between from and to (UTC), at most maxTicks of
// them, at round times: whole seconds, minutes, hours, days (midnight UTC),
// weeks (Mondays), months or years.
func axisTicks(from, to time.Time, maxTicks int) []axisTick {
	from, to = from.UTC(), to.UTC()
	if !to.After(from) || maxTicks < 1 {
		return nil
	}
	// In milliseconds: a time.Duration holds no more than 292 years.
	span := to.UnixMilli() - from.UnixMilli()
	step := tickSteps[len(tickSteps)-1]
	for _, s := range tickSteps {
		if span/s.approxMS() < int64(maxTicks) {
			step = s
			break
		}
	}
	var times []time.Time
	switch {
	case step.months > 0:
		t := time.Date(from.Year(), from.Month(), 1, 0, 0, 0, 0, time.UTC)
		// Align to a multiple of the step counted from year 0.
		total := t.Year()*12 + int(t.Month()) - 1
		total -= total % step.months
		for i := 0; i < maxTicks+2; i++ {
			m := total + i*step.months
			tt := time.Date(m/12, time.Month(m%12+1), 1, 0, 0, 0, 0, time.UTC)
			if tt.Before(from) {
				continue
			}
			if tt.After(to) {
				break
			}
			times = append(times, tt)
		}
	default:
		// Days and shorter steps divide a day: align to midnight UTC.
		// Weeks align to Monday.
		day := time.Date(from.Year(), from.Month(), from.Day(), 0, 0, 0, 0, time.UTC)
		origin := day
		if step.d >= 7*24*time.Hour {
			origin = day.AddDate(0, 0, -((int(day.Weekday()) + 6) % 7))
		} else if step.d > 24*time.Hour {
			// Two days: count from the first of the month.
			origin = time.Date(from.Year(), from.Month(), 1, 0, 0, 0, 0, time.UTC)
		}
		t := origin
		if t.Before(from) {
			n := (from.Sub(t) + step.d - 1) / step.d
			t = t.Add(n * step.d)
		}
		for ; !t.After(to) && len(times) < maxTicks+2; t = t.Add(step.d) {
			times = append(times, t)
		}
	}
	ticks := make([]axisTick, len(times))
	var prevContext string
	for i, t := range times {
		var label, context string
		switch {
		case step.months >= 12:
			label = strconv.Itoa(t.Year())
		case step.months > 0:
			label, context = t.Format("Jan"), strconv.Itoa(t.Year())
		case step.d >= 24*time.Hour:
			label, context = t.Format("Jan 2"), strconv.Itoa(t.Year())
		case step.d >= time.Minute:
			label, context = t.Format("15:04"), t.Format("Jan 2")
		default:
			label, context = t.Format("15:04:05"), t.Format("Jan 2")
		}
		if context == prevContext {
			context = ""
		} else {
			prevContext = context
		}
		ticks[i] = axisTick{Time: t, Label: label, Context: context}
	}
	return ticks
}
