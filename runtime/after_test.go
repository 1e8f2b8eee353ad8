package runtime_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/clocktest"
	"github.com/agora-etl/agora/runtime/history"
	"github.com/agora-etl/agora/runtime/notify"
)

// chain is an extract → load pair sharing what extract finished, so load
// can check, inside its own run, that extract's run of the same slot had
// returned before it started.
type chain struct {
	mu        sync.Mutex
	extracted map[int64]bool // slots whose extract run returned nil
	loads     []int64        // slots load ran, in order
	early     []int64        // slots load started before extract finished them
	others    []time.Time    // starts of an unrelated pipeline
	clock     runtime.Clock
}

func newChain(clock runtime.Clock) *chain {
	return &chain{extracted: map[int64]bool{}, clock: clock}
}

func (c *chain) extract(context.Context) (runtime.Pipeline, error) {
	return runtime.PipelineFunc(func(ctx context.Context) error {
		lease, _ := runtime.LeaseFromContext(ctx)
		c.mu.Lock()
		defer c.mu.Unlock()
		c.extracted[lease.RunNumber] = true
		return nil
	}), nil
}

func (c *chain) load(context.Context) (runtime.Pipeline, error) {
	return runtime.PipelineFunc(func(ctx context.Context) error {
		lease, _ := runtime.LeaseFromContext(ctx)
		c.mu.Lock()
		defer c.mu.Unlock()
		c.loads = append(c.loads, lease.RunNumber)
		if !c.extracted[lease.RunNumber] {
			c.early = append(c.early, lease.RunNumber)
		}
		return nil
	}), nil
}

func (c *chain) other(context.Context) (runtime.Pipeline, error) {
	return runtime.PipelineFunc(func(context.Context) error {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.others = append(c.others, c.clock.Now())
		return nil
	}), nil
}

func (c *chain) snapshot() (loads, early []int64, others []time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]int64(nil), c.loads...), append([]int64(nil), c.early...), append([]time.Time(nil), c.others...)
}

// upstreamEvents returns the UpstreamNotCompleted events rec received.
func upstreamEvents(rec *recordingNotifier) []notify.Event {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	var out []notify.Event
	for _, ev := range rec.events {
		if ev.Kind == notify.UpstreamNotCompleted {
			out = append(out, ev)
		}
	}
	return out
}

// A downstream slot starts only once its upstream completed the same slot;
// a slot the upstream did not run (paused then) is skipped at the next
// slot, with the reason, a WARN line and an event; and a pipeline with no
// dependency keeps its slots on time while the downstream waits.
func TestAfterStartsASlotOnlyOnceItsUpstreamCompletedIt(t *testing.T) {
	clock := clocktest.NewFake(t0) // 10:07:30
	c := newChain(clock)
	control := newControlCoord()
	control.setPaused("extract", true) // over the 10:08 slot
	coord := &pausableLocal{LocalCoordinator: runtime.NewLocalCoordinator(clock), paused: control}
	rec := &recordingNotifier{}
	logs := &syncBuffer{}
	d := &poolDriver{clock: clock, logs: logs, opts: []runtime.PoolOption{runtime.WithNotifier(rec), runtime.WithCoordinator(coord)}}
	every := runtime.MustCron("* * * * *")
	d.start(t,
		// load is registered first, so at each slot its gate runs
		// before extract's run: it has to wait.
		&runtime.ScheduledPipeline{PipelineID: "load", Schedule: every, Factory: c.load, After: []string{"extract"}},
		&runtime.ScheduledPipeline{PipelineID: "extract", Schedule: every, Factory: c.extract},
		&runtime.ScheduledPipeline{PipelineID: "other", Schedule: runtime.MustCron("*/10 * * * * *"), Factory: c.other},
	)
	advanceTo(t, clock, d, hms(10, 8, 30))
	if st := d.status(t, "load"); st.AwaitingUpstream == nil || !st.AwaitingUpstream.Equal(hms(10, 8, 0)) {
		t.Fatalf("load's status while waiting: awaiting %v, want the 10:08 slot", st.AwaitingUpstream)
	}
	control.setPaused("extract", false)
	advanceTo(t, clock, d, hms(10, 10, 30))
	if err := d.stop(t); err != nil {
		t.Fatal(err)
	}

	loads, early, others := c.snapshot()
	if len(early) > 0 {
		t.Fatalf("load started slots %v before extract completed them", early)
	}
	want := []int64{hms(10, 9, 0).Unix(), hms(10, 10, 0).Unix()}
	if len(loads) != len(want) || loads[0] != want[0] || loads[1] != want[1] {
		t.Fatalf("load ran slots %v, want %v (10:08 skipped: extract did not run it)", loads, want)
	}
	for i, at := range others {
		if at.Second()%10 != 0 || at.Nanosecond() != 0 {
			t.Errorf("the unrelated pipeline's run %d started at %s, not on its slot", i, at.Format(time.RFC3339Nano))
		}
	}
	if len(others) != 18 {
		t.Errorf("the unrelated pipeline ran %d times from 10:07:30 to 10:10:30, want 18", len(others))
	}

	reason := `upstream "extract" has not completed slot 2025-03-10T10:08:00Z`
	st := d.status(t, "load")
	if st.SkippedUpstream != 1 || st.LastSkipReason != reason || st.AwaitingUpstream != nil {
		t.Errorf("load's status: skipped_upstream %d, last_skip_reason %q, awaiting %v; want 1, %q, nil",
			st.SkippedUpstream, st.LastSkipReason, st.AwaitingUpstream, reason)
	}
	evs := upstreamEvents(rec)
	if len(evs) != 1 {
		t.Fatalf("got %d upstream events, want 1: %+v", len(evs), evs)
	}
	if ev := evs[0]; ev.PipelineID != "load" || ev.Upstream != "extract" || ev.RunNumber != hms(10, 8, 0).Unix() ||
		ev.Error != reason || !ev.Time.Equal(hms(10, 9, 0)) {
		t.Errorf("event %+v; want load's 10:08 slot skipped at 10:09 for extract", ev)
	}
	if !strings.Contains(logs.String(), `"msg":"slot skipped: its upstream has not completed it"`) ||
		!strings.Contains(logs.String(), `"level":"WARN"`) {
		t.Errorf("no WARN line for the skip:\n%s", logs.String())
	}
}

// With the upstream paused, every downstream slot is skipped, each after
// AfterTimeout, with the reason naming the upstream and the slot.
func TestAfterSkipsEverySlotWhileTheUpstreamIsPaused(t *testing.T) {
	clock := clocktest.NewFake(t0) // 10:07:30
	c := newChain(clock)
	control := newControlCoord()
	control.setPaused("extract", true)
	coord := &pausableLocal{LocalCoordinator: runtime.NewLocalCoordinator(clock), paused: control}
	rec := &recordingNotifier{}
	d := &poolDriver{clock: clock, logs: &syncBuffer{}, opts: []runtime.PoolOption{runtime.WithNotifier(rec), runtime.WithCoordinator(coord),
		runtime.WithHealthAddr("127.0.0.1:0")}}
	every := runtime.MustCron("* * * * *")
	d.start(t,
		&runtime.ScheduledPipeline{PipelineID: "extract", Schedule: every, Factory: c.extract},
		&runtime.ScheduledPipeline{PipelineID: "load", Schedule: every, Factory: c.load, After: []string{"extract"}, AfterTimeout: 20 * time.Second},
	)
	advanceTo(t, clock, d, hms(10, 9, 19))
	if evs := upstreamEvents(rec); len(evs) != 1 || !evs[0].Time.Equal(hms(10, 8, 20)) {
		t.Fatalf("events by 10:09:19: %+v; want the 10:08 slot skipped at 10:08:20", evs)
	}
	advanceTo(t, clock, d, hms(10, 9, 20))
	evs := upstreamEvents(rec)
	if len(evs) != 2 || !evs[1].Time.Equal(hms(10, 9, 20)) ||
		evs[1].Error != `upstream "extract" has not completed slot 2025-03-10T10:09:00Z` {
		t.Fatalf("events by 10:09:20: %+v; want the 10:09 slot skipped then", evs)
	}
	fams := scrape(t, d.pool.HealthAddr())
	if v := value(t, fams, "agora_attempts_skipped_total", "pipeline", "load", "reason", "upstream"); v != 2 {
		t.Errorf("upstream skips metric = %v, want 2", v)
	}
	if err := d.stop(t); err != nil {
		t.Fatal(err)
	}
	if loads, _, _ := c.snapshot(); len(loads) != 0 {
		t.Fatalf("load ran %v while its upstream was paused", loads)
	}
	if st := d.status(t, "load"); st.SkippedUpstream != 2 {
		t.Fatalf("skipped_upstream = %d, want 2", st.SkippedUpstream)
	}
}

// The pool refuses what cannot work, naming each problem before anything
// starts.
func TestAfterProblemsAreRefusedAtRun(t *testing.T) {
	noop := func(context.Context) (runtime.Pipeline, error) {
		return runtime.PipelineFunc(func(context.Context) error { return nil }), nil
	}
	minute := runtime.MustCron("* * * * *")
	cases := []struct {
		name  string
		opts  []runtime.PoolOption
		sps   []*runtime.ScheduledPipeline
		wants []string
	}{
		{"unknown upstream with an in-process coordinator", nil, []*runtime.ScheduledPipeline{
			{PipelineID: "load", Schedule: minute, Factory: noop, After: []string{"extract"}},
		}, []string{`pipeline "load": After names "extract", which is not registered in this pool`}},
		{"different schedules", nil, []*runtime.ScheduledPipeline{
			{PipelineID: "extract", Schedule: runtime.MustCron("0 * * * *"), Factory: noop},
			{PipelineID: "load", Schedule: minute, Factory: noop, After: []string{"extract"}},
		}, []string{`After names "extract", whose schedule cron="0 * * * *" is not this pipeline's cron="* * * * *"`}},
		{"cycle", nil, []*runtime.ScheduledPipeline{
			{PipelineID: "a", Schedule: minute, Factory: noop, After: []string{"c"}},
			{PipelineID: "b", Schedule: minute, Factory: noop, After: []string{"a"}},
			{PipelineID: "c", Schedule: minute, Factory: noop, After: []string{"b"}},
		}, []string{`After makes a cycle, which never starts: "a" → "c" → "b" → "a"`}},
		{"own settings", nil, []*runtime.ScheduledPipeline{
			{PipelineID: "x", Schedule: minute, Factory: noop},
			{PipelineID: "c", Schedule: runtime.Continuous(), Factory: noop, After: []string{"x"}},
			{PipelineID: "o", Schedule: runtime.Once(), Factory: noop, After: []string{"x"}},
			{PipelineID: "s", Schedule: runtime.Every(100 * time.Millisecond), Factory: noop, After: []string{"x"}},
			{PipelineID: "e", Schedule: runtime.Every(time.Minute), Factory: noop, After: []string{"x"}},
			{PipelineID: "self", Schedule: minute, Factory: noop, After: []string{"self", "x", "x", ""}},
			{PipelineID: "t", Schedule: minute, Factory: noop, AfterTimeout: time.Minute},
			{PipelineID: "n", Schedule: minute, Factory: noop, After: []string{"x"}, AfterTimeout: -time.Second},
		}, []string{
			`("c"): after needs a cron schedule, not continuous`,
			`("o"): after needs a cron schedule, not once`,
			`("s"): after needs a cron schedule, not every=100ms`,
			`("e"): after needs a cron schedule, not every=1m0s: an every run starts an interval after the previous one finished, so its slots drift with run times and rarely match an upstream's; cron="@every 1m0s" keeps the interval on a fixed grid`,
			`depends on itself: "self" in After`,
			`"x" twice in After`,
			`an empty pipeline id in After`,
			`("t"): AfterTimeout without After`,
			`("n"): negative AfterTimeout -1s`,
		}},
		{"a coordinator that cannot tell", []runtime.PoolOption{runtime.WithCoordinator(newFakeCoord())}, []*runtime.ScheduledPipeline{
			{PipelineID: "extract", Schedule: minute, Factory: noop},
			{PipelineID: "load", Schedule: minute, Factory: noop, After: []string{"extract"}},
		}, []string{`pipeline "load": After needs a coordinator that can tell whether a pipeline completed a slot`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			pool := runtime.NewWorkerPool(append([]runtime.PoolOption{runtime.WithSignalHandling(false)}, tc.opts...)...)
			for _, sp := range tc.sps {
				pool.Register(sp)
			}
			err := pool.Run(context.Background())
			if !errors.Is(err, runtime.ErrInvalidPipeline) {
				t.Fatalf("Run = %v, want ErrInvalidPipeline", err)
			}
			for _, want := range tc.wants {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error does not say %q:\n%v", want, err)
				}
			}
		})
	}
}

// fleetReader is a coordinator that asks a server (no LocalLeaser) and
// can tell slots apart: an upstream it knows may run elsewhere.
type fleetReader struct{ *fakeCoord }

func (c fleetReader) Capabilities() runtime.Capabilities {
	caps := c.fakeCoord.Capabilities()
	caps.SlotCompletionReader = c
	return caps
}

func (c fleetReader) SlotCompleted(context.Context, string, int64) (bool, error) { return true, nil }

// With a fleet-wide coordinator an upstream may run in another binary: an
// id this pool does not run is accepted, and its completions gate the
// slots.
func TestAfterAcceptsAnUpstreamRunElsewhereWithAFleetWideCoordinator(t *testing.T) {
	clock := clocktest.NewFake(t0)
	c := newChain(clock)
	d := &poolDriver{clock: clock, logs: &syncBuffer{}, opts: []runtime.PoolOption{runtime.WithCoordinator(fleetReader{newFakeCoord()})}}
	c.extracted[hms(10, 8, 0).Unix()] = true // run by the other binary
	d.start(t, &runtime.ScheduledPipeline{PipelineID: "load", Schedule: runtime.MustCron("* * * * *"), Factory: c.load, After: []string{"extract"}})
	advanceTo(t, clock, d, hms(10, 8, 10))
	if err := d.stop(t); err != nil {
		t.Fatal(err)
	}
	if loads, _, _ := c.snapshot(); len(loads) != 1 {
		t.Fatalf("load ran %v, want the 10:08 slot", loads)
	}
}

// The local coordinator's answer: the last completed slot, or an earlier
// one whose success its run history holds; never a slot that failed or
// did not run, whatever completed after it.
func TestLocalCoordinatorSlotCompleted(t *testing.T) {
	ctx := context.Background()
	c := runtime.NewLocalCoordinator(nil, runtime.WithLocalRunHistory(history.New(history.Policy{})))
	completed := func(slot int64) bool {
		t.Helper()
		ok, err := c.SlotCompleted(ctx, "p", slot)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	if completed(100) {
		t.Fatal("a pipeline that never ran has a completed slot")
	}
	finish := func(slot int64, outcome history.Outcome) {
		t.Helper()
		if ok, err := c.TryAcquireLease(ctx, "p", runtime.SlotRunUnix(slot)); !ok || err != nil {
			t.Fatalf("acquire %d: %v, %v", slot, ok, err)
		}
		if err := c.FinishRun(ctx, history.Record{PipelineID: "p", RunNumber: slot, Outcome: outcome, End: time.Now()}); err != nil {
			t.Fatal(err)
		}
	}
	finish(100, history.OutcomeSucceeded)
	finish(160, history.OutcomeFailed)
	finish(220, history.OutcomeSlotDone)
	for slot, want := range map[int64]bool{40: false, 100: true, 160: false, 220: true, 280: false} {
		if got := completed(slot); got != want {
			t.Errorf("SlotCompleted(%d) = %v, want %v", slot, got, want)
		}
	}
}

// slotCounter is a coordinator whose SlotCompleted answers are counted.
type slotCounter struct {
	*pausableLocal
	asked atomic.Int64
}

func (c *slotCounter) Capabilities() runtime.Capabilities {
	caps := c.pausableLocal.Capabilities()
	caps.SlotCompletionReader = c
	return caps
}

func (c *slotCounter) SlotCompleted(ctx context.Context, id string, slot int64) (bool, error) {
	c.asked.Add(1)
	return c.LocalCoordinator.SlotCompleted(ctx, id, slot)
}

// A wall clock set back while a slot waits for its upstream does not hold
// the questions back by the jump: the wait between them is a duration.
func TestAfterKeepsAskingAfterABackwardClockJump(t *testing.T) {
	fake := clocktest.NewFake(t0) // 10:07:30
	jc := &jumpClock{Fake: fake}
	c := newChain(jc)
	control := newControlCoord()
	control.setPaused("extract", true)
	coord := &slotCounter{pausableLocal: &pausableLocal{LocalCoordinator: runtime.NewLocalCoordinator(jc), paused: control}}
	d := &poolDriver{clock: fake, logs: &syncBuffer{}, opts: []runtime.PoolOption{runtime.WithCoordinator(coord)}}
	d.useClock(jc)
	every := runtime.MustCron("* * * * *")
	d.start(t,
		&runtime.ScheduledPipeline{PipelineID: "extract", Schedule: every, Factory: c.extract},
		&runtime.ScheduledPipeline{PipelineID: "load", Schedule: every, Factory: c.load, After: []string{"extract"}},
	)
	advanceTo(t, fake, d, t0.Add(40*time.Second)) // wall 10:08:10, waiting for 10:08
	before := coord.asked.Load()
	if before == 0 {
		t.Fatal("load never asked about the 10:08 slot")
	}
	jc.jump(-30 * time.Minute)
	advanceTo(t, fake, d, t0.Add(45*time.Second))
	if asked := coord.asked.Load() - before; asked < 3 {
		t.Fatalf("load asked %d times in the 5 s after the clock went back 30 min, want about 5", asked)
	}
	if err := d.stop(t); err != nil {
		t.Fatal(err)
	}
}
