package engine

import (
	"testing"
	"time"
)

func TestScheduleInterval(t *testing.T) {
	now := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC) // a Friday
	weekdays := mustCron("CRON_TZ=UTC 0 9 * * 1-5")
	for _, tc := range []struct {
		name string
		s    Schedule
		next int64
		want time.Duration
	}{
		{"every", every(time.Minute), 0, time.Minute},
		{"cron from now", mustCron("*/5 * * * *"), 0, 5 * time.Minute},
		// From Friday noon the next slot is Monday 9:00, the one after it Tuesday 9:00.
		{"uneven cron: the gap ahead", weekdays, 0, 24 * time.Hour},
		{"continuous", NewSchedule(ScheduleContinuous, 0, "", nil), 0, 0},
	} {
		got := scheduleInterval(tc.s, tc.next, now)
		if got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
	friday := time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC).UnixNano()
	if got := scheduleInterval(weekdays, friday-1, now); got != 72*time.Hour {
		t.Errorf("from a plan before Friday's slot: %v, want the 72h gap to Monday", got)
	}
}
