package runtime_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/clocktest"
	"github.com/agora-etl/agora/runtime/notify"
)

// pausableLocal is the local coordinator with a fleet controller that
// pauses pipelines, so a deadline test keeps the local DeadlineReporter.
type pausableLocal struct {
	*runtime.LocalCoordinator
	paused *controlCoord
}

func (c *pausableLocal) Capabilities() runtime.Capabilities {
	caps := c.LocalCoordinator.Capabilities()
	caps.FleetController = c.paused
	return caps
}

// deadlineEvents returns the DeadlineMissed events rec received.
func deadlineEvents(rec *recordingNotifier) []notify.Event {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var out []notify.Event
	for _, ev := range rec.events {
		if ev.Kind == notify.DeadlineMissed {
			out = append(out, ev)
		}
	}
	return out
}

// waitEvents waits (in real time) for n DeadlineMissed events.
func waitEvents(t *testing.T, rec *recordingNotifier, n int) []notify.Event {
	t.Helper()
	limit := time.Now().Add(5 * time.Second)
	for time.Now().Before(limit) {
		if evs := deadlineEvents(rec); len(evs) >= n {
			return evs
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("got %d deadline events, want %d", len(deadlineEvents(rec)), n)
	return nil
}

func failing(context.Context) (runtime.Pipeline, error) {
	return runtime.PipelineFunc(func(context.Context) error { return errors.New("boom") }), nil
}

func succeeding(context.Context) (runtime.Pipeline, error) {
	return runtime.PipelineFunc(func(context.Context) error { return nil }), nil
}

// hms is a time on t0's day.
func hms(h, m, s int) time.Time { return time.Date(2025, 3, 10, h, m, s, 0, time.UTC) }

func TestDeadlineReportsEveryFailedSlotOnceAtItsDeadline(t *testing.T) {
	clock := clocktest.NewFake(t0) // 10:07:30
	rec := &recordingNotifier{}
	logs := &syncBuffer{}
	d := &poolDriver{clock: clock, logs: logs, opts: []runtime.PoolOption{
		runtime.WithNotifier(rec), runtime.WithHealthAddr("127.0.0.1:0")}}
	d.start(t, &runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.MustCron("* * * * *"),
		Factory: failing, Deadline: 30 * time.Second, ErrorBackoff: 10 * time.Minute})

	// The slot of 10:07 fired before the worker started: not judged here.
	advanceTo(t, clock, d, hms(10, 8, 29))
	if evs := deadlineEvents(rec); len(evs) != 0 {
		t.Fatalf("events before the first deadline: %+v", evs)
	}
	advanceTo(t, clock, d, hms(10, 10, 45))
	evs := deadlineEvents(rec)
	want := []time.Time{hms(10, 8, 0), hms(10, 9, 0), hms(10, 10, 0)}
	if len(evs) != len(want) {
		t.Fatalf("got %d events %+v, want one per slot %v", len(evs), evs, want)
	}
	for i, ev := range evs {
		slot := want[i]
		if ev.RunNumber != slot.Unix() || !ev.Time.Equal(slot.Add(30*time.Second)) || ev.PipelineID != "p" ||
			ev.WorkerID == "" || ev.Deadline != "30s" {
			t.Fatalf("event %d = %+v, want slot %v reported at %v", i, ev, slot, slot.Add(30*time.Second))
		}
		wantMsg := "slot " + slot.Format(time.RFC3339) + " has not succeeded within 30s of its fire time"
		if ev.Error != wantMsg {
			t.Fatalf("event %d error %q, want %q", i, ev.Error, wantMsg)
		}
	}
	st := d.status(t, "p")
	if st.DeadlinesMissed != 3 || st.LastMissedSlot == nil || !st.LastMissedSlot.Equal(hms(10, 10, 0)) {
		t.Fatalf("status deadlines_missed=%d last=%v, want 3 and 10:10", st.DeadlinesMissed, st.LastMissedSlot)
	}
	fams := scrape(t, d.pool.HealthAddr())
	if v := value(t, fams, "agora_deadlines_missed_total", "pipeline", "p"); v != 3 {
		t.Fatalf("agora_deadlines_missed_total = %v, want 3", v)
	}
	if n := strings.Count(logs.String(), `"msg":"slot missed its deadline"`); n != 3 {
		t.Fatalf("%d WARN lines, want 3:\n%s", n, logs.String())
	}
	if !strings.Contains(logs.String(), `"deadline":30000000000`) {
		t.Fatalf("the WARN line names no deadline:\n%s", logs.String())
	}
	if err := d.stop(t); err != nil {
		t.Fatal(err)
	}
}

func TestDeadlineSucceedingSlotsAreNotReported(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sched runtime.Schedule
		start time.Time
	}{
		{"cron", runtime.MustCron("* * * * *"), t0},
		// Every runs at start, then a minute after each run ends: on the
		// minute, each run in its own window.
		{"every", runtime.Every(time.Minute), hms(10, 7, 0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := clocktest.NewFake(tc.start)
			rec := &recordingNotifier{}
			d := &poolDriver{clock: clock, logs: &syncBuffer{}, opts: []runtime.PoolOption{
				runtime.WithNotifier(rec), runtime.WithHealthAddr("127.0.0.1:0")}}
			d.start(t, &runtime.ScheduledPipeline{PipelineID: "p", Schedule: tc.sched,
				Factory: succeeding, Deadline: 30 * time.Second})
			advanceTo(t, clock, d, hms(10, 12, 45))
			if evs := deadlineEvents(rec); len(evs) != 0 {
				t.Fatalf("succeeding slots reported: %+v", evs)
			}
			st := d.status(t, "p")
			if st.Runs < 5 || st.DeadlinesMissed != 0 || st.LastMissedSlot != nil {
				t.Fatalf("status %+v", st)
			}
			if v := value(t, scrape(t, d.pool.HealthAddr()), "agora_deadlines_missed_total", "pipeline", "p"); v != 0 {
				t.Fatalf("agora_deadlines_missed_total = %v, want 0", v)
			}
			if err := d.stop(t); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestDeadlineEveryFailedWindowIsReported(t *testing.T) {
	clock := clocktest.NewFake(hms(10, 7, 0))
	rec := &recordingNotifier{}
	d := &poolDriver{clock: clock, logs: &syncBuffer{}, opts: []runtime.PoolOption{runtime.WithNotifier(rec)}}
	d.start(t, &runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.Every(time.Minute),
		Factory: failing, Deadline: 45 * time.Second, ErrorBackoff: time.Minute})
	// Runs at 10:07 and 10:08 fail; the backoff doubles, so the 10:09
	// window has no run at all: all three are missed, each reported an
	// interval plus the deadline after the window's start.
	advanceTo(t, clock, d, hms(10, 10, 50))
	evs := deadlineEvents(rec)
	if len(evs) != 3 {
		t.Fatalf("events %+v, want the 10:07, 10:08 and 10:09 windows", evs)
	}
	for i, ev := range evs {
		w := hms(10, 7+i, 0)
		if ev.RunNumber != w.Unix() || !ev.Time.Equal(w.Add(time.Minute+45*time.Second)) {
			t.Fatalf("event %d = %+v, want window %v at +1m45s", i, ev, w)
		}
	}
	if err := d.stop(t); err != nil {
		t.Fatal(err)
	}
}

func TestDeadlineNotReportedWhilePaused(t *testing.T) {
	clock := clocktest.NewFake(t0)
	rec := &recordingNotifier{}
	ctl := newControlCoord()
	coord := &pausableLocal{LocalCoordinator: runtime.NewLocalCoordinator(clock), paused: ctl}
	d := &poolDriver{clock: clock, logs: &syncBuffer{}, opts: []runtime.PoolOption{
		runtime.WithNotifier(rec), runtime.WithCoordinator(coord)}}
	ctl.setPaused("p", true)
	d.start(t, &runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.MustCron("* * * * *"),
		Factory: succeeding, Deadline: 30 * time.Second})
	advanceTo(t, clock, d, hms(10, 10, 45))
	if evs := deadlineEvents(rec); len(evs) != 0 {
		t.Fatalf("a paused pipeline's slots were reported: %+v", evs)
	}
	// Resumed: its slots are judged again, and they succeed.
	ctl.setPaused("p", false)
	advanceTo(t, clock, d, hms(10, 12, 45))
	if evs := deadlineEvents(rec); len(evs) != 0 {
		t.Fatalf("succeeding slots after the pause were reported: %+v", evs)
	}
	if err := d.stop(t); err != nil {
		t.Fatal(err)
	}
}

func TestDeadlineReportsARunStillGoingThenFailing(t *testing.T) {
	clock := clocktest.NewFake(t0)
	rec := &recordingNotifier{}
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	d := &poolDriver{clock: clock, logs: &syncBuffer{}, opts: []runtime.PoolOption{runtime.WithNotifier(rec)}}
	d.start(t, &runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.MustCron("* * * * *"),
		Deadline: 30 * time.Second, ErrorBackoff: 10 * time.Minute,
		Factory: func(context.Context) (runtime.Pipeline, error) {
			return runtime.PipelineFunc(func(context.Context) error {
				started <- struct{}{}
				<-release
				return errors.New("late and wrong")
			}), nil
		}})
	advanceTo(t, clock, d, hms(10, 7, 59))
	clock.Set(hms(10, 8, 0))
	<-started
	clock.Set(hms(10, 8, 30)) // the run is still going: the slot has not succeeded
	evs := waitEvents(t, rec, 1)
	if evs[0].RunNumber != hms(10, 8, 0).Unix() || !evs[0].Time.Equal(hms(10, 8, 30)) {
		t.Fatalf("event %+v, want slot 10:08 reported at 10:08:30", evs[0])
	}
	close(release) // it fails now: reported already, not again
	advanceTo(t, clock, d, hms(10, 8, 50))
	if evs := deadlineEvents(rec); len(evs) != 1 {
		t.Fatalf("events %+v, want the one", evs)
	}
	if err := d.stop(t); err != nil {
		t.Fatal(err)
	}
}

func TestDeadlineWithoutTheCapabilityReportsPerWorker(t *testing.T) {
	// fakeCoord has no DeadlineReporter: the worker judges by its own runs.
	clock := clocktest.NewFake(t0)
	rec := &recordingNotifier{}
	coord := newFakeCoord()
	d := &poolDriver{clock: clock, logs: &syncBuffer{}, opts: []runtime.PoolOption{
		runtime.WithNotifier(rec), runtime.WithCoordinator(coord)}}
	d.start(t, &runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.MustCron("* * * * *"),
		Deadline: 30 * time.Second, ErrorBackoff: 20 * time.Second,
		Factory: func(ctx context.Context) (runtime.Pipeline, error) {
			// Odd minutes fail, their retry too; even ones succeed.
			if l, _ := runtime.LeaseFromContext(ctx); (l.RunNumber/60)%2 == 1 {
				return failing(ctx)
			}
			return succeeding(ctx)
		}})
	advanceTo(t, clock, d, hms(10, 11, 45)) // 10:08 ok, 10:09 fails, 10:10 ok, 10:11 fails
	evs := deadlineEvents(rec)
	if len(evs) != 2 || evs[0].RunNumber != hms(10, 9, 0).Unix() || evs[1].RunNumber != hms(10, 11, 0).Unix() {
		t.Fatalf("events %+v, want the failed slots 10:09 and 10:11", evs)
	}
	if err := d.stop(t); err != nil {
		t.Fatal(err)
	}
}

func TestDeadlineValidation(t *testing.T) {
	for _, tc := range []struct {
		name  string
		sched runtime.Schedule
		dl    time.Duration
		want  string // "" valid
	}{
		{"negative", runtime.MustCron("* * * * *"), -time.Second, "negative Deadline -1s"},
		{"continuous", runtime.Continuous(), time.Minute, "deadline needs a cron or every schedule"},
		{"once", runtime.Once(), time.Minute, "deadline needs a cron or every schedule"},
		{"every under a second", runtime.Every(500 * time.Millisecond), time.Minute, "deadline needs a cron or every schedule of at least a second"},
		{"cron", runtime.MustCron("0 2 * * *"), 15 * time.Minute, ""},
		{"every", runtime.Every(time.Hour), 15 * time.Minute, ""},
		{"none on continuous", runtime.Continuous(), 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sp := &runtime.ScheduledPipeline{PipelineID: "nightly", Schedule: tc.sched, Factory: succeeding, Deadline: tc.dl}
			pool := runtime.NewWorkerPool(runtime.WithSignalHandling(false)).Register(sp)
			ctx, cancel := context.WithCancel(context.Background())
			if tc.want == "" {
				cancel() // valid: Run starts and returns at once
			}
			defer cancel()
			err := pool.Run(ctx)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("valid pipeline: %v", err)
				}
				return
			}
			if !errors.Is(err, runtime.ErrInvalidPipeline) || !strings.Contains(err.Error(), tc.want) ||
				!strings.Contains(err.Error(), `"nightly"`) {
				t.Fatalf("error %v, want ErrInvalidPipeline naming \"nightly\" and %q", err, tc.want)
			}
		})
	}
}

// lookBackCoord is the local coordinator asked through its methods (no
// LocalLeaser, as a server's coordinator), with a fleet's last completed
// slot from before the worker started.
type lookBackCoord struct {
	*runtime.LocalCoordinator
	last int64 // Unix s; 0: none recorded
}

func (c *lookBackCoord) Capabilities() runtime.Capabilities {
	caps := c.LocalCoordinator.Capabilities()
	caps.LocalLeaser, caps.RunRecorder, caps.CompletionReader = nil, nil, c
	return caps
}

func (c *lookBackCoord) LastCompleted(context.Context, string) (int64, bool, error) {
	return c.last, c.last != 0, nil
}

// A worker starting after a slot's deadline passed while no worker was
// checking reports it, if the fleet completed a slot before it and nobody
// reported it; a new pipeline or one whose last slot completed has none.
func TestDeadlineLookBackAtStart(t *testing.T) {
	for _, tc := range []struct {
		name string
		last time.Time // the fleet's last completed slot; zero: none
		want []int64
	}{
		{"missed while down", hms(10, 5, 0), []int64{hms(10, 7, 0).Unix()}},
		{"last slot completed", hms(10, 7, 0), nil},
		{"new pipeline", time.Time{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := clocktest.NewFake(hms(10, 7, 40)) // the 10:07 deadline was 10:07:30
			rec := &recordingNotifier{}
			coord := &lookBackCoord{LocalCoordinator: runtime.NewLocalCoordinator(clock)}
			if !tc.last.IsZero() {
				coord.last = tc.last.Unix()
			}
			d := &poolDriver{clock: clock, logs: &syncBuffer{}, opts: []runtime.PoolOption{
				runtime.WithNotifier(rec), runtime.WithCoordinator(coord)}}
			d.start(t, &runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.MustCron("* * * * *"),
				Factory: succeeding, Deadline: 30 * time.Second})
			advanceTo(t, clock, d, hms(10, 9, 45)) // 10:08 and 10:09 succeed
			var got []int64
			for _, ev := range deadlineEvents(rec) {
				got = append(got, ev.RunNumber)
				if !ev.Time.Equal(hms(10, 7, 40)) {
					t.Errorf("reported at %v, want at the start", ev.Time)
				}
			}
			if len(got) != len(tc.want) || (len(got) == 1 && got[0] != tc.want[0]) {
				t.Fatalf("reported slots %v, want %v", got, tc.want)
			}
			if err := d.stop(t); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// An every pipeline whose runs take a third of the interval drifts: each
// run is planned a minute after the last ended, so now and then a window
// has no run and the next window's run comes early in it. That pipeline
// is healthy and is never reported: a window is judged an interval plus
// the deadline after its start, when the drifted run has succeeded.
func TestDeadlineEveryDriftIsNotReported(t *testing.T) {
	clock := clocktest.NewFake(hms(10, 7, 0))
	rec := &recordingNotifier{}
	d := &poolDriver{clock: clock, logs: &syncBuffer{}, opts: []runtime.PoolOption{runtime.WithNotifier(rec)}}
	var mu sync.Mutex
	var windows []int64
	d.start(t, &runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.Every(time.Minute), Deadline: 30 * time.Second,
		Factory: func(context.Context) (runtime.Pipeline, error) {
			return runtime.PipelineFunc(func(ctx context.Context) error {
				lease, _ := runtime.LeaseFromContext(ctx)
				mu.Lock()
				windows = append(windows, lease.RunNumber)
				mu.Unlock()
				// The run takes 20 s of the fake clock's time.
				clock.Advance(20 * time.Second)
				return nil
			}), nil
		}})
	advanceTo(t, clock, d, hms(10, 20, 0))
	mu.Lock()
	ran := map[int64]bool{}
	for _, w := range windows {
		ran[w] = true
	}
	skipped := 0
	for w := hms(10, 7, 0); w.Before(hms(10, 19, 0)); w = w.Add(time.Minute) {
		if !ran[w.Unix()] {
			skipped++
		}
	}
	mu.Unlock()
	if skipped == 0 {
		t.Fatalf("no window passed over by the drift (runs in %v): the test shows nothing", windows)
	}
	if evs := deadlineEvents(rec); len(evs) != 0 {
		t.Fatalf("a healthy drifting pipeline reported (%d windows passed over): %+v", skipped, evs)
	}
	if err := d.stop(t); err != nil {
		t.Fatal(err)
	}
}
