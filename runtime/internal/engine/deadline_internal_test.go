package engine

import (
	"testing"
	"time"
)

func TestFirstDeadlineSlot(t *testing.T) {
	d := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, tc := range []struct {
		name     string
		sched    Schedule
		deadline time.Duration
		now      string
		want     string
	}{
		// The 02:00 slot's deadline (02:15) is still ahead: it is checked.
		{"cron inside the deadline", mustCron("0 2 * * *"), 15 * time.Minute, "2026-12-03T02:10:00Z", "2026-12-03T02:00:00Z"},
		// At 02:15 exactly the 02:00 deadline is due now: a worker starting
		// then leaves it to those that ran it.
		{"cron at the deadline", mustCron("0 2 * * *"), 15 * time.Minute, "2026-12-03T02:15:00Z", "2026-12-04T02:00:00Z"},
		{"cron before the slot", mustCron("0 2 * * *"), 15 * time.Minute, "2026-12-03T01:59:59Z", "2026-12-03T02:00:00Z"},
		// An every window is checked an interval plus the deadline after
		// its start (deadlineWait), but a worker judges no window that
		// began before it: the 01:00 window's check (02:15) is ahead at
		// 02:10, yet nothing of this worker ran in it.
		{"every window", every(time.Hour), 15 * time.Minute, "2026-12-03T02:10:00Z", "2026-12-03T02:00:00Z"},
		{"every at a window's start", every(time.Hour), 15 * time.Minute, "2026-12-03T02:00:00Z", "2026-12-03T02:00:00Z"},
		{"every deadline longer than the interval", every(time.Minute), 150 * time.Second, "2026-12-03T02:10:00Z", "2026-12-03T02:10:00Z"},
		{"every seconds", every(2 * time.Second), time.Second, "2026-12-03T02:10:01.5Z", "2026-12-03T02:10:00Z"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp := &Spec{Schedule: tc.sched, Settings: &Settings{Deadline: tc.deadline}}
			got := timeOf(firstDeadlineSlot(sp, d(tc.now).UnixNano())).UTC()
			if !got.Equal(d(tc.want)) {
				t.Fatalf("first slot = %v, want %s", got, tc.want)
			}
		})
	}
}

func TestNoDeadlineNoWatch(t *testing.T) {
	env := &runEnv{}
	runners := []*Runner{
		{sp: &Spec{PipelineID: "a", Schedule: mustCron("* * * * *"), Settings: &Settings{}}},
		{sp: &Spec{PipelineID: "b", Schedule: every(time.Minute), Settings: &Settings{}}},
	}
	if w := newDeadlineWatch(env, runners, time.Now()); w != nil {
		t.Fatalf("a watch for pipelines without a deadline: %+v", w)
	}
	for _, r := range runners {
		if r.rare != nil || r.side != nil {
			t.Fatalf("rare state made for %q", r.id())
		}
	}
}
