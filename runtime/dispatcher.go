package runtime

import (
	"container/heap"
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// dispatcher drives every runner of a pool from one goroutine and one timer:
// a min-heap orders the runners by the wall-clock time their next attempt is
// due, the goroutine sleeps until the earliest (a second at most, so clock
// jumps are noticed) and starts a goroutine per due attempt. A runner is in
// the heap while it waits and out of it while its goroutine runs; afterwards
// the goroutine puts it back. Nothing else costs a goroutine or a timer, so
// ten thousand idle pipelines cost memory only.
type dispatcher struct {
	clock Clock

	mu       sync.Mutex
	heap     runnerHeap
	wakeAt   int64     // when the loop plans to wake, Unix ns
	lastSeen time.Time // latest clock reading, to notice backward jumps
	onFinish func(r *runner, err error)

	wake     chan struct{}
	syncReq  chan chan struct{}
	quit     chan struct{}
	loopDone chan struct{}

	inflight   sync.WaitGroup
	running    atomic.Int64 // attempts in flight, for tests and status
	dispatched atomic.Int64 // attempts started, for tests
	remaining  atomic.Int64 // runners not finished
	allDone    chan struct{}
}

func newDispatcher(clock Clock, onFinish func(*runner, error)) *dispatcher {
	return &dispatcher{
		clock:    clock,
		onFinish: onFinish,
		wakeAt:   math.MaxInt64,
		wake:     make(chan struct{}, 1),
		syncReq:  make(chan chan struct{}),
		quit:     make(chan struct{}),
		loopDone: make(chan struct{}),
		allDone:  make(chan struct{}),
	}
}

// add registers r before the loop starts and puts it in the heap.
func (d *dispatcher) add(r *runner) {
	d.remaining.Add(1)
	r.ctl.onStop = func() { d.stopped(r) }
	d.push(r)
}

// dueOf turns a plan time into a heap key; a schedule that never fires
// never comes due.
func dueOf(t time.Time) int64 {
	if t.IsZero() {
		return math.MaxInt64
	}
	return t.UnixNano()
}

// push puts r back in the heap, or finishes it when it was stopped
// meanwhile, and wakes the loop if r is due before the loop would wake.
func (d *dispatcher) push(r *runner) {
	d.mu.Lock()
	if r.ctl.stopped() {
		d.mu.Unlock()
		d.finish(r, nil)
		return
	}
	r.due = dueOf(r.next)
	heap.Push(&d.heap, r)
	early := r.due < d.wakeAt
	d.mu.Unlock()
	if early {
		select {
		case d.wake <- struct{}{}:
		default:
		}
	}
}

// stopped is r's Stop hook: a waiting runner leaves the heap and finishes at
// once; a running one finishes when its goroutine sees the stop.
func (d *dispatcher) stopped(r *runner) {
	d.mu.Lock()
	if r.heapIdx < 0 {
		d.mu.Unlock()
		return
	}
	heap.Remove(&d.heap, r.heapIdx)
	d.mu.Unlock()
	d.finish(r, nil)
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

// drive makes r's due attempts until r must wait again.
func (d *dispatcher) drive(r *runner) {
	defer func() {
		d.running.Add(-1)
		d.inflight.Done()
	}()
	now := r.now()
	for {
		if r.ctl.stopped() {
			d.finish(r, nil)
			return
		}
		done, err := r.step(now)
		if done {
			d.finish(r, err)
			return
		}
		now = r.now()
		if r.next.IsZero() || r.next.After(now) {
			d.push(r)
			return
		}
	}
}

func (d *dispatcher) loop() {
	defer close(d.loopDone)
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
		now := d.clock.Now().Round(0)
		nowN := now.UnixNano()
		d.mu.Lock()
		if back := d.lastSeen.Sub(now); back > 0 && !d.lastSeen.IsZero() {
			d.shiftLocked(back)
		}
		d.lastSeen = now
		for len(d.heap) > 0 && d.heap[0].due <= nowN {
			due = append(due, heap.Pop(&d.heap).(*runner))
		}
		wait := MaxWait
		if len(d.heap) > 0 {
			if w := time.Duration(d.heap[0].due - nowN); w < wait {
				wait = w
			}
		}
		d.wakeAt = nowN + int64(wait)
		d.inflight.Add(len(due))
		d.running.Add(int64(len(due)))
		d.dispatched.Add(int64(len(due)))
		d.mu.Unlock()

		for i, r := range due {
			go d.drive(r)
			due[i] = nil
		}
		due = due[:0]
		if timer == nil {
			timer = d.clock.NewTimer(wait)
		} else {
			timer.Reset(wait)
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

// shiftLocked adjusts every waiting runner for a backward clock jump.
func (d *dispatcher) shiftLocked(back time.Duration) {
	changed := false
	for _, r := range d.heap {
		if r.shift(back) {
			r.due = dueOf(r.next)
			changed = true
		}
	}
	if changed {
		heap.Init(&d.heap)
	}
}

// sync returns after the loop has handled everything pushed so far; tests
// use it to know the pool is quiet before they move a fake clock.
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

// stop ends the loop and waits for it.
func (d *dispatcher) stop() {
	select {
	case <-d.quit:
	default:
		close(d.quit)
	}
	<-d.loopDone
}

// runnerHeap orders runners by due time.
type runnerHeap []*runner

func (h runnerHeap) Len() int           { return len(h) }
func (h runnerHeap) Less(i, j int) bool { return h[i].due < h[j].due }
func (h runnerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].heapIdx = i
	h[j].heapIdx = j
}

func (h *runnerHeap) Push(x any) {
	r := x.(*runner)
	r.heapIdx = len(*h)
	*h = append(*h, r)
}

func (h *runnerHeap) Pop() any {
	old := *h
	n := len(old)
	r := old[n-1]
	old[n-1] = nil
	r.heapIdx = -1
	*h = old[:n-1]
	return r
}
