package engine

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/agora-etl/agora/runtime/history"
)

// Backfiller is runtime.Backfiller in the engine's types; runtime's
// adapter gives ClaimBackfill the pipeline's schedule.
type Backfiller interface {
	Backfilling() []string
	ClaimBackfill(ctx context.Context, pipelineID string) (BackfillSlot, bool, error)
	FinishBackfill(ctx context.Context, lease Lease, rec *history.Record) error
}

// BackfillSlot is runtime.BackfillSlot.
type BackfillSlot struct {
	Lease        Lease
	Params       map[string]string
	WaitUpstream bool
}

// BackfillUpstreamWait is runtime.BackfillUpstreamWait.
const BackfillUpstreamWait = time.Hour

// BackfillPollInterval is runtime.BackfillPollInterval.
const BackfillPollInterval = time.Second

// backfills runs the slots of the fleet's backfills beside the schedule:
// every BackfillPollInterval it asks the Backfiller which of the pool's
// pipelines have one running, claims their slots while it hands them out
// (the coordinator bounds them by the backfill's parallel), and runs each
// in a goroutine of its own, so a backfill never holds up a scheduled
// attempt, and a scheduled one never waits for a backfill's slot. A slot
// runs as a scheduled one does (factory, run context, timeout, tracing),
// under its own lease, which the coordinator renews; its run goes into
// the history through FinishBackfill, not the runner's scheduled state, so
// a failed backfill slot neither backs the schedule off nor counts
// towards its consecutive errors.
type backfills struct {
	env  *runEnv
	bf   Backfiller
	byID map[string]*Runner // the pool's cron and every pipelines
	quit chan struct{}
	done chan struct{}
	once sync.Once
	wg   sync.WaitGroup // slot runs in flight

	mu   sync.Mutex
	runs map[int64]*runContext // by fencing token
	// waiting are the slots waiting for their upstreams, by fencing
	// token; each channel is closed when the slot's lease is lost.
	waiting map[int64]chan struct{}
}

// newBackfills returns the backfill driver of runners, nil when the
// coordinator runs no backfills or no pipeline has slots.
func newBackfills(env *runEnv, runners []*Runner) *backfills {
	bf := env.caps.Backfiller
	if bf == nil {
		return nil
	}
	b := &backfills{env: env, bf: bf, byID: map[string]*Runner{}, quit: make(chan struct{}), done: make(chan struct{}), runs: map[int64]*runContext{}}
	for _, r := range runners {
		if k := r.sp.Schedule.Kind(); k == ScheduleCron || k == ScheduleEvery {
			b.byID[r.id()] = r
		}
	}
	if len(b.byID) == 0 {
		return nil
	}
	return b
}

// start starts the polls. The first poll's timer is made here, not in
// the goroutine, so it counts from the pool's start whatever the clock
// does before the goroutine runs.
func (b *backfills) start() { go b.loop(b.env.clock.NewTimer(BackfillPollInterval)) }

// stop ends the polls; slots in flight go on (idle waits for them).
func (b *backfills) stop() {
	b.once.Do(func() { close(b.quit) })
	<-b.done
}

// idle returns a channel closed once no slot runs; call it after stop.
func (b *backfills) idle() <-chan struct{} {
	ch := make(chan struct{})
	go func() {
		b.wg.Wait()
		close(ch)
	}()
	return ch
}

func (b *backfills) loop(t Timer) {
	defer close(b.done)
	defer t.Stop()
	for {
		select {
		case <-b.quit:
			return
		case <-t.C():
		}
		b.poll()
		t.Reset(BackfillPollInterval)
	}
}

// poll claims the slots the running backfills of the pool's pipelines
// hand out now.
func (b *backfills) poll() {
	for _, id := range b.bf.Backfilling() {
		if r := b.byID[id]; r != nil {
			b.claim(r)
		}
	}
}

// claim claims and starts r's backfill slots while they are handed out.
// A slot that ends claims again at once, so a backfill moves on at the
// pace of its runs, not of the polls.
func (b *backfills) claim(r *Runner) {
	for {
		select {
		case <-b.quit:
			return
		default:
		}
		if r.isStopped() || b.env.paused(r) {
			// A paused pipeline's backfill waits with its schedule.
			return
		}
		ctx, cancel := context.WithTimeout(b.env.hard, leaseAcquireTimeout)
		slot, ok, err := b.bf.ClaimBackfill(ctx, r.id())
		cancel()
		if err != nil {
			r.logRun(slog.LevelWarn, "cannot ask for a backfill slot; asking again at the next poll", Lease{RunNumber: RunNumberAuto}, slog.Any("error", err))
			return
		}
		if !ok {
			return
		}
		b.wg.Add(1)
		go b.run(r, slot)
	}
}

// run runs one claimed slot and finishes it.
func (b *backfills) run(r *Runner, slot BackfillSlot) {
	defer b.wg.Done()
	env, lease := b.env, slot.Lease
	if r.isStopped() {
		// Shutting down: the slot goes back to the fleet when its lease
		// expires, and another replica runs it.
		r.logRun(slog.LevelInfo, "backfill slot claimed while shutting down; not running it: it is handed out again when its lease expires", lease)
		return
	}
	if !lease.Reprocess && env.caps.SlotCompletionReader != nil {
		ctx, cancel := context.WithTimeout(env.hard, leaseAcquireTimeout)
		done, err := env.caps.SlotCompletionReader.SlotCompleted(ctx, r.id(), lease.RunNumber)
		cancel()
		if err == nil && done {
			r.logRun(slog.LevelInfo, "backfill slot already completed; skipping it", lease)
			b.count(r, backfillSkipped, 0)
			b.finish(r, lease, nil)
			b.claim(r)
			return
		}
	}

	if slot.WaitUpstream && len(r.sp.After) > 0 {
		upstream, stopped, cancelled, err := b.awaitUpstreams(r, lease)
		if stopped {
			r.logRun(slog.LevelInfo, "backfill slot given up while waiting for its upstreams (shutting down); it is handed out again when its lease expires", lease)
			return
		}
		if cancelled {
			r.logRun(slog.LevelInfo, "backfill cancelled while its slot waited for its upstreams; giving the slot back", lease)
			b.finish(r, lease, &history.Record{PipelineID: r.id(), RunNumber: lease.RunNumber, FencingToken: lease.FencingToken,
				WorkerID: lease.WorkerID, Outcome: history.OutcomeCancelled})
			return
		}
		if upstream != "" {
			reason := UpstreamSkipReason(upstream, time.Unix(lease.RunNumber, 0))
			if err != nil {
				reason += " (the coordinator could not be asked: " + err.Error() + ")"
			}
			now := r.now()
			b.count(r, backfillFailed, 0)
			r.logRun(slog.LevelWarn, "backfill slot failed: its upstream has not completed it", lease, slog.String("upstream", upstream), slog.String("reason", reason))
			b.finish(r, lease, &history.Record{PipelineID: r.id(), RunNumber: lease.RunNumber, FencingToken: lease.FencingToken,
				WorkerID: lease.WorkerID, Start: now, End: now, Outcome: history.OutcomeFailed, Error: reason, Params: slot.Params, Backfill: true})
			b.claim(r)
			return
		}
	}

	span := r.startRunSpan(lease)
	ctx := newRunContext(env.runBase(span), lease, r)
	ctx.params = slot.Params
	b.track(lease.FencingToken, ctx)
	defer b.untrack(lease.FencingToken)
	if cause := env.cause(); cause != nil {
		ctx.cancel(cause)
	}
	b.count(r, 0, 1)
	start := r.now()
	r.logRun(slog.LevelInfo, "backfill slot started", lease)
	stopTimeout := r.watchTimeout(ctx)
	var check func(Pipeline) error
	if lease.Reprocess {
		check = reprocessable
	}
	runErr := r.invokeChecked(ctx, check)
	if timedOut := stopTimeout(); timedOut != nil && runErr == nil {
		runErr = timedOut
	}
	end := r.now()
	cancelCause := ctx.cancelled()
	if runErr != nil {
		runErr = redactedError{withCause(runErr, cancelCause)}
	}
	ctx.cancel(nil)
	records := ctx.records.snapshot()
	defer env.errs.endRunSpan(span, runErr, cancelCause, records)
	if cancelCause != nil && !errors.Is(cancelCause, ErrRunTimeout) && isPoolCause(cancelCause) {
		// The lease was lost, or the pool shut down under it: the slot is
		// not this run's to count. It goes back to the fleet when its lease
		// expires (at once, when lost), and the run that gets it next takes
		// it over in a fenced sink's ledger.
		b.count(r, 0, -1)
		r.logRun(slog.LevelWarn, "backfill slot interrupted; it is handed out again", lease, slog.Any("cause", cancelCause))
		return
	}
	slotDone := runErr != nil && errors.Is(runErr, ErrSlotCompleted)
	rec := history.Record{
		PipelineID: r.id(), RunNumber: lease.RunNumber, FencingToken: lease.FencingToken, WorkerID: lease.WorkerID,
		Start: start, End: end, Duration: end.Sub(start), Outcome: outcomeOf(runErr, cancelCause),
		Error: history.ErrorText(runErr), Records: records, Params: slot.Params, Backfill: true,
	}
	attrs := []slog.Attr{slog.Duration("duration", end.Sub(start))}
	if !records.IsZero() {
		attrs = append(attrs, recordAttrs(records)...)
	}
	switch {
	case slotDone:
		rec.Outcome = history.OutcomeSlotDone
		b.count(r, backfillSkipped, -1)
		r.logRun(slog.LevelInfo, "backfill slot already completed by another run; skipping it", lease, append(attrs, slog.Any("error", runErr))...)
	case runErr != nil:
		b.count(r, backfillFailed, -1)
		r.logRun(slog.LevelError, "backfill slot failed", lease, append(attrs, slog.Any("error", runErr))...)
		r.notifyRunFailed(lease, runErr)
	default:
		b.count(r, backfillDone, -1)
		r.logRun(slog.LevelInfo, "backfill slot finished", lease, attrs...)
	}
	b.finish(r, lease, &rec)
	b.claim(r)
}

// awaitUpstreams waits until each of r's upstreams (After) completed the
// slot of lease, asking every AfterPollInterval, for at most r's
// AfterTimeout (BackfillUpstreamWait when unset): a backfill started with
// --downstream runs a dependent's slot only after its upstream's. It
// returns the upstream that had not completed the slot by then ("" when
// all did) with the last error asking it, stopped when the pool or the
// slot's lease stopped the wait, and cancelled when the backfill ended
// meanwhile (cancelled: the pipeline is no longer Backfilling).
func (b *backfills) awaitUpstreams(r *Runner, lease Lease) (upstream string, stopped, cancelled bool, err error) {
	reader := b.env.caps.SlotCompletionReader
	if reader == nil {
		return r.sp.After[0], false, false, errNoSlotReader
	}
	wait := r.sp.AfterTimeout
	if wait <= 0 {
		wait = BackfillUpstreamWait
	}
	limit := r.now().Add(wait)
	lost := b.setWaiting(lease.FencingToken, true)
	defer b.setWaiting(lease.FencingToken, false)
	for {
		upstream, err = "", nil
		for _, id := range r.sp.After {
			ctx, cancel := context.WithTimeout(b.env.hard, leaseAcquireTimeout)
			done, qerr := reader.SlotCompleted(ctx, id, lease.RunNumber)
			cancel()
			if qerr != nil || !done {
				upstream, err = id, qerr
				break
			}
		}
		if upstream == "" || !r.now().Before(limit) {
			return upstream, false, false, err
		}
		if !slices.Contains(b.bf.Backfilling(), r.id()) {
			return upstream, false, true, err
		}
		t := b.env.clock.NewTimer(AfterPollInterval)
		select {
		case <-t.C():
		case <-b.quit:
			t.Stop()
			return upstream, true, false, err
		case <-lost:
			t.Stop()
			return upstream, true, false, err
		}
	}
}

// setWaiting registers (on) a slot waiting for its upstreams, returning
// the channel closed when its lease is lost, or forgets it.
func (b *backfills) setWaiting(token int64, on bool) <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !on {
		delete(b.waiting, token)
		return nil
	}
	if b.waiting == nil {
		b.waiting = map[int64]chan struct{}{}
	}
	ch := make(chan struct{})
	b.waiting[token] = ch
	return ch
}

// slotReplacer is runtime.SlotReplacer.
type slotReplacer interface{ ReplacesSlots() bool }

// reprocessable refuses to reprocess a slot with a pipeline that does not
// say a re-run of a slot replaces its output: its rows would be added to
// the slot's earlier ones.
func reprocessable(p Pipeline) error {
	if rs, ok := p.(slotReplacer); ok && rs.ReplacesSlots() {
		return nil
	}
	return ErrNotReprocessable
}

// finish tells the coordinator how the slot ended, with a context that
// shutdown does not cancel.
func (b *backfills) finish(r *Runner, lease Lease, rec *history.Record) {
	ctx, cancel := context.WithTimeout(context.Background(), leaseReleaseTimeout)
	defer cancel()
	if err := b.bf.FinishBackfill(ctx, lease, rec); err != nil {
		r.logRun(slog.LevelWarn, "could not record the end of a backfill slot; it is handed out again when its lease expires", lease, slog.Any("error", err))
	}
}

// The ways a backfill slot ends, for the runner's counts.
const (
	backfillDone = iota + 1
	backfillSkipped
	backfillFailed
)

// count adds an ended slot (how: 0 for none) and moves the slots running
// by running.
func (b *backfills) count(r *Runner, how int, running int32) {
	r.mu.Lock()
	rs := r.rareLocked()
	switch how {
	case backfillDone:
		rs.backfillDone++
	case backfillSkipped:
		rs.backfillSkipped++
	case backfillFailed:
		rs.backfillFailed++
	}
	rs.backfillRunning += running
	r.mu.Unlock()
}

func (b *backfills) track(token int64, ctx *runContext) {
	b.mu.Lock()
	b.runs[token] = ctx
	b.mu.Unlock()
}

func (b *backfills) untrack(token int64) {
	b.mu.Lock()
	delete(b.runs, token)
	b.mu.Unlock()
}

// cancel cancels the slot run holding token with cause; false when none
// does.
func (b *backfills) cancel(token int64, cause error) bool {
	b.mu.Lock()
	ctx := b.runs[token]
	if ch, ok := b.waiting[token]; ok {
		close(ch)
		delete(b.waiting, token)
		b.mu.Unlock()
		return true
	}
	b.mu.Unlock()
	if ctx == nil {
		return false
	}
	ctx.cancel(cause)
	return true
}

// cancelAll cancels every slot run with cause.
func (b *backfills) cancelAll(cause error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, ctx := range b.runs {
		ctx.cancel(cause)
	}
}
