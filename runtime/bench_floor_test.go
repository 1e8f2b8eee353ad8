package runtime_test

import (
	"container/heap"
	"context"
	"encoding/binary"
	"errors"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/history"
)

// The memory floor is a contender of the scale benchmarks that holds, per
// pipeline, the least a pool with agora's per-pipeline features must hold,
// and does per run the least such a pool must do, in one goroutine: the
// registration it is given (the same ScheduledPipeline agora gets), its
// place in a timer heap, a status of counts and times, a local lease (held,
// run number), two Prometheus histograms (ten and nine bounds, counts in 32
// bits, a sum each), and the last runs at four bytes a run (run step, end
// step in ms, duration in µs, as varints: what a run on schedule
// needs at least), bounded as agora bounds them. Each run gets a context of
// its own (floorRun), which any design handing runs a context that is
// cancelled when they end must allocate. It has no logging, no
// coordinator interface, no catch-up, retries, timeouts or run-now: its
// peak RSS beside robfig's is the ratio no implementation of these features
// can go below on Go's collector. AGORA_BENCH_RUN_HISTORY=off leaves the
// history out, as it does for agora.

// States of a floor pipeline, for its status.
const (
	floorIdle uint8 = iota
	floorRunning
)

// floorPipeline is the floor's state of one pipeline.
type floorPipeline struct {
	sp   *runtime.ScheduledPipeline
	next int64 // Unix ns
	at   int   // index in the heap

	mu                                 sync.Mutex
	state                              uint8
	runs, ok                           uint64
	since, lastStart, lastEnd, lastRun int64
	held                               bool
	runNumber                          int64
	duration                           [11]uint32
	lateness                           [10]uint32
	durationSum, latenessSum           float64
	history                            []byte
	kept                               int
}

// floorRun is the context of one run: the least a context cancelled when
// its run ends needs, its cancellation made only when asked for (as
// agora's is): the parent, the run's identity (run number, fencing token),
// its pipeline, and the cancellation and its cause once made (64 bytes).
type floorRun struct {
	context.Context
	p            *floorPipeline
	runNumber    int64
	fencingToken int64
	inner        atomic.Pointer[floorLayer]
	cause        atomic.Pointer[error]
}

// floorLayer is a run's cancellation, made when the run asks for Done or
// Err while it runs.
type floorLayer struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
}

// floorLeaseKey asks a floor run's context for its run number and token,
// as runtime.LeaseFromContext asks agora's.
type floorLeaseKey struct{}

var errFloorRunEnded = errors.New("run ended")

func (r *floorRun) layer() *floorLayer {
	if l := r.inner.Load(); l != nil {
		return l
	}
	ctx, cancel := context.WithCancelCause(r.Context)
	l := &floorLayer{ctx: ctx, cancel: cancel}
	if !r.inner.CompareAndSwap(nil, l) {
		cancel(nil)
		return r.inner.Load()
	}
	if p := r.cause.Load(); p != nil {
		cancel(*p)
	}
	return l
}

func (r *floorRun) Done() <-chan struct{} { return r.layer().ctx.Done() }

func (r *floorRun) Err() error {
	if r.inner.Load() == nil && r.cause.Load() == nil {
		return nil
	}
	return r.layer().ctx.Err()
}

func (r *floorRun) Value(key any) any {
	if _, ok := key.(floorLeaseKey); ok {
		return [2]int64{r.runNumber, r.fencingToken}
	}
	return r.Context.Value(key)
}

// end cancels the run's context, as agora's pool does when a run ends.
func (r *floorRun) end() {
	r.cause.CompareAndSwap(nil, &errFloorRunEnded)
	if l := r.inner.Load(); l != nil {
		l.cancel(errFloorRunEnded)
	}
}

type floorHeap []*floorPipeline

func (h floorHeap) Len() int           { return len(h) }
func (h floorHeap) Less(i, j int) bool { return h[i].next < h[j].next }
func (h floorHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i]; h[i].at, h[j].at = i, j }
func (h *floorHeap) Push(x any)        { p := x.(*floorPipeline); p.at = len(*h); *h = append(*h, p) }
func (h *floorHeap) Pop() any {
	old := *h
	p := old[len(old)-1]
	*h = old[:len(old)-1]
	return p
}

var (
	floorDurationBounds = []float64{0.01, 0.04, 0.16, 0.64, 2.56, 10.24, 40.96, 163.84, 655.36, 2621.44}
	floorLatenessBounds = []float64{0.001, 0.004, 0.016, 0.064, 0.256, 1.024, 4.096, 16.384, 65.536}
)

func floorBucket(bounds []float64, v float64) int {
	for i, b := range bounds {
		if v <= b {
			return i
		}
	}
	return len(bounds)
}

// runFloor starts the floor on n pipelines of expr running pipeline (the
// one agora runs, given each run's context); the returned function stops
// it.
func runFloor(n int, expr string, pipeline runtime.Pipeline) func() {
	sched := runtime.MustCron(expr)
	keepHistory := os.Getenv(benchRunHistoryEnv) != "off"
	var ps floorHeap
	now := time.Now()
	for i := range n {
		sp := &runtime.ScheduledPipeline{PipelineID: "p" + strconv.Itoa(i), Schedule: sched}
		p := &floorPipeline{sp: sp, next: sp.Schedule.Next(now).UnixNano()}
		heap.Push(&ps, p)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		timer := time.NewTimer(time.Hour)
		for {
			wait := time.Until(time.Unix(0, ps[0].next))
			timer.Reset(wait)
			select {
			case <-ctx.Done():
				return
			case <-timer.C:
			}
			for len(ps) > 0 && ps[0].next <= time.Now().UnixNano() {
				p := ps[0]
				slot := p.next
				start := time.Now()
				run := &floorRun{Context: ctx, p: p, runNumber: slot / int64(time.Second)}
				p.mu.Lock()
				p.held, p.runNumber, p.since, p.state = true, run.runNumber, start.UnixNano(), floorRunning
				p.mu.Unlock()
				_ = pipeline.Run(run)
				run.end()
				end := time.Now()
				p.finish(run, slot, start, end, keepHistory)
				p.next = p.sp.Schedule.Next(end).UnixNano()
				heap.Fix(&ps, 0)
			}
		}
	}()
	return func() { cancel(); <-done }
}

// finish records a run as agora's pool does: status, histograms, history.
func (p *floorPipeline) finish(run *floorRun, slot int64, start, end time.Time, keepHistory bool) {
	d, late := end.Sub(start), start.Sub(time.Unix(0, slot))
	p.mu.Lock()
	defer p.mu.Unlock()
	prevEnd := p.lastEnd
	p.held, p.state = false, floorIdle
	p.runs++
	p.ok++
	p.lastStart, p.lastEnd, p.since = start.UnixNano(), end.UnixNano(), 0
	p.duration[floorBucket(floorDurationBounds, d.Seconds())]++
	p.durationSum += d.Seconds()
	p.lateness[floorBucket(floorLatenessBounds, late.Seconds())]++
	p.latenessSum += late.Seconds()
	if !keepHistory {
		return
	}
	if p.kept == history.DefaultLimit {
		// Drop the oldest run: its three varints.
		off := 0
		for range 3 {
			_, n := binary.Uvarint(p.history[off:])
			off += n
		}
		p.history = p.history[:copy(p.history, p.history[off:])]
		p.kept--
	}
	p.history = binary.AppendUvarint(p.history, uint64(run.runNumber-p.lastRun))
	p.history = binary.AppendUvarint(p.history, uint64(max(0, end.UnixMilli()-prevEnd/1e6-1000)))
	p.history = binary.AppendUvarint(p.history, uint64(d.Microseconds()))
	p.lastRun = run.runNumber
	p.kept++
}
