package distributed

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/distributed/internal/leasebackend"
)

func TestReleaseHandsOverAtOnce(t *testing.T) {
	u := newUnit(t)
	a := u.started(u.options(), "a")
	b := u.started(u.options(), "b")
	mustAcquire(t, a, "p", 9)
	if err := a.ReleaseLease(ctx, "p"); err != nil {
		t.Fatal(err)
	}
	if _, held := a.CurrentLease("p"); held {
		t.Fatal("released lease still current")
	}
	mustAcquire(t, b, "p", 9)
	if err := a.ReleaseLease(ctx, "p"); !errors.Is(err, ErrLeaseNotHeld) {
		t.Fatalf("second release: %v, want ErrLeaseNotHeld", err)
	}
	if st := a.Status().(CoordinatorStatus); st.Released != 1 {
		t.Errorf("Released = %d", st.Released)
	}
}

func TestReleaseAndRenewByANonOwnerChangeNothing(t *testing.T) {
	u := newUnit(t)
	a := u.started(u.options(), "a")
	b := u.started(u.options(), "b")
	recordLost(a)
	stale := mustAcquire(t, a, "p", 9)
	// a's lease expires unnoticed (a's clock is still) and b takes over.
	u.mr.FastForward(31 * time.Second)
	current := mustAcquire(t, b, "p", 9)

	if err := a.ReleaseLease(ctx, "p"); !errors.Is(err, ErrLeaseNotHeld) {
		t.Fatalf("stale owner's release: %v, want ErrLeaseNotHeld", err)
	}
	if ok, _ := b.ValidateLease(ctx, "p", current.FencingToken); !ok {
		t.Fatal("stale owner's release deleted the new holder's lease")
	}

	// Directly at the script level: right owner, wrong token; wrong owner,
	// right token.
	for _, ref := range []leaseRef{
		{PipelineID: "p", Owner: b.owner, Token: stale.FencingToken},
		{PipelineID: "p", Owner: a.owner, Token: current.FencingToken},
	} {
		if owned, err := a.backend.release(ctx, ref); owned || err != nil {
			t.Errorf("release(%+v) = %v, %v", ref, owned, err)
		}
		res := a.backend.renew(ctx, []leaseRef{ref})[0]
		if res.Held || res.Err != nil {
			t.Errorf("renew(%+v) = %+v", ref, res)
		}
	}
	u.mr.FastForward(10 * time.Second)
	if ttl := u.mr.TTL("agora:distributed:lease:{p}"); ttl != 20*time.Second {
		t.Errorf("new holder's TTL = %s, want 20s (untouched by the non-owners)", ttl)
	}
	if ok, _ := b.ValidateLease(ctx, "p", current.FencingToken); !ok {
		t.Fatal("non-owner calls changed the lease")
	}
}

func TestCompleteOfALostLeaseStillRecordsTheSlot(t *testing.T) {
	u := newUnit(t)
	a := u.started(u.options(), "a")
	b := u.started(u.options(), "b")
	mustAcquire(t, a, "p", 300)
	u.mr.FastForward(31 * time.Second)
	mustAcquire(t, b, "p", 300)
	// a's run finished anyway: its slot is done, b's lease is left alone.
	if err := a.CompleteLease(ctx, "p"); !errors.Is(err, ErrLeaseNotHeld) {
		t.Fatalf("CompleteLease of a lost lease: %v, want ErrLeaseNotHeld", err)
	}
	if got := u.mr.Exists("agora:distributed:lease:{p}"); !got {
		t.Fatal("completion by a non-owner deleted the holder's lease")
	}
	if done, _ := u.mr.ZScore("agora:distributed:completed:{p}", "slot"); done != 300 {
		t.Fatalf("done = %v, want 300", done)
	}
}

func TestReleaseIgnoresACancelledContext(t *testing.T) {
	u := newUnit(t)
	a := u.started(u.options(), "a")
	b := u.started(u.options(), "b")
	mustAcquire(t, a, "p", 9)
	cctx, cancel := contextCancelled()
	defer cancel()
	if err := a.ReleaseLease(cctx, "p"); err != nil {
		t.Fatalf("release with a cancelled context: %v", err)
	}
	mustAcquire(t, b, "p", 9)
}

func TestReleaseRetriesAndGivesUpWhenRedisIsDown(t *testing.T) {
	u := newUnit(t)
	a := u.started(u.options(), "a")
	mustAcquire(t, a, "p", 9)
	u.mr.SetError("ERR down")
	if err := a.ReleaseLease(ctx, "p"); err == nil || errors.Is(err, ErrLeaseNotHeld) {
		t.Fatalf("release with Redis down: %v, want a transport error", err)
	}
	if st := a.Status().(CoordinatorStatus); st.Errors < releaseAttempts {
		t.Errorf("Errors = %d, want at least %d attempts", st.Errors, releaseAttempts)
	}
	if _, held := a.CurrentLease("p"); held {
		t.Error("lease still current after a failed release; it must not be renewed")
	}
}

func TestStopReleasesEveryLeaseAndUnregisters(t *testing.T) {
	u := newUnit(t)
	a := u.started(u.options(), "a")
	b := u.started(u.options(), "b")
	for _, p := range []string{"p1", "p2", "p3"} {
		mustAcquire(t, a, p, 9)
	}
	cctx, cancel := contextCancelled()
	defer cancel()
	if err := a.Stop(cctx); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"p1", "p2", "p3"} {
		mustAcquire(t, b, p, 9)
	}
	if u.mr.Exists("agora:distributed:worker:a") {
		t.Error("worker record left after Stop")
	}
	if err := a.Stop(ctx); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	// Stopped, the coordinator can start again.
	if err := a.Start(ctx, "a", nil); err != nil {
		t.Fatalf("Start after Stop: %v", err)
	}
	mustAcquire(t, a, "p4", 1)
}

// holdAcquire is a go-redis hook that holds the first acquire script call
// until released, so a test can act while an acquire is in flight.
type holdAcquire struct {
	entered, release chan struct{}
	once             sync.Once
}

func (h *holdAcquire) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *holdAcquire) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if cmd.Name() == "evalsha" && len(cmd.Args()) > 1 && cmd.Args()[1] == leasebackend.AcquireScript.Hash() {
			first := false
			h.once.Do(func() { first = true })
			if first {
				close(h.entered)
				<-h.release
			}
		}
		return next(ctx, cmd)
	}
}

func (h *holdAcquire) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// TestStopWaitsForAnAcquireInFlight stops and closes a coordinator while
// one of its acquires is on the wire. The acquire lands after Stop began,
// so it must hand the lease back itself, and Stop must wait for that:
// otherwise Close shuts the client first and the lease blocks every other
// worker until its TTL.
func TestStopWaitsForAnAcquireInFlight(t *testing.T) {
	u := newUnit(t)
	a := u.started(u.options(), "a")
	b := u.started(u.options(), "b")
	hook := &holdAcquire{entered: make(chan struct{}), release: make(chan struct{})}
	a.client.AddHook(hook)

	acquired := make(chan error, 1)
	go func() {
		ok, err := a.TryAcquireLease(ctx, "p", slotRun(9))
		if ok {
			err = errors.New("acquired after Stop")
		}
		acquired <- err
	}()
	<-hook.entered
	closed := make(chan error, 1)
	go func() { closed <- a.Close() }()
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) with an acquire still in flight", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(hook.release)
	if err := <-acquired; !errors.Is(err, ErrNotStarted) {
		t.Fatalf("acquire that landed after Stop: %v; want ErrNotStarted", err)
	}
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	mustAcquire(t, b, "p", 9) // the lease went back at once
}

// TestCompletionIsRecordedOnceRedisAnswersAgain completes a run while
// Redis refuses every command, then lets it answer again within the
// lease's renewal deadline: the completion gets recorded in the background,
// so the slot can never be leased again.
func TestCompletionIsRecordedOnceRedisAnswersAgain(t *testing.T) {
	u := newUnit(t)
	a := u.started(u.options(), "a")
	b := u.started(u.options(), "b")
	mustAcquire(t, a, "p", 9)
	u.mr.SetError("ERR down")
	if err := a.CompleteLease(ctx, "p"); err == nil {
		t.Fatal("CompleteLease with Redis down succeeded")
	}
	u.mr.SetError("")
	waitUntil(t, 3*completionRetryPause, "the completion to be recorded", func() bool {
		done, _ := u.mr.ZScore("agora:distributed:completed:{p}", "slot")
		return done == 9
	})
	// Counted just after Redis has it.
	waitUntil(t, time.Second, "the completion to be counted", func() bool {
		return a.Status().(CoordinatorStatus).Completed == 1
	})
	u.advance(time.Minute) // the lease has long expired
	if ok, err := b.TryAcquireLease(ctx, "p", slotRun(9)); ok || !errors.Is(err, runtime.ErrSlotCompleted) {
		t.Fatalf("slot 9 after its completion was recorded: %v, %v; want ErrSlotCompleted", ok, err)
	}
}

// TestStopEndsTheCompletionRetries stops the worker while a completion is
// still being retried: Stop does not wait out the renewal deadline.
func TestStopEndsTheCompletionRetries(t *testing.T) {
	u := newUnit(t)
	a := u.started(u.options(), "a")
	mustAcquire(t, a, "p", 9)
	u.mr.SetError("ERR down")
	if err := a.CompleteLease(ctx, "p"); err == nil {
		t.Fatal("CompleteLease with Redis down succeeded")
	}
	start := time.Now()
	_ = a.Stop(ctx)
	if took := time.Since(start); took > 2*completionRetryPause {
		t.Fatalf("Stop took %s with a completion being retried", took)
	}
}
