package coordinatortest

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/history"
)

func capabilityCases() []testCase {
	return []testCase{
		{name: "Capabilities", run: testCapabilities},
		{name: "LocalLeases", run: testLocalLeases},
		{name: "BatchEqualsSingle", run: testBatch},
		{name: "DeferLeaseAlone", run: testDeferred},
		{name: "FleetDeferredStillGranted", fleet: true, run: testFleetDeferred},
		{name: "LeaseAhead", run: testAhead},
		{name: "Health", run: testHealth},
		{name: "Status", run: testStatus},
		{name: "LeaseHolder", run: testHolder},
		{name: "FleetLeaseHolder", fleet: true, run: testFleetHolder},
		{name: "LastCompleted", run: testLastCompleted},
		{name: "RunRecorder", run: testRecorder},
		{name: "NothingPaused", run: testNotPaused},
		{name: "MissedDeadline", run: testMissedDeadline},
		{name: "FleetMissedDeadlineOnce", fleet: true, run: testFleetMissedDeadline},
		{name: "SlotCompleted", run: testSlotCompleted},
		{name: "FleetSlotCompleted", fleet: true, run: testFleetSlotCompleted},
	}
}

// Capabilities answers the same every time (the pool reads it once); with
// Strict, every field is set but LocalLeaser, which only a coordinator
// whose leases live in this process's memory has.
func testCapabilities(t *testing.T, f *fleet) {
	w := f.worker("p")
	first, again := reflect.ValueOf(w.caps), reflect.ValueOf(w.c.Capabilities())
	var missing []string
	for i := range first.NumField() {
		name := first.Type().Field(i).Name
		have := !first.Field(i).IsNil()
		if have != !again.Field(i).IsNil() {
			t.Errorf("Capabilities().%s is set in one call and not in the next", name)
		}
		if !have && name != "LocalLeaser" {
			missing = append(missing, name)
		}
	}
	if f.s.cfg.strict && len(missing) > 0 {
		t.Errorf("the coordinator has no %v (Strict: it should have every capability)", missing)
	}
}

// A pipeline's LocalLeases keep the rules of the methods they stand for,
// and agree with them: a lease taken through one is held for the other,
// a completed slot is refused to both, a released one is granted again.
func testLocalLeases(t *testing.T, f *fleet) {
	w := f.worker("p")
	if w.caps.LocalLeaser == nil {
		// Skipped even with Strict: a coordinator that asks a server
		// has no leases in memory to offer.
		t.Skip("the coordinator has no LocalLeaser")
	}
	l := w.caps.LocalLeaser.LocalLeases("p")
	if l == nil {
		t.Fatal(`LocalLeases("p") = nil`)
	}
	acquire := func(run int64) (runtime.Lease, bool, error) {
		t.Helper()
		return l.Acquire(run, time.Now())
	}
	mustAcquire := func(run int64) runtime.Lease {
		t.Helper()
		lease, ok, err := acquire(run)
		if !ok || err != nil {
			t.Fatalf("Acquire(%d) = %v, %v; want true, nil", run, ok, err)
		}
		if held := w.granted("p", run); held.RunNumber != lease.RunNumber || held.FencingToken != lease.FencingToken {
			t.Errorf("Acquire(%d) returned %+v; CurrentLease holds %+v", run, lease, held)
		}
		return lease
	}
	mustAcquire(f.slot(5))
	if _, ok, err := acquire(f.slot(6)); ok || err != nil {
		t.Fatalf("Acquire while the lease is held = %v, %v; want false, nil", ok, err)
	}
	w.mustRefuse("p", f.slot(6))
	l.Release(true)
	w.mustNotHold("p")
	w.mustRefuseDone("p", f.slot(5))
	if _, ok, err := acquire(f.slot(4)); ok || !errors.Is(err, runtime.ErrSlotCompleted) {
		t.Fatalf("Acquire of a slot before a completed one = %v, %v; want false, ErrSlotCompleted", ok, err)
	}
	mustAcquire(f.slot(6))
	l.Release(false)
	w.mustNotHold("p")
	w.mustAcquire("p", f.slot(6)) // released, not completed
	w.complete("p")
	if _, ok, err := acquire(f.slot(6)); ok || !errors.Is(err, runtime.ErrSlotCompleted) {
		t.Fatalf("Acquire of a slot completed through CompleteLease = %v, %v; want false, ErrSlotCompleted", ok, err)
	}
	mustAcquire(runtime.RunNumberOnce)
	l.Release(true)
	w.mustRefuseDone("p", runtime.RunNumberOnce)
	if w.caps.RunRecorder == nil || w.caps.RunHistoryReader == nil {
		return
	}
	// Record keeps the run in the history RunRecorder keeps.
	lease := mustAcquire(f.slot(7))
	l.Release(true)
	end := time.Now()
	l.Record(history.Record{PipelineID: "p", RunNumber: lease.RunNumber, FencingToken: lease.FencingToken, WorkerID: lease.WorkerID,
		Start: end.Add(-time.Millisecond), End: end, Duration: time.Millisecond, Outcome: history.OutcomeSucceeded})
	hist, err := w.caps.RunHistoryReader.RunHistory(ctx(t), "p", 0)
	if err != nil {
		t.Fatalf("RunHistory: %v", err)
	}
	if len(hist) != 1 || hist[0].RunNumber != lease.RunNumber || hist[0].Outcome != history.OutcomeSucceeded {
		t.Fatalf("RunHistory after Record = %+v; want the one run recorded, %d succeeded", hist, lease.RunNumber)
	}
}

// A pipeline nobody paused is not paused.
func testNotPaused(t *testing.T, f *fleet) {
	w := f.worker("p")
	f.needs(w.caps.FleetController != nil, "FleetController")
	if w.caps.FleetController.Paused("p") {
		t.Fatal("Paused of a pipeline nobody paused = true")
	}
}

// reply is a lease answer reduced to what the contract fixes.
type reply struct {
	Acquired bool
	Done     bool // refused with ErrSlotCompleted
	Failed   error
}

func replyOf(ok bool, err error) reply {
	switch {
	case errors.Is(err, runtime.ErrSlotCompleted):
		return reply{Acquired: ok, Done: true}
	case err != nil:
		return reply{Acquired: ok, Failed: err}
	}
	return reply{Acquired: ok}
}

// A batch decides each request as TryAcquireLease would have: the same
// requests on twin pipelines in the same states get the same answers and
// the same leases.
func testBatch(t *testing.T, f *fleet) {
	var ids []string
	for _, twin := range []string{"single", "batch"} {
		for _, k := range []string{"free", "held", "done", "once", "auto"} {
			ids = append(ids, twin+"-"+k)
		}
	}
	w := f.worker(ids...)
	f.needs(w.caps.BatchLeaser != nil, "BatchLeaser")
	prepare := func(twin string) []runtime.LeaseRequest {
		w.mustAcquire(twin+"-held", f.slot(0))
		w.mustAcquire(twin+"-done", f.slot(2))
		w.complete(twin + "-done")
		return []runtime.LeaseRequest{
			{PipelineID: twin + "-free", RunNumber: f.slot(1)},
			{PipelineID: twin + "-held", RunNumber: f.slot(1)},
			{PipelineID: twin + "-done", RunNumber: f.slot(1)},
			{PipelineID: twin + "-once", RunNumber: runtime.RunNumberOnce},
			{PipelineID: twin + "-auto", RunNumber: runtime.RunNumberAuto},
		}
	}
	singles := prepare("single")
	var want []reply
	for _, r := range singles {
		want = append(want, replyOf(w.acquire(r.PipelineID, r.RunNumber)))
	}
	batch := prepare("batch")
	replies := w.caps.BatchLeaser.TryAcquireLeases(ctx(t), batch)
	if len(replies) != len(batch) {
		t.Fatalf("TryAcquireLeases answered %d requests of %d", len(replies), len(batch))
	}
	for i, r := range replies {
		got := replyOf(r.Acquired, r.Err)
		if got.Failed != nil || want[i].Failed != nil {
			t.Errorf("%s: batch %v, single %v; want no failure", batch[i].PipelineID, got.Failed, want[i].Failed)
			continue
		}
		if got != want[i] {
			t.Errorf("%s run %d: batch answered %+v, a single request %+v", batch[i].PipelineID, batch[i].RunNumber, got, want[i])
		}
		sl, sheld := w.c.CurrentLease(singles[i].PipelineID)
		bl, bheld := w.c.CurrentLease(batch[i].PipelineID)
		slot := batch[i].RunNumber > 0
		if sheld != bheld || (sheld && slot && sl.RunNumber != bl.RunNumber) {
			t.Errorf("%s: holds %+v (%v) after the batch; the single twin %+v (%v)", batch[i].PipelineID, bl, bheld, sl, sheld)
		}
		if r.Acquired {
			w.granted(batch[i].PipelineID, batch[i].RunNumber)
		}
	}
	if want[0] != (reply{Acquired: true}) || want[1] != (reply{}) {
		t.Errorf("single answers %+v; want a grant for the free pipeline and a refusal for the held one", want)
	}
	if want[2] != (reply{Done: true}) {
		t.Errorf("single answer for a slot before a completed one %+v; want ErrSlotCompleted", want[2])
	}
}

// The only worker of a fleet is told to ask at once: nobody else is
// expected to take the slot.
func testDeferred(t *testing.T, f *fleet) {
	w := f.worker("p", "q")
	f.needs(w.caps.BatchLeaser != nil && w.caps.LeaseDeferrer != nil, "LeaseDeferrer")
	for _, req := range []runtime.LeaseRequest{
		{PipelineID: "p", RunNumber: f.slot(0)}, {PipelineID: "q", RunNumber: runtime.RunNumberAuto},
	} {
		if d := w.caps.LeaseDeferrer.DeferLease(req); d != 0 {
			t.Errorf("DeferLease(%+v) = %v for the only worker of the fleet; want 0", req, d)
		}
	}
}

// With two workers running the same pipelines, whatever each is told to
// defer, a worker asking alone gets every free lease.
func testFleetDeferred(t *testing.T, f *fleet) {
	ids := []string{"d0", "d1", "d2", "d3", "d4", "d5"}
	f.worker(ids...) // another live worker, which may be preferred for some
	b := f.worker(ids...)
	f.needs(b.caps.BatchLeaser != nil && b.caps.LeaseDeferrer != nil, "LeaseDeferrer")
	reqs := make([]runtime.LeaseRequest, len(ids))
	for i, id := range ids {
		reqs[i] = runtime.LeaseRequest{PipelineID: id, RunNumber: f.slot(0)}
		if d := b.caps.LeaseDeferrer.DeferLease(reqs[i]); d < 0 {
			t.Errorf("DeferLease(%+v) = %v; want ≥ 0", reqs[i], d)
		}
	}
	for i, r := range b.caps.BatchLeaser.TryAcquireLeases(ctx(t), reqs) {
		if !r.Acquired || r.Err != nil {
			t.Errorf("%s: a free lease asked for after its deferral: %v, %v; want granted", ids[i], r.Acquired, r.Err)
			continue
		}
		b.granted(ids[i], f.slot(0))
	}
}

// A request sent ahead of its slot either grants that slot only, or
// decides nothing (ErrAskAtSlot) and the slot is then asked for as usual.
func testAhead(t *testing.T, f *fleet) {
	w := f.worker("p")
	f.needs(w.caps.BatchLeaser != nil && w.caps.LeaseAheader != nil, "LeaseAheader")
	if a := w.caps.LeaseAheader.LeaseAhead(); a < 0 {
		t.Fatalf("LeaseAhead() = %v; want ≥ 0", a)
	}
	// A minute ahead: more than any lease-ahead the pool uses.
	r := w.caps.BatchLeaser.TryAcquireLeases(ctx(t), []runtime.LeaseRequest{{PipelineID: "p", RunNumber: f.slot(0), Ahead: true}})[0]
	switch {
	case r.Acquired:
		w.granted("p", f.slot(0))
		w.mustRefuse("p", f.slot(0))
	case errors.Is(r.Err, runtime.ErrAskAtSlot):
		w.mustNotHold("p")
		w.mustAcquire("p", f.slot(0))
	default:
		t.Fatalf("a free slot asked for ahead: %v, %v; want a grant or ErrAskAtSlot", r.Acquired, r.Err)
	}
}

func testHealth(t *testing.T, f *fleet) {
	w := f.worker("p")
	f.needs(w.caps.HealthReporter != nil, "HealthReporter")
	if err := w.caps.HealthReporter.Healthy(ctx(t)); err != nil {
		t.Fatalf("Healthy after Start: %v", err)
	}
}

func testStatus(t *testing.T, f *fleet) {
	w := f.worker("p")
	f.needs(w.caps.StatusReporter != nil, "StatusReporter")
	w.mustAcquire("p", f.slot(0))
	b, err := json.Marshal(w.caps.StatusReporter.Status())
	if err != nil {
		t.Fatalf("Status does not marshal to JSON: %v", err)
	}
	if string(b) == "null" {
		t.Fatal("Status is null")
	}
}

// LeaseHolder names the lease in force, then none once it is given back.
func testHolder(t *testing.T, f *fleet) {
	w := f.worker("p")
	f.needs(w.caps.LeaseHolderReporter != nil, "LeaseHolderReporter")
	if _, held, err := w.caps.LeaseHolderReporter.LeaseHolder(ctx(t), "p"); held || err != nil {
		t.Fatalf("LeaseHolder of a pipeline never leased: held %v, %v", held, err)
	}
	lease := w.mustAcquire("p", f.slot(0))
	checkHolder(t, w, w, lease)
	w.release("p")
	if h, held, err := w.caps.LeaseHolderReporter.LeaseHolder(ctx(t), "p"); held || err != nil {
		t.Fatalf("LeaseHolder after the release: %+v held %v, %v; want none", h, held, err)
	}
}

// Another worker's LeaseHolder names the holder.
func testFleetHolder(t *testing.T, f *fleet) {
	a, b := f.worker("p"), f.worker("p")
	f.needs(b.caps.LeaseHolderReporter != nil, "LeaseHolderReporter")
	lease := a.mustAcquire("p", f.slot(0))
	b.mustRefuse("p", f.slot(0))
	checkHolder(t, b, a, lease)
}

func checkHolder(t *testing.T, asker, holder *worker, lease runtime.Lease) {
	t.Helper()
	h, held, err := asker.caps.LeaseHolderReporter.LeaseHolder(ctx(t), lease.PipelineID)
	if !held || err != nil {
		t.Fatalf("%s: LeaseHolder(%q) while %s holds it: held %v, %v", asker.id, lease.PipelineID, holder.id, held, err)
	}
	if h.WorkerID != holder.id || h.RunNumber != lease.RunNumber || h.FencingToken != lease.FencingToken {
		t.Errorf("%s: LeaseHolder = %s run %d token %d; want %s run %d token %d", asker.id,
			h.WorkerID, h.RunNumber, h.FencingToken, holder.id, lease.RunNumber, lease.FencingToken)
	}
}

// LastCompleted is the last completed slot, and never goes back.
func testLastCompleted(t *testing.T, f *fleet) {
	w := f.worker("p")
	f.needs(w.caps.CompletionReader != nil, "CompletionReader")
	last := func() (int64, bool) {
		t.Helper()
		s, ok, err := w.caps.CompletionReader.LastCompleted(ctx(t), "p")
		if err != nil {
			t.Fatalf("LastCompleted: %v", err)
		}
		return s, ok
	}
	if s, ok := last(); ok {
		t.Fatalf("LastCompleted of a pipeline that never completed = %d", s)
	}
	w.mustAcquire("p", f.slot(3))
	w.complete("p")
	w.mustAcquire("p", f.slot(4))
	w.release("p")
	w.mustAcquire("p", runtime.RunNumberAuto)
	w.complete("p")
	if s, ok := last(); !ok || s != runtime.RunValue(f.slot(3)) {
		t.Fatalf("LastCompleted = %d, %v; want %d, the last slot completed", s, ok, runtime.RunValue(f.slot(3)))
	}
}

// FinishRun completes after a success and releases otherwise, and the run
// history reads the runs back, newest first.
func testRecorder(t *testing.T, f *fleet) {
	w := f.worker("p")
	f.needs(w.caps.RunRecorder != nil, "RunRecorder")
	end := time.Now()
	var ends []time.Time
	finish := func(lease runtime.Lease, outcome history.Outcome) {
		t.Helper()
		// Each run ends a second after the one before, so newest first
		// is one order.
		end = end.Add(time.Second)
		ends = append(ends, end)
		start := end.Add(-time.Millisecond)
		rec := history.Record{PipelineID: "p", RunNumber: lease.RunNumber, FencingToken: lease.FencingToken, WorkerID: lease.WorkerID,
			Start: start, End: end, Duration: end.Sub(start), Outcome: outcome}
		if outcome != history.OutcomeSucceeded {
			rec.Error = fmt.Sprintf("run %d failed", lease.RunNumber)
		}
		if err := w.caps.RunRecorder.FinishRun(ctx(t), rec); err != nil {
			t.Fatalf("FinishRun(%s): %v", outcome, err)
		}
		w.mustNotHold("p")
	}
	finish(w.mustAcquire("p", f.slot(1)), history.OutcomeFailed)
	finish(w.mustAcquire("p", f.slot(1)), history.OutcomeSucceeded)
	w.mustRefuseDone("p", f.slot(1))
	f.needs(w.caps.RunHistoryReader != nil, "RunHistoryReader")
	hist, err := w.caps.RunHistoryReader.RunHistory(ctx(t), "p", 0)
	if err != nil {
		t.Fatalf("RunHistory: %v", err)
	}
	if len(hist) != 2 {
		t.Fatalf("RunHistory has %d runs, want 2: %+v", len(hist), hist)
	}
	for i, want := range []history.Outcome{history.OutcomeSucceeded, history.OutcomeFailed} {
		if h := hist[i]; h.Outcome != want || h.RunNumber != runtime.RunValue(f.slot(1)) || h.WorkerID != w.id {
			t.Errorf("RunHistory[%d] = %s run %d by %q; want %s run %d by %q", i, h.Outcome, h.RunNumber, h.WorkerID, want, runtime.RunValue(f.slot(1)), w.id)
		}
		// Every history keeps the end in ms and the duration in µs, the
		// start being the end less the duration.
		wantEnd := time.UnixMilli(ends[len(ends)-1-i].UnixMilli())
		if h := hist[i]; !h.End.Equal(wantEnd) || h.Duration != time.Millisecond || !h.Start.Equal(wantEnd.Add(-time.Millisecond)) {
			t.Errorf("RunHistory[%d] ran %v..%v (%v); want %v..%v (1ms)", i, h.Start, h.End, h.Duration, wantEnd.Add(-time.Millisecond), wantEnd)
		}
	}
}

// MissedDeadline reports a slot once, and only when it has not completed:
// not a completed slot (nor one before it), not a slot already reported,
// not a slot older than the last reported.
func testMissedDeadline(t *testing.T, f *fleet) {
	w := f.worker("p")
	f.needs(w.caps.DeadlineReporter != nil, "DeadlineReporter")
	missed := func(slot int64) bool {
		t.Helper()
		ok, err := w.caps.DeadlineReporter.MissedDeadline(ctx(t), "p", runtime.RunValue(slot))
		if err != nil {
			t.Fatalf("MissedDeadline(%d): %v", runtime.RunValue(slot), err)
		}
		return ok
	}
	w.mustAcquire("p", f.slot(2))
	w.complete("p")
	if missed(f.slot(2)) || missed(f.slot(1)) {
		t.Fatal("MissedDeadline reports a completed slot")
	}
	w.mustAcquire("p", f.slot(3))
	w.release("p") // failed
	if !missed(f.slot(3)) {
		t.Fatal("MissedDeadline does not report a failed slot")
	}
	if missed(f.slot(3)) {
		t.Fatal("MissedDeadline reports a slot twice")
	}
	if !missed(f.slot(5)) || missed(f.slot(4)) {
		t.Fatal("MissedDeadline: a slot nobody ran is reported, then an older one must not be")
	}
}

// Two workers asking about the same slot: exactly one reports it.
func testFleetMissedDeadline(t *testing.T, f *fleet) {
	a, b := f.worker("p"), f.worker("p")
	f.needs(a.caps.DeadlineReporter != nil, "DeadlineReporter")
	slot := runtime.RunValue(f.slot(0))
	ra, err := a.caps.DeadlineReporter.MissedDeadline(ctx(t), "p", slot)
	if err != nil {
		t.Fatal(err)
	}
	rb, err := b.caps.DeadlineReporter.MissedDeadline(ctx(t), "p", slot)
	if err != nil {
		t.Fatal(err)
	}
	if ra == rb {
		t.Fatalf("MissedDeadline answered %v and %v; want exactly one worker to report the slot", ra, rb)
	}
}

// SlotCompleted answers for one slot: its own completion, never a later
// slot's, a failed run's, or another pipeline's. With a RunRecorder, an
// earlier slot whose success was recorded stays completed after later
// ones complete.
func testSlotCompleted(t *testing.T, f *fleet) {
	w := f.worker("p", "q")
	f.needs(w.caps.SlotCompletionReader != nil, "SlotCompletionReader")
	completed := func(pipelineID string, slot int64) bool {
		t.Helper()
		ok, err := w.caps.SlotCompletionReader.SlotCompleted(ctx(t), pipelineID, runtime.RunValue(slot))
		if err != nil {
			t.Fatalf("SlotCompleted(%q, %d): %v", pipelineID, runtime.RunValue(slot), err)
		}
		return ok
	}
	if completed("p", f.slot(1)) {
		t.Fatal("SlotCompleted: a slot of a pipeline that never ran")
	}
	w.mustAcquire("p", f.slot(1))
	w.release("p") // failed
	if completed("p", f.slot(1)) {
		t.Fatal("SlotCompleted: a slot whose run failed")
	}
	w.mustAcquire("p", f.slot(2))
	w.complete("p")
	if !completed("p", f.slot(2)) {
		t.Fatal("SlotCompleted: not the slot just completed")
	}
	if completed("p", f.slot(1)) {
		t.Fatal("SlotCompleted: a slot that failed, once a later one completed")
	}
	if completed("p", f.slot(3)) || completed("q", f.slot(2)) {
		t.Fatal("SlotCompleted: a later slot, or another pipeline's")
	}
	if w.caps.RunRecorder == nil {
		return
	}
	finish := func(slot int64, outcome history.Outcome) {
		t.Helper()
		lease := w.mustAcquire("p", slot)
		end := time.Now()
		rec := history.Record{PipelineID: "p", RunNumber: lease.RunNumber, FencingToken: lease.FencingToken, WorkerID: lease.WorkerID,
			Start: end.Add(-time.Millisecond), End: end, Duration: time.Millisecond, Outcome: outcome}
		if outcome != history.OutcomeSucceeded {
			rec.Error = "failed"
		}
		if err := w.caps.RunRecorder.FinishRun(ctx(t), rec); err != nil {
			t.Fatalf("FinishRun: %v", err)
		}
	}
	finish(f.slot(3), history.OutcomeSucceeded)
	finish(f.slot(4), history.OutcomeFailed)
	finish(f.slot(5), history.OutcomeSlotDone)
	finish(f.slot(6), history.OutcomeSucceeded)
	for i, want := range map[int]bool{3: true, 4: false, 5: true, 6: true} {
		if got := completed("p", f.slot(i)); got != want {
			t.Errorf("SlotCompleted(slot %d) = %v after later slots completed, want %v (recorded in the run history)", i, got, want)
		}
	}
}

// A slot completed by one worker is completed for every worker.
func testFleetSlotCompleted(t *testing.T, f *fleet) {
	a, b := f.worker("p"), f.worker("p")
	f.needs(b.caps.SlotCompletionReader != nil, "SlotCompletionReader")
	a.mustAcquire("p", f.slot(1))
	a.complete("p")
	ok, err := b.caps.SlotCompletionReader.SlotCompleted(ctx(t), "p", runtime.RunValue(f.slot(1)))
	if err != nil || !ok {
		t.Fatalf("SlotCompleted on another worker = %v, %v; want true", ok, err)
	}
}
