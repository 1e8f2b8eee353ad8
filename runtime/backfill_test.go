package runtime_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/clocktest"
	"github.com/agora-etl/agora/runtime/history"
)

// fakeBackfill is a Backfiller over the local coordinator: it hands out
// the slots it was given, oldest first, at most parallel at once, and
// records how each ended.
type fakeBackfill struct {
	*runtime.LocalCoordinator
	mu       sync.Mutex
	pipeline string
	slots    []time.Time
	parallel int
	params   map[string]string
	token    int64
	held     map[int64]runtime.Lease // by token
	ended    map[int64]*history.Record
	finished int
	lost     func(string, runtime.Lease)
	paused   bool
	// reprocess marks every lease handed out Reprocess.
	reprocess bool
}

func newFakeBackfill(clock runtime.Clock, pipeline string, parallel int, slots ...time.Time) *fakeBackfill {
	return &fakeBackfill{LocalCoordinator: runtime.NewLocalCoordinator(clock), pipeline: pipeline, slots: slots, parallel: parallel,
		token: 1000, held: map[int64]runtime.Lease{}, ended: map[int64]*history.Record{}}
}

func (f *fakeBackfill) Capabilities() runtime.Capabilities {
	caps := f.LocalCoordinator.Capabilities()
	caps.Backfiller = f
	caps.FleetController = f
	return caps
}

func (f *fakeBackfill) Paused(string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.paused
}

func (f *fakeBackfill) SetTriggerHandler(func(runtime.Trigger)) {}

func (f *fakeBackfill) setPaused(p bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.paused = p
}

func (f *fakeBackfill) SetLeaseLostCallback(cb func(string, runtime.Lease)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lost = cb
}

func (f *fakeBackfill) Backfilling() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.slots) == 0 && len(f.held) == 0 {
		return nil
	}
	return []string{f.pipeline}
}

func (f *fakeBackfill) ClaimBackfill(_ context.Context, pipelineID string, s runtime.Schedule) (runtime.BackfillSlot, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if pipelineID != f.pipeline || len(f.slots) == 0 || len(f.held) >= f.parallel {
		return runtime.BackfillSlot{}, false, nil
	}
	if s.Kind() != runtime.ScheduleCron {
		return runtime.BackfillSlot{}, false, errors.New("not the pipeline's schedule")
	}
	slot := f.slots[0]
	f.slots = f.slots[1:]
	f.token++
	l := runtime.Lease{PipelineID: pipelineID, WorkerID: "w", RunNumber: slot.Unix(), Slot: true, Backfill: true, Reprocess: f.reprocess, FencingToken: f.token}
	f.held[f.token] = l
	return runtime.BackfillSlot{Lease: l, Params: f.params}, true, nil
}

func (f *fakeBackfill) FinishBackfill(_ context.Context, lease runtime.Lease, rec *history.Record) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.held[lease.FencingToken]; !ok {
		return errors.New("not held")
	}
	delete(f.held, lease.FencingToken)
	f.ended[lease.RunNumber] = rec
	f.finished++
	return nil
}

// loseLease reports the lease of slot lost, as a coordinator whose renewal
// failed does.
func (f *fakeBackfill) loseLease(slot time.Time) bool {
	f.mu.Lock()
	var lease runtime.Lease
	found := false
	for tok, l := range f.held {
		if l.RunNumber == slot.Unix() {
			lease, found = l, true
			delete(f.held, tok)
		}
	}
	cb := f.lost
	f.mu.Unlock()
	if found && cb != nil {
		cb(lease.PipelineID, lease)
	}
	return found
}

func (f *fakeBackfill) outcomes() (finished int, ended map[int64]*history.Record) {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make(map[int64]*history.Record, len(f.ended))
	for k, v := range f.ended {
		out[k] = v
	}
	return f.finished, out
}

// eventually waits, real time, for cond: backfill slots run in goroutines
// of their own, beside the dispatcher the drivers settle.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestBackfillSlotsRunBesideTheSchedule: a pool runs the slots a
// Backfiller hands out, each under its backfill lease with its params,
// while a backfill slot that blocks does not delay the schedule's slots;
// /status and /metrics count them by outcome.
func TestBackfillSlotsRunBesideTheSchedule(t *testing.T) {
	clock := clocktest.NewFake(t0) // 10:07:30
	old := []time.Time{hms(9, 0, 0), hms(9, 1, 0), hms(9, 2, 0), hms(9, 3, 0)}
	coord := newFakeBackfill(clock, "p", 1, old...)
	coord.params = map[string]string{"day": "2025-03-09"}
	release := make(chan struct{})
	var (
		mu        sync.Mutex
		scheduled []time.Time
		backfill  []runtime.Lease
		params    []string
	)
	factory := func(context.Context) (runtime.Pipeline, error) {
		return runtime.PipelineFunc(func(ctx context.Context) error {
			lease, _ := runtime.LeaseFromContext(ctx)
			if !lease.Backfill {
				mu.Lock()
				scheduled = append(scheduled, clock.Now())
				mu.Unlock()
				return nil
			}
			mu.Lock()
			backfill = append(backfill, lease)
			params = append(params, runtime.ParamsFromContext(ctx)["day"])
			mu.Unlock()
			switch lease.RunNumber {
			case hms(9, 0, 0).Unix():
				<-release // blocks while the schedule goes on
			case hms(9, 1, 0).Unix():
				return errors.New("source gone")
			case hms(9, 2, 0).Unix():
				return runtime.ErrSlotCompleted // a sink's ledger says so
			}
			return nil
		}), nil
	}
	d := &poolDriver{clock: clock, logs: &syncBuffer{}, opts: []runtime.PoolOption{runtime.WithCoordinator(coord)}}
	d.start(t, &runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.MustCron("*/10 * * * * *"), Factory: factory})
	advanceTo(t, clock, d, hms(10, 7, 31)) // the first poll
	eventually(t, "the first backfill slot to start", func() bool { mu.Lock(); defer mu.Unlock(); return len(backfill) == 1 })
	advanceTo(t, clock, d, hms(10, 8, 30))
	mu.Lock()
	onTime := append([]time.Time(nil), scheduled...)
	mu.Unlock()
	if len(onTime) != 6 {
		t.Fatalf("the schedule ran %d slots from 10:07:30 to 10:08:30 beside a blocked backfill slot, want 6", len(onTime))
	}
	for _, at := range onTime {
		if at.Second()%10 != 0 {
			t.Fatalf("a scheduled slot started at %s, not on its boundary", at.Format(time.RFC3339Nano))
		}
	}
	if st := d.status(t, "p"); st.BackfillRunning != 1 {
		t.Fatalf("status while the slot runs: %+v", st)
	}
	close(release)
	eventually(t, "every backfill slot to end", func() bool { n, _ := coord.outcomes(); return n == 4 })
	_, ended := coord.outcomes()
	want := map[int64]history.Outcome{hms(9, 0, 0).Unix(): history.OutcomeSucceeded, hms(9, 1, 0).Unix(): history.OutcomeFailed,
		hms(9, 2, 0).Unix(): history.OutcomeSlotDone, hms(9, 3, 0).Unix(): history.OutcomeSucceeded}
	for slot, o := range want {
		if rec := ended[slot]; rec == nil || rec.Outcome != o || rec.RunNumber != slot || rec.Params["day"] != "2025-03-09" {
			t.Errorf("slot %s ended %+v, want %s", time.Unix(slot, 0).UTC().Format(time.TimeOnly), rec, o)
		}
	}
	if rec := ended[hms(9, 1, 0).Unix()]; rec == nil || !strings.Contains(rec.Error, "source gone") {
		t.Errorf("the failed slot's record does not carry its error: %+v", rec)
	}
	mu.Lock()
	for i, l := range backfill {
		if !l.Slot || l.FencingToken <= 1000 || params[i] != "2025-03-09" {
			t.Errorf("backfill run %d: lease %+v, params day %q", i, l, params[i])
		}
	}
	mu.Unlock()
	st := d.status(t, "p")
	if st.BackfillDone != 2 || st.BackfillFailed != 1 || st.BackfillSkipped != 1 || st.BackfillRunning != 0 {
		t.Fatalf("status after the backfill: done %d failed %d skipped %d running %d; want 2 1 1 0",
			st.BackfillDone, st.BackfillFailed, st.BackfillSkipped, st.BackfillRunning)
	}
	if st.ConsecutiveErrors != 0 || st.Failures != 0 {
		t.Fatalf("a failed backfill slot counted against the schedule: %+v", st)
	}
	fams, err := d.metrics.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		byName[f.GetName()] = f
	}
	for outcome, n := range map[string]float64{"done": 2, "failed": 1, "skipped": 1} {
		if got := sample(t, byName, "agora_backfill_slots_total", map[string]string{"pipeline": "p", "outcome": outcome}).GetCounter().GetValue(); got != n {
			t.Errorf("agora_backfill_slots_total{outcome=%q} = %v, want %v", outcome, got, n)
		}
	}
	if got := sample(t, byName, "agora_backfill_slots_running", map[string]string{"pipeline": "p"}).GetGauge().GetValue(); got != 0 {
		t.Errorf("agora_backfill_slots_running = %v, want 0", got)
	}
	if err := d.stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestBackfillSlotLostCancelsOnlyItsRun: a backfill slot whose lease is
// lost has its run cancelled with ErrLeaseLost and is not finished (it is
// handed out again by the coordinator); the schedule is unaffected.
func TestBackfillSlotLostCancelsOnlyItsRun(t *testing.T) {
	clock := clocktest.NewFake(t0)
	coord := newFakeBackfill(clock, "p", 1, hms(9, 0, 0))
	started := make(chan struct{})
	cause := make(chan error, 1)
	factory := func(context.Context) (runtime.Pipeline, error) {
		return runtime.PipelineFunc(func(ctx context.Context) error {
			if lease, _ := runtime.LeaseFromContext(ctx); lease.Backfill {
				close(started)
				<-ctx.Done()
				cause <- context.Cause(ctx)
				return ctx.Err()
			}
			return nil
		}), nil
	}
	d := &poolDriver{clock: clock, logs: &syncBuffer{}, opts: []runtime.PoolOption{runtime.WithCoordinator(coord)}}
	d.start(t, &runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.MustCron("* * * * *"), Factory: factory})
	advanceTo(t, clock, d, hms(10, 7, 31))
	<-started
	if !coord.loseLease(hms(9, 0, 0)) {
		t.Fatal("the slot was not held")
	}
	if err := <-cause; !errors.Is(err, runtime.ErrLeaseLost) {
		t.Fatalf("the lost slot's run was cancelled with %v, want ErrLeaseLost", err)
	}
	eventually(t, "the lost slot's run to return", func() bool { return d.status(t, "p").BackfillRunning == 0 })
	if n, _ := coord.outcomes(); n != 0 {
		t.Fatalf("a lost slot was finished %d times; the coordinator hands it out again", n)
	}
	if st := d.status(t, "p"); st.BackfillFailed != 0 || st.BackfillDone != 0 || st.LeaseLost != 0 {
		t.Fatalf("a lost backfill slot was counted: %+v", st)
	}
	if !strings.Contains(d.logs.String(), "backfill slot interrupted; it is handed out again") {
		t.Errorf("no log line for the interrupted slot:\n%s", d.logs.String())
	}
	if err := d.stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestBackfillWaitsWhileThePipelineIsPaused: a paused pipeline claims no
// backfill slot; resumed, it claims them at the next poll.
func TestBackfillWaitsWhileThePipelineIsPaused(t *testing.T) {
	clock := clocktest.NewFake(t0)
	coord := newFakeBackfill(clock, "p", 2, hms(9, 0, 0), hms(9, 1, 0))
	coord.setPaused(true)
	var mu sync.Mutex
	ran := 0
	factory := func(context.Context) (runtime.Pipeline, error) {
		return runtime.PipelineFunc(func(ctx context.Context) error {
			if lease, _ := runtime.LeaseFromContext(ctx); lease.Backfill {
				mu.Lock()
				ran++
				mu.Unlock()
			}
			return nil
		}), nil
	}
	d := &poolDriver{clock: clock, logs: &syncBuffer{}, opts: []runtime.PoolOption{runtime.WithCoordinator(coord)}}
	d.start(t, &runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.MustCron("* * * * *"), Factory: factory})
	advanceTo(t, clock, d, hms(10, 8, 30))
	time.Sleep(20 * time.Millisecond) // a poll that wrongly claimed would have started by now
	mu.Lock()
	n := ran
	mu.Unlock()
	if n != 0 {
		t.Fatalf("%d backfill slots ran while the pipeline was paused", n)
	}
	coord.setPaused(false)
	advanceTo(t, clock, d, hms(10, 8, 32))
	eventually(t, "both slots to run after the resume", func() bool { n, _ := coord.outcomes(); return n == 2 })
	if err := d.stop(t); err != nil {
		t.Fatal(err)
	}
}

// replacing is a pipeline that says whether it replaces a slot's output.
type replacing struct {
	runtime.PipelineFunc
	replaces bool
}

func (p replacing) ReplacesSlots() bool { return p.replaces }

// TestBackfillReprocessNeedsAPipelineThatReplacesSlots: a reprocessed
// slot runs only with a pipeline that says a re-run replaces the slot's
// output; any other fails with ErrNotReprocessable without running.
func TestBackfillReprocessNeedsAPipelineThatReplacesSlots(t *testing.T) {
	for _, tc := range []struct {
		name string
		p    func(run runtime.PipelineFunc) runtime.Pipeline
		ran  bool
	}{
		{"plain pipeline", func(run runtime.PipelineFunc) runtime.Pipeline { return run }, false},
		{"does not replace", func(run runtime.PipelineFunc) runtime.Pipeline { return replacing{run, false} }, false},
		{"replaces", func(run runtime.PipelineFunc) runtime.Pipeline { return replacing{run, true} }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := clocktest.NewFake(t0)
			coord := newFakeBackfill(clock, "p", 1, hms(9, 0, 0))
			coord.reprocess = true
			var mu sync.Mutex
			ran := false
			run := runtime.PipelineFunc(func(ctx context.Context) error {
				if lease, _ := runtime.LeaseFromContext(ctx); lease.Backfill {
					mu.Lock()
					ran = true
					mu.Unlock()
				}
				return nil
			})
			d := &poolDriver{clock: clock, logs: &syncBuffer{}, opts: []runtime.PoolOption{runtime.WithCoordinator(coord)}}
			d.start(t, &runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.MustCron("* * * * *"),
				Factory: func(context.Context) (runtime.Pipeline, error) { return tc.p(run), nil }})
			advanceTo(t, clock, d, hms(10, 7, 31))
			eventually(t, "the slot to end", func() bool { n, _ := coord.outcomes(); return n == 1 })
			_, ended := coord.outcomes()
			rec := ended[hms(9, 0, 0).Unix()]
			mu.Lock()
			defer mu.Unlock()
			if ran != tc.ran {
				t.Fatalf("the pipeline ran: %v, want %v", ran, tc.ran)
			}
			if tc.ran && (rec == nil || rec.Outcome != history.OutcomeSucceeded) {
				t.Fatalf("record %+v, want a success", rec)
			}
			if !tc.ran && (rec == nil || rec.Outcome != history.OutcomeFailed || !strings.Contains(rec.Error, "reprocess refused")) {
				t.Fatalf("record %+v, want a failure saying reprocess refused", rec)
			}
			if err := d.stop(t); err != nil {
				t.Fatal(err)
			}
		})
	}
}
