package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/agora-etl/agora/runtime/notify"
)

// Dependencies between pipelines (ScheduledPipeline.After).
//
// A downstream slot is gated before its lease is asked for: the executor
// that would make the attempt asks the coordinator whether every upstream
// completed the same slot (SlotCompletionReader). When one has not, the
// runner goes back to the dispatcher's heap, due again AfterPollInterval
// later, with the slot kept in its rare plan (afterWait) rather than
// decided again. So a waiting pipeline holds no lease, no executor and no
// goroutine between two questions, and every other pipeline's slots start
// on time. A downstream is never let through by a later slot's
// completion: only the upstream's completion of slot S starts S, so a
// skipped or failed upstream slot is never read as done.
//
// A downstream takes the path of one lease request at a time: the
// dispatcher's batch (and lease-ahead) would ask for its lease before the
// gate, so it leaves such runners to their executors (acquireBatch,
// planAhead).

// afterNoNextWait is how long a slot waits for its upstreams when its
// schedule never fires again (an expression whose last day passed) and no
// AfterTimeout is set: there is no next slot to wait until.
const afterNoNextWait = time.Hour

// afterWait is the slot a downstream pipeline waits for, kept in the
// runner's rare plan; touched only by the runner's driver.
type afterWait struct {
	slot  int64 // Unix ns: the cron fire time
	plan  int64 // the plan the slot was decided from, which the run's lateness counts from
	limit int64 // Unix ns: when the slot is skipped if an upstream has still not completed it
	// checked counts the upstreams (in After's order) found to have
	// completed the slot, which are not asked again.
	checked int
	waiting bool
	warned  bool // the coordinator's error was logged for this slot
	// passed is the last slot let through (Unix ns): a retry of it after
	// a failed run does not wait again.
	passed int64
}

// decideAfter is step's decision for a pipeline with After: the slot the
// schedule decides (or the one waited for already), let through only once
// every upstream completed it. It returns the run number, whether to run,
// and the plan the run's lateness is measured from.
func (r *Runner) decideAfter(now time.Time, plan int64) (int64, bool, int64) {
	p := r.planned()
	w := p.after
	if w == nil {
		w = &afterWait{}
		p.after = w
	}
	if !w.waiting {
		n, run := r.decide(now)
		if !run || n <= 0 {
			return n, run, plan
		}
		slot := n * int64(time.Second)
		if slot == w.passed || r.env.paused(r) {
			// A retry, or a paused pipeline, which its attempt skips.
			return n, true, plan
		}
		*w = afterWait{slot: slot, plan: plan, limit: r.afterLimit(slot, now.UnixNano()), waiting: true, passed: w.passed}
	}
	sec := w.slot / int64(time.Second)
	if r.env.paused(r) {
		// Paused while waiting: the attempt skips the slot as paused.
		w.waiting = false
		r.setAwaiting(0)
		return sec, true, w.plan
	}
	upstream, err := r.upstreamPending(w)
	if upstream == "" {
		w.waiting, w.passed = false, w.slot
		r.setAwaiting(0)
		return sec, true, w.plan
	}
	nowN := now.UnixNano()
	if err != nil && !w.warned {
		w.warned = true
		r.env.logger.LogAttrs(context.Background(), slog.LevelWarn, "cannot ask whether an upstream completed the slot; asking again",
			slog.String("pipeline_id", r.id()), slog.Int64("run_number", sec), slog.String("upstream", upstream), slog.Any("error", err))
	}
	if nowN < w.limit {
		r.next = min(nowN+int64(AfterPollInterval), w.limit)
		r.setAwaiting(w.slot)
		r.setNext(r.stateOf())
		return 0, false, plan
	}
	w.waiting = false
	r.upstreamSkipped(w.slot, upstream, err)
	r.next, r.following = r.nextCron(w.slot), 0
	r.setNext(r.stateOf())
	return 0, false, plan
}

// awaitingUpstream reports whether r waits for its upstreams: its next
// attempt is then a poll an AfterPollInterval away, a duration that a
// backward clock jump shifts (runner.shift), not a slot.
func (r *Runner) awaitingUpstream() bool {
	return r.side != nil && r.side.after != nil && r.side.after.waiting
}

// afterLimit is when slot (Unix ns), decided at now, is skipped if an
// upstream has not completed it: AfterTimeout after the slot, by default
// the next slot's time. A slot decided when that has passed already (a
// missed slot caught up) gets the same wait from now.
func (r *Runner) afterLimit(slot, now int64) int64 {
	wait := int64(r.sp.AfterTimeout)
	if wait == 0 {
		wait = int64(afterNoNextWait)
		if next := slotAfter(r.sp, slot); next > slot {
			wait = next - slot
		}
	}
	if slot+wait <= now {
		return now + wait
	}
	return slot + wait
}

// errNoSlotReader answers for a coordinator without SlotCompletionReader;
// the pool refuses such a pipeline before it starts.
var errNoSlotReader = errors.New("runtime: the coordinator cannot tell whether a slot completed")

// upstreamPending asks whether every upstream of r completed w's slot and
// returns the first that has not ("" when all have), with the error of a
// question the coordinator could not answer.
func (r *Runner) upstreamPending(w *afterWait) (string, error) {
	reader := r.env.caps.SlotCompletionReader
	if reader == nil {
		return r.sp.After[w.checked], errNoSlotReader
	}
	if r.env.local == nil {
		// A remote coordinator may block: the executor counts as busy.
		r.env.enterBusy()
		defer r.env.leaveBusy()
	}
	sec := w.slot / int64(time.Second)
	for ; w.checked < len(r.sp.After); w.checked++ {
		id := r.sp.After[w.checked]
		ctx, cancel := context.WithTimeout(r.env.hard, leaseAcquireTimeout)
		done, err := reader.SlotCompleted(ctx, id, sec)
		cancel()
		if err != nil {
			return id, fmt.Errorf("runtime: did %q complete slot %d: %w", id, sec, err)
		}
		if !done {
			return id, nil
		}
	}
	return "", nil
}

// setAwaiting publishes the slot r waits for (Unix ns; 0: none) to /status.
func (r *Runner) setAwaiting(slot int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if slot == 0 && r.rare == nil {
		return
	}
	r.rareLocked().awaitingSlot = slot
}

// upstreamSkipped reports that slot (Unix ns) is skipped because upstream
// had not completed it in time: counted, logged and sent to the notifier.
func (r *Runner) upstreamSkipped(slot int64, upstream string, cause error) {
	sec := slot / int64(time.Second)
	at := time.Unix(sec, 0).UTC()
	reason := UpstreamSkipReason(upstream, at)
	if cause != nil {
		reason += " (the coordinator could not be asked: " + cause.Error() + ")"
	}
	r.mu.Lock()
	rs := r.rareLocked()
	rs.skippedUpstream++
	rs.lastSkipReason = reason
	rs.awaitingSlot = 0
	r.mu.Unlock()
	r.env.logger.LogAttrs(context.Background(), slog.LevelWarn, "slot skipped: its upstream has not completed it",
		slog.String("pipeline_id", r.id()), slog.Int64("run_number", sec), slog.Time("slot", at),
		slog.String("upstream", upstream), slog.String("reason", reason))
	if n := r.env.notifier; n != nil {
		n.Notify(notify.Event{Kind: notify.UpstreamNotCompleted, PipelineID: r.id(), WorkerID: r.env.workerID,
			RunNumber: sec, Upstream: upstream, Time: r.now(), Error: reason})
	}
}

// AfterPollInterval is runtime.AfterPollInterval: how often a slot waiting
// for its upstreams asks the coordinator again.
const AfterPollInterval = time.Second

// UpstreamSkipReason is runtime.UpstreamSkipReason.
func UpstreamSkipReason(upstream string, slot time.Time) string {
	return fmt.Sprintf("upstream %q has not completed slot %s", upstream, slot.UTC().Format(time.RFC3339))
}
