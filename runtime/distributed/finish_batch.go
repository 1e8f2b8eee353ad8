package distributed

import (
	"context"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/runtime/distributed/internal/leasebackend"
)

// finishReq is one release or completion to send.
type finishReq struct {
	ref       leaseRef
	completed bool
	hist      *historyEntry // the run's history record; nil: none
	fail      *failReq      // a failed run to record (failures.go); nil: none
}

// finishRep is its answer: whether the lease was still this owner's.
type finishRep struct {
	owned bool
	err   error
	fail  failRep // what recording req.fail answered
}

// maxFinishBatch bounds one pipelined batch of releases and completions.
const maxFinishBatch = 512

// finishBatcher sends the releases and completions asked for while one is
// in flight together, in one pipelined round trip (group commit). Nobody
// waits for company: a request sent while none is in flight goes at once,
// from the caller's goroutine; those arriving meanwhile queue, and the
// first of them sends the whole queue once the round trip in flight is
// back. So runs ending together cost a round trip per batch, not per run,
// and no goroutine is added.
type finishBatcher struct {
	send    func(ctx context.Context, reqs []finishReq) []finishRep
	one     func(ctx context.Context, req finishReq) finishRep // a batch of one, without a pipeline
	timeout time.Duration

	mu    sync.Mutex
	busy  bool // a batch is in flight
	queue []*finishWait
}

// finishWait is a queued request and the caller waiting on it.
type finishWait struct {
	req  finishReq
	rep  finishRep
	done chan struct{}
	// lead is set, before done closes, when this caller must send the
	// batch (itself first) instead of just reading rep.
	lead []*finishWait
}

func (b *finishBatcher) do(req finishReq) finishRep {
	b.mu.Lock()
	if !b.busy {
		b.busy = true
		b.mu.Unlock()
		self := &finishWait{req: req}
		b.run([]*finishWait{self})
		return self.rep
	}
	w := &finishWait{req: req, done: make(chan struct{})}
	b.queue = append(b.queue, w)
	b.mu.Unlock()
	<-w.done
	if w.lead != nil {
		b.run(w.lead)
	}
	return w.rep
}

// run sends batch, whose first member is the caller, hands the next queued
// batch to its first member, and wakes the others of this one.
func (b *finishBatcher) run(batch []*finishWait) {
	op := opComplete
	for _, w := range batch {
		if !w.req.completed {
			op = opRelease // a batch with any plain release counts as one
			break
		}
	}
	ctx, cancel := context.WithTimeout(withOp(context.Background(), op), b.timeout)
	if len(batch) == 1 && b.one != nil {
		batch[0].rep = b.one(ctx, batch[0].req)
	} else {
		reqs := make([]finishReq, len(batch))
		for i, w := range batch {
			reqs[i] = w.req
		}
		reps := b.send(ctx, reqs)
		for i, w := range batch {
			w.rep = reps[i]
		}
	}
	cancel()
	b.mu.Lock()
	var next []*finishWait
	if n := min(len(b.queue), maxFinishBatch); n > 0 {
		next = b.queue[:n:n]
		b.queue = b.queue[n:]
	} else {
		b.busy = false
		b.queue = nil
	}
	b.mu.Unlock()
	if len(next) > 0 {
		next[0].lead = next
		close(next[0].done)
	}
	for _, w := range batch[1:] {
		close(w.done)
	}
}

// finishOne releases or completes one lease with a single command.
func (b *singleBackend) finishOne(ctx context.Context, r finishReq) finishRep {
	var rep finishRep
	if r.hist != nil || r.fail != nil {
		return b.finishMany(ctx, []finishReq{r})[0]
	}
	if r.completed {
		rep.owned, rep.err = b.complete(ctx, r.ref)
	} else {
		rep.owned, rep.err = b.release(ctx, r.ref)
	}
	return rep
}

// finishMany releases and completes with plain commands: one pipelined
// round trip that records the completed runs and releases the rest, and a
// second that releases the completed runs whose record went through (see
// queueRecord).
func (b *singleBackend) finishMany(ctx context.Context, reqs []finishReq) []finishRep {
	out := make([]finishRep, len(reqs))
	lrems := make([]*redis.IntCmd, len(reqs))
	records := make([][]redis.Cmder, len(reqs))
	fails := make([]*redis.Cmd, len(reqs))
	_, _ = b.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, r := range reqs {
			switch {
			case r.completed:
				records[i] = b.queueRecord(ctx, p, r)
			case r.fail != nil:
				fails[i] = b.queueFail(ctx, p, r)
			default:
				lrems[i] = b.queueRelease(ctx, p, r)
			}
		}
		return nil
	})
	for i, cmd := range fails {
		if cmd == nil {
			continue
		}
		if leasebackend.IsNoScript(cmd.Err()) {
			// The server lost its scripts (a restart): once more with EVAL.
			cmd = leasebackend.RunPipelined(ctx, b.client, []leasebackend.Call{b.failCall(reqs[i].ref, reqs[i].fail)})[0]
		}
		out[i].owned, out[i].fail, out[i].err = parseFailReply(cmd)
	}
	second := false
	for i, r := range reqs {
		if r.completed {
			if err := firstErr(records[i], nil); err != nil {
				out[i].err = err
			} else {
				second = true
			}
		}
	}
	if second {
		_, _ = b.client.Pipelined(ctx, func(p redis.Pipeliner) error {
			for i, r := range reqs {
				if r.completed && out[i].err == nil {
					lrems[i] = b.queueRelease(ctx, p, r)
				}
			}
			return nil
		})
	}
	for i, cmd := range lrems {
		if cmd == nil {
			continue
		}
		n, err := cmd.Result()
		out[i] = finishRep{owned: n == 1, err: err}
	}
	return out
}
