package engine

import (
	"testing"
	"time"
)

func TestScheduleIsRuntimes(t *testing.T) {
	at := time.Date(2026, 12, 3, 10, 2, 30, 0, time.UTC)
	for _, tc := range []struct {
		s        Schedule
		kind     ScheduleKind
		next     time.Time
		interval time.Duration
		text     string
	}{
		{mustCron("*/5 * * * *"), ScheduleCron, time.Date(2026, 12, 3, 10, 5, 0, 0, time.UTC), 0, `cron="*/5 * * * *"`},
		{every(time.Minute), ScheduleEvery, at.Add(time.Minute), time.Minute, "every=1m0s"},
		{NewSchedule(ScheduleContinuous, 0, "", nil), ScheduleContinuous, at, 0, "continuous"},
		{NewSchedule(ScheduleOnce, 0, "", nil), ScheduleOnce, at, 0, "once"},
		{NewSchedule(ScheduleCron, 0, "x", nil), ScheduleCron, time.Time{}, 0, `cron="x"`}, // no spec: never fires
		{Schedule{}, ScheduleNone, time.Time{}, 0, "none"},
	} {
		if got := tc.s.Next(at); !got.Equal(tc.next) {
			t.Errorf("%s: Next = %v, want %v", tc.text, got, tc.next)
		}
		if tc.s.Kind() != tc.kind || tc.s.Interval() != tc.interval || tc.s.String() != tc.text {
			t.Errorf("%s: kind %v interval %v text %q", tc.text, tc.s.Kind(), tc.s.Interval(), tc.s.String())
		}
	}
}
