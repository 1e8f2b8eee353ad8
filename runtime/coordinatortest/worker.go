package coordinatortest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
)

// worker is one started coordinator of a fleet, with assertions on its
// answers.
type worker struct {
	t       *testing.T
	f       *fleet
	c       runtime.Coordinator
	id      string
	caps    runtime.Capabilities
	lost    chan runtime.Lease
	stopped bool
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), callTimeout)
	t.Cleanup(cancel)
	return c
}

// acquire asks for pipelineID's lease for run.
func (w *worker) acquire(pipelineID string, run int64) (bool, error) {
	return w.c.TryAcquireLease(ctx(w.t), pipelineID, run)
}

// mustAcquire asks for the lease and fails the test unless it is granted,
// held, and carries what was asked for and a token above every earlier
// one of the pipeline.
func (w *worker) mustAcquire(pipelineID string, run int64) runtime.Lease {
	w.t.Helper()
	ok, err := w.acquire(pipelineID, run)
	if !ok || err != nil {
		w.t.Fatalf("%s: TryAcquireLease(%q, %d) = %v, %v; want true, nil", w.id, pipelineID, run, ok, err)
	}
	return w.granted(pipelineID, run)
}

// freeWait bounds how long a lease another worker gave up (or lost) may
// still be refused: a Redlock coordinator frees the primary's short
// reservation just after a majority of its nodes let the lease go.
const freeWait = 5 * time.Second

// mustAcquireSoon is mustAcquire for a lease another worker just gave up
// or lost: refusals as held are asked again, for up to freeWait.
func (w *worker) mustAcquireSoon(pipelineID string, run int64) runtime.Lease {
	w.t.Helper()
	deadline := time.Now().Add(freeWait)
	for {
		ok, err := w.acquire(pipelineID, run)
		if err != nil {
			w.t.Fatalf("%s: TryAcquireLease(%q, %d) = %v, %v; want true, nil", w.id, pipelineID, run, ok, err)
		}
		if ok {
			return w.granted(pipelineID, run)
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("%s: TryAcquireLease(%q, %d) still refused as held after %v", w.id, pipelineID, run, freeWait)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// granted checks the lease w holds for pipelineID after a grant for run.
func (w *worker) granted(pipelineID string, run int64) runtime.Lease {
	w.t.Helper()
	lease, held := w.c.CurrentLease(pipelineID)
	if !held {
		w.t.Fatalf("%s: CurrentLease(%q) holds nothing after a grant", w.id, pipelineID)
	}
	if lease.PipelineID != pipelineID || lease.WorkerID != w.id {
		w.t.Errorf("%s: lease of %q by %q; want %q by %q", w.id, lease.PipelineID, lease.WorkerID, pipelineID, w.id)
	}
	// A slot's lease names the slot; Auto and Once leases carry a number
	// the coordinator hands out, positive for Auto.
	kind := runtime.RunKindOf(run)
	switch {
	case kind == runtime.RunSlot && (lease.RunNumber != runtime.RunValue(run) || !lease.Slot):
		w.t.Errorf("%s: lease of %q for run %d (slot %v); want slot %d", w.id, pipelineID, lease.RunNumber, lease.Slot, runtime.RunValue(run))
	case kind == runtime.RunCounted && (lease.RunNumber != run || lease.Slot):
		w.t.Errorf("%s: lease of %q for run %d (slot %v); want counted run %d, no slot", w.id, pipelineID, lease.RunNumber, lease.Slot, run)
	case kind != runtime.RunSlot && lease.Slot:
		w.t.Errorf("%s: lease of %q for run %d asked for with %d is marked a slot", w.id, pipelineID, lease.RunNumber, run)
	case run == runtime.RunNumberAuto && lease.RunNumber <= 0:
		w.t.Errorf("%s: RunNumberAuto granted run number %d; want a positive one", w.id, lease.RunNumber)
	}
	w.f.checkToken(w, lease)
	ok, err := w.c.ValidateLease(ctx(w.t), pipelineID, lease.FencingToken)
	if !ok || err != nil {
		w.t.Errorf("%s: ValidateLease(%q, %d) of the lease just granted = %v, %v; want true, nil", w.id, pipelineID, lease.FencingToken, ok, err)
	}
	return lease
}

// checkToken fails the test unless lease's token follows the rule: 0 for
// an unfenced coordinator, otherwise above every token granted before.
func (f *fleet) checkToken(w *worker, lease runtime.Lease) {
	f.t.Helper()
	if f.s.cfg.unfenced {
		if lease.FencingToken != 0 {
			f.t.Errorf("%s: unfenced coordinator granted token %d; want 0", w.id, lease.FencingToken)
		}
		return
	}
	last := f.tokens[lease.PipelineID]
	if lease.FencingToken <= last {
		f.t.Errorf("%s: fencing token %d for %q is not above the last one granted, %d", w.id, lease.FencingToken, lease.PipelineID, last)
	}
	f.tokens[lease.PipelineID] = max(last, lease.FencingToken)
}

// mustRefuse fails the test unless the lease is refused as held.
func (w *worker) mustRefuse(pipelineID string, run int64) {
	w.t.Helper()
	if ok, err := w.acquire(pipelineID, run); ok || err != nil {
		w.t.Fatalf("%s: TryAcquireLease(%q, %d) = %v, %v; want false, nil (held)", w.id, pipelineID, run, ok, err)
	}
}

// mustRefuseDone fails the test unless the lease is refused with
// runtime.ErrSlotCompleted.
func (w *worker) mustRefuseDone(pipelineID string, run int64) {
	w.t.Helper()
	if ok, err := w.acquire(pipelineID, run); ok || !errors.Is(err, runtime.ErrSlotCompleted) {
		w.t.Fatalf("%s: TryAcquireLease(%q, %d) = %v, %v; want false, ErrSlotCompleted", w.id, pipelineID, run, ok, err)
	}
}

// release gives the lease back and checks it is gone.
func (w *worker) release(pipelineID string) {
	w.t.Helper()
	if err := w.c.ReleaseLease(ctx(w.t), pipelineID); err != nil {
		w.t.Fatalf("%s: ReleaseLease(%q): %v", w.id, pipelineID, err)
	}
	w.mustNotHold(pipelineID)
}

// complete completes the lease and checks it is gone.
func (w *worker) complete(pipelineID string) {
	w.t.Helper()
	if err := w.c.CompleteLease(ctx(w.t), pipelineID); err != nil {
		w.t.Fatalf("%s: CompleteLease(%q): %v", w.id, pipelineID, err)
	}
	w.mustNotHold(pipelineID)
}

// mustNotHold fails the test if w holds a lease for pipelineID.
func (w *worker) mustNotHold(pipelineID string) {
	w.t.Helper()
	if l, held := w.c.CurrentLease(pipelineID); held {
		w.t.Fatalf("%s: CurrentLease(%q) still holds run %d (token %d)", w.id, pipelineID, l.RunNumber, l.FencingToken)
	}
}

// mustNotValidate fails the test if token still validates for pipelineID.
func (w *worker) mustNotValidate(pipelineID string, token int64) {
	w.t.Helper()
	if ok, err := w.c.ValidateLease(ctx(w.t), pipelineID, token); ok {
		w.t.Fatalf("%s: ValidateLease(%q, %d) = true, %v after the lease was given up", w.id, pipelineID, token, err)
	}
}

// stop stops w now.
func (w *worker) stop() {
	w.t.Helper()
	w.stopped = true
	if err := w.c.Stop(ctx(w.t)); err != nil {
		w.t.Fatalf("%s: Stop: %v", w.id, err)
	}
}

// needs skips the test unless the capability is there; with Strict it
// fails it.
func (f *fleet) needs(have bool, name string) {
	f.t.Helper()
	switch {
	case have:
	case f.s.cfg.strict:
		f.t.Fatalf("the coordinator has no %s (Strict: it should have every capability)", name)
	default:
		f.t.Skipf("the coordinator has no %s", name)
	}
}
