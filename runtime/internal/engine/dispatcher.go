package engine

import (
	"context"
	"errors"
	"math"
	goruntime "runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// dispatcher drives every runner of a pool from one goroutine and one timer.
//
// A min-heap orders the waiting runners by the wall-clock time their next
// attempt is due; the loop sleeps until the earliest (a second at most, so
// clock jumps are noticed) and queues every due runner for the executors.
// Executors are goroutines that make attempts one after another; there are
// as many as the runs in flight need, since an executor about to enter
// user code (or a remote coordinator) while every other one is already in
// there starts another executor first. A run that blocks for an hour
// therefore never delays another pipeline, and a burst of ten thousand short
// runs is served by a handful of goroutines rather than ten thousand. Idle
// executors beyond a few exit. A large batch due at one instant is met by
// spinning through its last milliseconds (prepareBurstLocked), so it starts
// on time and on every processor.
//
// A finished attempt hands its runner back through a lock-free stack that
// only the loop drains, so many runs ending together never queue on a lock.
// Idle pipelines cost memory only: no goroutine, no timer.
type dispatcher struct {
	clock    Clock
	onFinish func(r *Runner, err error)
	// leaser, when the coordinator is one, gets the lease requests of the
	// runners due together in one call per batch (see acquireBatch).
	leaser BatchLeaser
	// deferrer, when not nil, spreads the leaser's requests over the
	// fleet (the coordinator's LeaseDeferrer).
	deferrer LeaseDeferrer
	// ahead is how long before a cron slot its lease is asked for, when
	// the leaser is a LeaseAheader (ahead.go); 0: at the slot.
	ahead time.Duration
	// batching counts acquireBatch goroutines, which queue work: the loop
	// closes the queue only after they are done.
	batching sync.WaitGroup

	mu       sync.Mutex // guards heap, runner.inHeap and runner.done
	heap     dueHeap
	lastSeen time.Time // latest clock reading, to notice backward jumps

	// completed is the top of the stack of runners handed back by attempts.
	completed atomic.Pointer[Runner]
	// wakeAt is when the loop plans to wake, Unix ns; math.MaxInt64 while it
	// is awake, so that every hand-back asks for another pass.
	wakeAt  atomic.Int64
	wakeSet atomic.Bool
	wake    chan struct{}

	work      chan *Runner // due runners; nil asks an idle executor to exit
	queued    atomic.Int64 // runners in work
	executors atomic.Int64 // executors started and not asked to exit
	busy      atomic.Int64 // executors inside an attempt
	maxIdle   int64

	// precise is set for the system clock, whose timers fire up to a
	// millisecond late; before a large batch the loop then spins through
	// the last stretch and warms executors on the other processors (see
	// prepareBurst). A fake clock in tests keeps plain timers.
	precise   bool
	procs     int
	warmUntil atomic.Int64 // Unix ns a warmed executor spins until
	warmedFor int64        // due time the executors were last warmed for
	spinFrom  int64        // start of the current spin-budget window, Unix ns
	spinUsed  time.Duration

	syncReq  chan chan struct{}
	quit     chan struct{}
	loopDone chan struct{}

	running    atomic.Int64 // attempts queued or in flight
	draining   atomic.Bool  // set by waitIdle: the last attempt must say so
	drainOnce  sync.Once
	quitOnce   sync.Once
	drained    chan struct{}
	dispatched atomic.Int64 // attempts started, for tests
	remaining  atomic.Int64 // runners not finished, of the pipelines counted at newDispatcher
	allDone    chan struct{}
}

func newDispatcher(clock Clock, onFinish func(*Runner, error), pipelines int) *dispatcher {
	d := &dispatcher{
		clock:    clock,
		onFinish: onFinish,
		wake:     make(chan struct{}, 1),
		// Every runner is queued at most once at a time and at most one
		// exit request is sent per pass, so the loop never blocks on a
		// full queue.
		work:     make(chan *Runner, pipelines+64),
		maxIdle:  int64(2 * goruntime.GOMAXPROCS(0)),
		syncReq:  make(chan chan struct{}),
		quit:     make(chan struct{}),
		loopDone: make(chan struct{}),
		allDone:  make(chan struct{}),
		drained:  make(chan struct{}),
	}
	d.wakeAt.Store(math.MaxInt64)
	// Counted in full now, not as each is added: a runner stopped while
	// the others are still being added must not bring the count to zero
	// and close allDone early (or twice).
	d.remaining.Store(int64(pipelines))
	d.procs = goruntime.GOMAXPROCS(0)
	return d
}

// add puts r, one of the runners counted at newDispatcher, in the heap
// before the loop starts. A runner stopped before it was added (Stop can
// reach a runner as soon as the pool publishes it) finishes instead: its
// Stop hook found nothing to drop.
func (d *dispatcher) add(r *Runner) {
	d.mu.Lock()
	if r.isStopped() {
		d.mu.Unlock()
		d.finish(r, nil)
		return
	}
	d.planAhead(r, d.clock.Now().UnixNano())
	d.heap.push(keyOf(r), r)
	r.inHeap = true
	d.mu.Unlock()
}

// dueOf turns a plan time into a heap key; a schedule that never fires
// never comes due.
func dueOf(next int64) int64 {
	if next == 0 {
		return math.MaxInt64
	}
	return next
}

// handBack returns r, whose attempt is over, to the loop.
func (d *dispatcher) handBack(r *Runner) {
	due := keyOf(r)
	if d.ahead > 0 && r.askAt == 0 && r.pre == nil && r.next != 0 {
		due -= int64(d.ahead) // the loop may plan an ask ahead of next
	}
	for {
		top := d.completed.Load()
		r.nextDone = top
		if d.completed.CompareAndSwap(top, r) {
			break
		}
	}
	if due < d.wakeAt.Load() && !d.wakeSet.Load() && d.wakeSet.CompareAndSwap(false, true) {
		d.wakeLoop()
	} else if r.isStopped() {
		// Stopped after its executor last looked: the loop must take it in
		// now to finish it, not at its next timer, which a fake clock may
		// never fire.
		d.wakeLoop()
	}
}

// wakeLoop makes the loop run a pass soon.
func (d *dispatcher) wakeLoop() {
	select {
	case d.wake <- struct{}{}:
	default:
	}
}

// takeCompleted moves handed-back runners into the heap, finishing those
// stopped meanwhile. Called by the loop only, or after it ended.
func (d *dispatcher) takeCompleted() { d.takeCompletedAt(0, 0) }

// takeCompletedAt is takeCompleted in a loop pass that read the clock at
// now and found it had gone back by back: a runner whose plan was made
// before the jump (from a reading well after now) is shifted like the
// waiting ones; one planned after it is not.
func (d *dispatcher) takeCompletedAt(now int64, back time.Duration) {
	r := d.completed.Swap(nil)
	if r == nil {
		return
	}
	d.mu.Lock()
	var stopped []*Runner
	for r != nil {
		next := r.nextDone
		r.nextDone = nil
		if r.isStopped() {
			stopped = append(stopped, r)
		} else {
			if back > 0 && r.plannedAt > now+int64(back)/2 {
				if r.shift(back) {
					r.askAt = 0
				}
			}
			d.planAhead(r, now)
			d.heap.push(keyOf(r), r)
			r.inHeap = true
		}
		r = next
	}
	d.mu.Unlock()
	for _, r := range stopped {
		d.finish(r, nil)
	}
}

// stopped is r's Stop hook: a waiting runner finishes at once, leaving its
// heap entry behind to be dropped when it comes due; one in flight or being
// handed back finishes when its executor or the loop sees the stop.
func (d *dispatcher) stopped(r *Runner) {
	d.mu.Lock()
	waiting := r.inHeap
	r.inHeap = false
	d.mu.Unlock()
	if waiting {
		d.finish(r, nil)
		return
	}
	// Handed back but not yet taken in: the loop finishes it on its next
	// pass, which must not wait for a timer.
	d.wakeLoop()
}

// finish marks r as done for good, once.
func (d *dispatcher) finish(r *Runner, err error) {
	d.mu.Lock()
	if r.done {
		d.mu.Unlock()
		return
	}
	r.done = true
	d.mu.Unlock()
	if p := r.pre; p != nil && p.ahead && p.ok {
		// Granted ahead of a slot it will not run: give it back now
		// rather than at the TTL.
		r.pre = nil
		d.giveBackAhead(r)
	}
	r.setStopped()
	if d.onFinish != nil {
		d.onFinish(r, err)
	}
	if d.remaining.Add(-1) == 0 {
		close(d.allDone)
	}
}

// startExecutor adds an executor.
func (d *dispatcher) startExecutor() {
	d.executors.Add(1)
	go d.execute()
}

// execute makes queued attempts until asked to exit or the queue closes.
func (d *dispatcher) execute() {
	for r := range d.work {
		if r == nil {
			return // counted out by the loop when it asked
		}
		if r == warmUp {
			d.spinUntilWork()
			continue
		}
		d.queued.Add(-1)
		d.drive(r)
	}
	d.executors.Add(-1)
}

// enterBusy marks the calling executor as inside code that may block for
// long: the user's factory, Run and Close, or a remote coordinator. If
// nobody else is free and attempts are waiting, it starts an executor for
// them first, so a blocked run never delays another pipeline. Short
// internal work is not counted, so a burst of quick runs is not spread over
// more goroutines than it needs.
func (d *dispatcher) enterBusy() {
	if d.busy.Add(1) >= d.executors.Load() && d.queued.Load() > 0 {
		d.startExecutor()
	}
}

func (d *dispatcher) leaveBusy() { d.busy.Add(-1) }

// drive makes r's due attempts until r must wait again.
func (d *dispatcher) drive(r *Runner) {
	defer d.attemptDone()
	now := r.now()
	for {
		if r.isStopped() {
			d.finish(r, nil)
			return
		}
		end, done, err := r.step(now)
		if done {
			d.finish(r, err)
			return
		}
		if r.isStopped() {
			d.finish(r, nil)
			return
		}
		if r.next == 0 || r.next > end.UnixNano() {
			r.plannedAt = end.UnixNano()
			d.handBack(r)
			return
		}
		now = end
	}
}

// attemptDone counts an attempt out; the last one after stop was asked for
// tells waitIdle.
func (d *dispatcher) attemptDone() {
	if d.running.Add(-1) == 0 && d.draining.Load() {
		d.drainOnce.Do(func() { close(d.drained) })
	}
}

// idle returns a channel closed once no attempt is queued or in flight.
// Call it after stop: no attempt starts any more.
func (d *dispatcher) idle() <-chan struct{} {
	d.draining.Store(true)
	if d.running.Load() == 0 {
		d.drainOnce.Do(func() { close(d.drained) })
	}
	return d.drained
}

func (d *dispatcher) loop() {
	defer close(d.loopDone)
	defer func() {
		d.batching.Wait()
		close(d.work)
	}()
	var (
		timer Timer
		due   []*Runner
		early []*Runner // due for an ask ahead of their slots
		ack   chan struct{}
	)
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	for {
		d.wakeAt.Store(math.MaxInt64)
		d.wakeSet.Store(false)

		// The clock first: a backward jump shifts what waits in the heap,
		// then runners handed back since the last pass join it, shifted
		// only if their plan predates the jump.
		now := d.clock.Now().Round(0)
		nowN := now.UnixNano()
		var back time.Duration
		d.mu.Lock()
		if b := d.lastSeen.Sub(now); b > 0 && !d.lastSeen.IsZero() {
			back = b
			d.shiftLocked(back)
		}
		d.lastSeen = now
		d.mu.Unlock()
		d.takeCompletedAt(nowN, back)
		d.mu.Lock()
		// Queue due runners in small batches, so executors start on the
		// first while later ones are still taken off the heap.
		for len(d.heap) > 0 && d.heap[0].due <= nowN {
			for len(d.heap) > 0 && d.heap[0].due <= nowN && len(due) < dispatchBatch && len(early) < dispatchBatch {
				r := d.heap.pop()
				if r.inHeap {
					r.inHeap = false
					if r.askAt != 0 {
						r.askAt = 0
						early = append(early, r)
					} else {
						due = append(due, r)
					}
				}
			}
			d.mu.Unlock()
			d.dispatch(due)
			d.dispatchAhead(early)
			clear(due)
			due = due[:0]
			clear(early)
			early = early[:0]
			d.mu.Lock()
		}
		wait := maxWait
		spinTo := int64(0)
		if len(d.heap) > 0 {
			due := d.heap[0].due
			if w := time.Duration(due - nowN); w < wait {
				wait = w
				if w > 2*drainLead {
					// Wake a little early to take in the runners handed
					// back meanwhile, so that at the due time the loop
					// dispatches at once rather than first sorting
					// thousands of hand-backs into the heap.
					wait = w - drainLead
				} else if d.prepareBurstLocked(due, nowN) {
					spinTo = due
				}
			}
		}
		d.mu.Unlock()
		if spinTo != 0 {
			if !d.spinTo(spinTo) {
				return
			}
			continue
		}

		if d.queued.Load() == 0 && d.executors.Load()-d.busy.Load() > d.maxIdle {
			// Trim an idle executor per pass; unhurried, so exit requests
			// never fill the queue. One asked to exit is counted out now,
			// so the spawn checks never count on it.
			d.executors.Add(-1)
			d.work <- nil
		}

		if timer == nil {
			timer = d.clock.NewTimer(wait)
		} else {
			timer.Reset(wait)
		}
		d.wakeAt.Store(nowN + int64(wait))
		if d.completed.Load() != nil {
			// Handed back while the plan above was made: look again.
			continue
		}
		if ack != nil {
			close(ack)
			ack = nil
		}
		select {
		case <-timer.C():
		case <-d.wake:
		case ack = <-d.syncReq:
		case <-d.quit:
			return
		}
	}
}

// drainLead is how long before a due time the loop wakes to take in
// handed-back runners; it covers the timer's millisecond granularity and,
// before a burst, the time an idle processor takes to wake up.
const drainLead = 3 * time.Millisecond

// Burst preparation (see prepareBurstLocked).
const (
	// burstSize is the smallest batch of runners due at one instant that
	// the loop spins for and warms executors for.
	burstSize = 256
	// spinBudget caps the spinning (loop and warmed executors together)
	// per second of wall time, so many distinct large batches due close
	// together cannot turn the dispatcher into a busy loop.
	spinBudget = 20 * time.Millisecond
	// maxSpin bounds any one spin by the monotonic clock, whatever the wall
	// clock does meanwhile.
	maxSpin = 2*drainLead + time.Millisecond
	// warmGrace is how long past the due time a warmed executor still
	// waits for the burst to be queued.
	warmGrace = time.Millisecond
	// maxWarm caps the executors warmed for one burst; with the rule that
	// the queue is empty when they are asked, their requests fit in the
	// queue's spare room next to the runners and exit requests.
	maxWarm = 8
)

// warmUp is queued to an executor to make it spin until a burst arrives;
// it is no runner and never driven.
var warmUp = &Runner{}

// prepareBurstLocked decides, a few milliseconds before due, whether the
// loop spins through to it instead of sleeping on a timer. A Go timer fires
// up to a millisecond late, and an idle processor takes a millisecond or
// more to wake, so a burst of thousands of runs due at one instant (10,000
// pipelines on "* * * * * *") would start late on one core and reach the
// second only later. For such a batch, with the system clock and within
// spinBudget, the loop spins to the due time itself and asks idle executors
// to spin on the other processors, so every core takes runs from the
// first microsecond. Smaller batches keep the plain timer.
func (d *dispatcher) prepareBurstLocked(due, now int64) bool {
	if !d.precise || d.heap[0].r.askAt != 0 || d.heap.countDue(0, due, burstSize) < burstSize {
		return false
	}
	if now-d.spinFrom >= int64(time.Second) {
		d.spinFrom, d.spinUsed = now, 0
	}
	if d.spinUsed >= spinBudget {
		return false
	}
	d.spinUsed += time.Duration(due-now) * time.Duration(d.procs)
	if d.warmedFor != due {
		d.warmedFor = due
		d.warm(due)
	}
	return true
}

// warm asks executors, starting them if needed, to spin on the processors
// other than the loop's until the batch due at due is queued.
func (d *dispatcher) warm(due int64) {
	n := int64(min(d.procs-1, maxWarm))
	if n <= 0 || d.queued.Load() > 0 || len(d.work) > 0 {
		// Executors with work queued are awake already; and the warm-up
		// requests must never take the queue room that runners rely on.
		return
	}
	d.warmUntil.Store(due)
	for free := d.executors.Load() - d.busy.Load(); free < n; free++ {
		d.startExecutor()
	}
	for range n {
		select {
		case d.work <- warmUp:
		default:
			return // the queue is full of work: nothing to warm up for
		}
	}
}

// spinUntilWork keeps a warmed executor running, yielding, until work is
// queued or the due time it was warmed for has passed, so the processor it
// runs on is awake when the burst is queued.
func (d *dispatcher) spinUntilWork() {
	start := time.Now()
	until := d.warmUntil.Load() + int64(warmGrace)
	for d.queued.Load() == 0 && d.clock.Now().UnixNano() < until && time.Since(start) < maxSpin {
		goruntime.Gosched()
	}
}

// spinTo yields until the clock reaches due, so a burst starts at its due
// time; false when the dispatcher was asked to stop meanwhile.
func (d *dispatcher) spinTo(due int64) bool {
	start := time.Now()
	for d.clock.Now().UnixNano() < due && time.Since(start) < maxSpin {
		select {
		case <-d.quit:
			return false
		default:
		}
		goruntime.Gosched()
	}
	return true
}

// errShortBatchReply answers a request a BatchLeaser left unanswered.
var errShortBatchReply = errors.New("runtime: the coordinator answered fewer lease requests than were asked")

// dispatchBatch is how many due runners the loop queues at a time.
const dispatchBatch = 128

// dispatch queues due runners for the executors, starting one if all are
// busy.
func (d *dispatcher) dispatch(due []*Runner) {
	if len(due) == 0 {
		return
	}
	n := int64(len(due))
	d.running.Add(n)
	d.dispatched.Add(n)
	if d.leaser != nil && (len(due) > 1 || due[0].pre != nil) {
		d.batching.Add(1)
		go d.acquireBatch(slices.Clone(due))
		return
	}
	d.queue(due)
}

// queue hands runners, already counted as running, to the executors.
func (d *dispatcher) queue(due []*Runner) {
	d.queued.Add(int64(len(due)))
	for _, r := range due {
		d.work <- r
	}
	if d.busy.Load() >= d.executors.Load() {
		d.startExecutor()
	}
}

// acquireBatch decides the attempt of each runner of a batch due together,
// asks the coordinator for all their leases in one call, and then queues
// the runners, each with its answer, for the executors. So a burst of
// thousands of due pipelines costs a few pipelined round trips and one
// goroutine per batch, not a blocked executor per request; refused runners
// pass through an executor without waiting on anything. A runner whose
// request a LeaseDeferrer defers goes back to the heap, due again after the
// delay, and then asks without deferring: the deferred runners of a burst
// come due together and ask in batches of their own.
func (d *dispatcher) acquireBatch(batch []*Runner) {
	defer d.batching.Done()
	deferrer := d.deferrer
	var now leaseAsk
	queued := batch[:0:0]
	for _, r := range batch {
		if r.isStopped() || len(r.sp.After) > 0 {
			// Stopped: its executor finishes it. With After: its executor
			// asks for the lease once the upstreams completed the slot
			// (after.go).
			queued = append(queued, r)
			continue
		}
		ownSlot := r.deferred() != 0 // back from a deferral: ask now
		if p := r.pre; p != nil && p.ahead && r.now().UnixNano() < r.next {
			// The clock went back since the ask: the grant goes back, and
			// the slot is asked for ahead again when it comes near.
			if p.ok {
				d.giveBackAhead(r)
			}
			r.pre = nil
			r.plannedAt = r.now().UnixNano()
			d.handBack(r)
			d.attemptDone()
			continue
		}
		if p := r.pre; p != nil && p.ahead {
			if d.settleAhead(r, p) {
				queued = append(queued, r)
				continue
			}
			// Undecided ahead: ErrAskAtSlot asks now; any other answer
			// (an error, a preferred worker alive but not granted yet)
			// takes the path without lease-ahead, deferral included.
			ownSlot = ownSlot || errors.Is(p.err, ErrAskAtSlot) || p.ok
		}
		at := r.now()
		p := &preAcquired{}
		p.runNumber, p.run = r.decide(at)
		r.pre = p
		if p.run && r.env.paused(r) {
			p.paused = true // skipped by its executor; no lease asked for
			queued = append(queued, r)
			continue
		}
		if p.run && !ownSlot && deferrer != nil && r.next != 0 {
			if w := deferrer.DeferLease(LeaseRequest{PipelineID: r.id(), RunNumber: seamRun(p.runNumber)}); w > 0 {
				d.deferRunner(r, at, w)
				continue
			}
		}
		if p.run {
			now.add(r, LeaseRequest{PipelineID: r.id(), RunNumber: seamRun(p.runNumber)}, p)
		}
		queued = append(queued, r)
	}
	d.ask(batch[0].env, now)
	d.queue(queued)
}

// deferRunner hands r back to the heap, due again delay after at, keeping
// the slot it was decided for (r.next) to ask for then.
func (d *dispatcher) deferRunner(r *Runner, at time.Time, delay time.Duration) {
	r.pre = nil
	r.planned().deferredSlot = r.next
	r.next = at.Add(delay).UnixNano()
	r.plannedAt = at.UnixNano()
	d.handBack(r)
	d.attemptDone()
}

// leaseAsk is the part of a batch asked for in one call.
type leaseAsk struct {
	runners []*Runner
	reqs    []LeaseRequest
	pres    []*preAcquired
}

func (a *leaseAsk) add(r *Runner, req LeaseRequest, p *preAcquired) {
	a.runners, a.reqs, a.pres = append(a.runners, r), append(a.reqs, req), append(a.pres, p)
}

// ask sends a's requests in one TryAcquireLeases call and records each
// reply with its runner.
func (d *dispatcher) ask(env *runEnv, a leaseAsk) {
	if len(a.reqs) == 0 {
		return
	}
	ctx, cancel := context.WithTimeout(env.hard, leaseAcquireTimeout)
	replies := d.leaser.TryAcquireLeases(ctx, a.reqs)
	cancel()
	for i, p := range a.pres {
		if i < len(replies) {
			p.ok, p.err = replies[i].Acquired, replies[i].Err
		} else {
			p.err = errShortBatchReply
		}
	}
}

// shiftLocked adjusts every waiting runner for a backward clock jump.
func (d *dispatcher) shiftLocked(back time.Duration) {
	changed := false
	for i := range d.heap {
		e := &d.heap[i]
		if e.r.inHeap && e.r.shift(back) {
			e.r.askAt = 0
			e.due = dueOf(e.r.next)
			changed = true
		} else if p := e.r.pre; e.r.inHeap && p != nil && p.ahead {
			// Asked ahead of a slot that is now further off: due at once,
			// to give the grant back rather than hold it until the clock
			// comes back (see acquireBatch).
			e.due = 0
			changed = true
		}
	}
	if changed {
		d.heap.init()
	}
}

// sync returns after the loop has handled everything handed back so far;
// tests use it to know the pool is quiet before they move a fake clock.
func (d *dispatcher) sync() bool {
	ack := make(chan struct{})
	select {
	case d.syncReq <- ack:
	case <-d.loopDone:
		return false
	}
	select {
	case <-ack:
		return true
	case <-d.loopDone:
		return false
	}
}

// stop ends the loop and waits for it; executors exit once the queue is
// drained.
func (d *dispatcher) stop() {
	d.quitOnce.Do(func() { close(d.quit) })
	<-d.loopDone
}

// dueEntry is a heap slot. The key lives in the slot, so sifting ten
// thousand entries reads one contiguous array rather than ten thousand
// runners scattered over the heap.
type dueEntry struct {
	due int64
	r   *Runner
}

// dueHeap is a binary min-heap of due times. A stopped runner's entry stays
// until it comes due and is then dropped, so removal costs nothing.
type dueHeap []dueEntry

func (h *dueHeap) push(due int64, r *Runner) {
	*h = append(*h, dueEntry{due, r})
	s := *h
	i := len(s) - 1
	for i > 0 {
		p := (i - 1) / 2
		if s[p].due <= s[i].due {
			break
		}
		s[p], s[i] = s[i], s[p]
		i = p
	}
}

func (h *dueHeap) pop() *Runner {
	s := *h
	n := len(s) - 1
	top := s[0].r
	s[0] = s[n]
	s[n] = dueEntry{}
	s = s[:n]
	*h = s
	s.down(0)
	return top
}

func (h dueHeap) down(i int) {
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && h[r].due < h[l].due {
			m = r
		}
		if h[i].due <= h[m].due {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// countDue counts the entries due at due in the subtree at i, up to limit.
// Called with the root's due time, it only visits entries due then.
func (h dueHeap) countDue(i int, due int64, limit int) int {
	if i >= len(h) || h[i].due != due || limit <= 0 {
		return 0
	}
	n := 1
	n += h.countDue(2*i+1, due, limit-n)
	n += h.countDue(2*i+2, due, limit-n)
	return n
}

func (h dueHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}
