package runtime

import (
	"math"
	goruntime "runtime"
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
// executors beyond a few exit.
//
// A finished attempt hands its runner back through a lock-free stack that
// only the loop drains, so many runs ending together never queue on a lock.
// Idle pipelines cost memory only: no goroutine, no timer.
type dispatcher struct {
	clock    Clock
	onFinish func(r *runner, err error)

	mu       sync.Mutex // guards heap, runner.inHeap and runner.done
	heap     dueHeap
	lastSeen time.Time // latest clock reading, to notice backward jumps

	// completed is the top of the stack of runners handed back by attempts.
	completed atomic.Pointer[runner]
	// wakeAt is when the loop plans to wake, Unix ns; math.MaxInt64 while it
	// is awake, so that every hand-back asks for another pass.
	wakeAt  atomic.Int64
	wakeSet atomic.Bool
	wake    chan struct{}

	work      chan *runner // due runners; nil asks an idle executor to exit
	queued    atomic.Int64 // runners in work
	executors atomic.Int64 // executors started and not asked to exit
	busy      atomic.Int64 // executors inside an attempt
	maxIdle   int64

	syncReq  chan chan struct{}
	quit     chan struct{}
	loopDone chan struct{}

	running    atomic.Int64 // attempts queued or in flight
	draining   atomic.Bool  // set by waitIdle: the last attempt must say so
	drainOnce  sync.Once
	drained    chan struct{}
	dispatched atomic.Int64 // attempts started, for tests
	remaining  atomic.Int64 // runners not finished
	allDone    chan struct{}
}

func newDispatcher(clock Clock, onFinish func(*runner, error), pipelines int) *dispatcher {
	d := &dispatcher{
		clock:    clock,
		onFinish: onFinish,
		wake:     make(chan struct{}, 1),
		// Every runner is queued at most once at a time and at most one
		// exit request is sent per pass, so the loop never blocks on a
		// full queue.
		work:     make(chan *runner, pipelines+64),
		maxIdle:  int64(2 * goruntime.GOMAXPROCS(0)),
		syncReq:  make(chan chan struct{}),
		quit:     make(chan struct{}),
		loopDone: make(chan struct{}),
		allDone:  make(chan struct{}),
		drained:  make(chan struct{}),
	}
	d.wakeAt.Store(math.MaxInt64)
	return d
}

// add registers r before the loop starts and puts it in the heap.
func (d *dispatcher) add(r *runner) {
	d.remaining.Add(1)
	d.mu.Lock()
	d.heap.push(dueOf(r.next), r)
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
func (d *dispatcher) handBack(r *runner) {
	due := dueOf(r.next)
	for {
		top := d.completed.Load()
		r.nextDone = top
		if d.completed.CompareAndSwap(top, r) {
			break
		}
	}
	if due < d.wakeAt.Load() && !d.wakeSet.Load() && d.wakeSet.CompareAndSwap(false, true) {
		select {
		case d.wake <- struct{}{}:
		default:
		}
	}
}

// takeCompleted moves handed-back runners into the heap, finishing those
// stopped meanwhile. Called by the loop only, or after it ended.
func (d *dispatcher) takeCompleted() {
	r := d.completed.Swap(nil)
	if r == nil {
		return
	}
	d.mu.Lock()
	var stopped []*runner
	for r != nil {
		next := r.nextDone
		r.nextDone = nil
		if r.isStopped() {
			stopped = append(stopped, r)
		} else {
			d.heap.push(dueOf(r.next), r)
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
func (d *dispatcher) stopped(r *runner) {
	d.mu.Lock()
	waiting := r.inHeap
	r.inHeap = false
	d.mu.Unlock()
	if waiting {
		d.finish(r, nil)
	}
}

// finish marks r as done for good, once.
func (d *dispatcher) finish(r *runner, err error) {
	d.mu.Lock()
	if r.done {
		d.mu.Unlock()
		return
	}
	r.done = true
	d.mu.Unlock()
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
func (d *dispatcher) drive(r *runner) {
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
	defer close(d.work)
	var (
		timer Timer
		due   []*runner
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
		d.takeCompleted()

		now := d.clock.Now().Round(0)
		nowN := now.UnixNano()
		d.mu.Lock()
		if back := d.lastSeen.Sub(now); back > 0 && !d.lastSeen.IsZero() {
			d.shiftLocked(back)
		}
		d.lastSeen = now
		// Queue due runners in small batches, so executors start on the
		// first while later ones are still taken off the heap.
		for len(d.heap) > 0 && d.heap[0].due <= nowN {
			for len(d.heap) > 0 && d.heap[0].due <= nowN && len(due) < dispatchBatch {
				r := d.heap.pop()
				if r.inHeap {
					r.inHeap = false
					due = append(due, r)
				}
			}
			d.mu.Unlock()
			d.dispatch(due)
			clear(due)
			due = due[:0]
			d.mu.Lock()
		}
		wait := MaxWait
		if len(d.heap) > 0 {
			if w := time.Duration(d.heap[0].due - nowN); w < wait {
				wait = w
				if w > 2*drainLead {
					// Wake a little early to take in the runners handed
					// back meanwhile, so that at the due time the loop
					// dispatches at once rather than first sorting
					// thousands of hand-backs into the heap.
					wait = w - drainLead
				}
			}
		}
		d.mu.Unlock()

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
// handed-back runners; it covers the timer's millisecond granularity.
const drainLead = 2 * time.Millisecond

// dispatchBatch is how many due runners the loop queues at a time.
const dispatchBatch = 128

// dispatch queues due runners for the executors, starting one if all are
// busy.
func (d *dispatcher) dispatch(due []*runner) {
	if len(due) == 0 {
		return
	}
	n := int64(len(due))
	d.running.Add(n)
	d.dispatched.Add(n)
	d.queued.Add(n)
	for _, r := range due {
		d.work <- r
	}
	if d.busy.Load() >= d.executors.Load() {
		d.startExecutor()
	}
}

// shiftLocked adjusts every waiting runner for a backward clock jump.
func (d *dispatcher) shiftLocked(back time.Duration) {
	changed := false
	for i := range d.heap {
		e := &d.heap[i]
		if e.r.inHeap && e.r.shift(back) {
			e.due = dueOf(e.r.next)
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
	select {
	case <-d.quit:
	default:
		close(d.quit)
	}
	<-d.loopDone
}

// dueEntry is a heap slot. The key lives in the slot, so sifting ten
// thousand entries reads one contiguous array rather than ten thousand
// runners scattered over the heap.
type dueEntry struct {
	due int64
	r   *runner
}

// dueHeap is a binary min-heap of due times. A stopped runner's entry stays
// until it comes due and is then dropped, so removal costs nothing.
type dueHeap []dueEntry

func (h *dueHeap) push(due int64, r *runner) {
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

func (h *dueHeap) pop() *runner {
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

func (h dueHeap) init() {
	for i := len(h)/2 - 1; i >= 0; i-- {
		h.down(i)
	}
}
