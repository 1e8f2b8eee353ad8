package engine

import (
	"errors"
	"log/slog"
	"slices"
	"time"
)

// Lease-ahead
//
// With a coordinator that is a LeaseAheader, the dispatcher asks for a cron
// slot's lease a little before the slot, so that at the boundary the run
// only has to start: the runner waits in the heap under askAt, lead before
// its slot (at most the coordinator's LeaseAhead and MaxLeaseAhead, never
// more than half the interval), is taken out then and asked for in a batch
// with Ahead set, and goes back under the slot with the reply in pre.
//
// A worker that another one is preferred for (LeaseDeferrer) asks at half
// the lead instead, by when the preferred worker's grant is usually made:
// the coordinator then only looks whether the slot was granted elsewhere.
// When it was not, the reply ErrAskAtSlot (the preferred worker's record is
// gone) has the worker ask at the boundary without deferring, so a dead
// preferred worker costs no deferred ask (300 ms) once its record expired; any
// other undecided reply takes the path without lease-ahead, deferral
// included.
//
// At the boundary (settleAhead) an early grant runs only if the
// coordinator still holds it: one lost meanwhile (a stop or pause of the
// process past its deadline, a Redis restart) is given back and asked for
// again as if nothing had been asked. A fleet-wide pause set between the
// grant and the boundary is honoured: the lease goes back and the slot is
// skipped as paused. A runner stopped in between gives its early grant
// back when it finishes; so does one whose clock went back after the
// grant (shiftLocked makes it due at once, acquireBatch gives the grant
// back). Only the lease of that slot is asked for: a
// retry, a catch-up, a re-run of an interrupted slot, a deferred request
// and a run of the previous slot still going (the runner is not in the
// heap then) keep the path without lease-ahead.

// planAhead, for a runner going into the heap at now (Unix ns), sets askAt
// when its next attempt is a cron slot whose lease is to be asked for
// ahead.
func (d *dispatcher) planAhead(r *Runner, now int64) {
	if d.ahead <= 0 || now == 0 || r.askAt != 0 || r.next == 0 || r.pre != nil || r.deferred() != 0 ||
		r.retry || r.probe || r.sp.Schedule.Kind() != ScheduleCron || r.catchingUp() || r.sp.RerunInterrupted ||
		len(r.sp.After) > 0 {
		return
	}
	var interval int64
	if r.slot > 0 && r.slot < r.next {
		interval = r.next - r.slot
	} else if n := r.nextCron(r.next); n > r.next {
		interval = n - r.next
	}
	lead := min(int64(d.ahead), interval/2)
	if lead < int64(time.Millisecond) || r.next-lead <= now {
		return
	}
	r.askAt, r.lead, r.checking = r.next-lead, lead, false
}

// keyOf is r's heap key: askAt while an ask-ahead is planned, next
// otherwise.
func keyOf(r *Runner) int64 {
	if r.askAt != 0 {
		return r.askAt
	}
	return dueOf(r.next)
}

// dispatchAhead asks, in a goroutine of its own, for the leases of
// runners taken out of the heap ahead of their slots.
func (d *dispatcher) dispatchAhead(early []*Runner) {
	if len(early) == 0 {
		return
	}
	d.running.Add(int64(len(early)))
	d.dispatched.Add(int64(len(early))) // a pass that asks ahead is not quiet
	d.batching.Add(1)
	go d.askAhead(slices.Clone(early))
}

// askAhead asks for the leases of batch's slots ahead of them, or plans the
// later look of a worker that is not preferred, and hands every runner
// back, due at its slot (or at that look).
func (d *dispatcher) askAhead(batch []*Runner) {
	defer d.batching.Done()
	deferrer := d.deferrer
	var a leaseAsk
	for _, r := range batch {
		if r.isStopped() || r.env.paused(r) {
			continue // back under its slot, which sees to it
		}
		req := LeaseRequest{PipelineID: r.id(), RunNumber: seamRun(r.next / int64(time.Second)), Ahead: true}
		if !r.checking && deferrer != nil && deferrer.DeferLease(req) > 0 {
			r.checking, r.askAt = true, r.next-r.lead/2
			continue
		}
		r.checking = false
		p := &preAcquired{ahead: true}
		p.runNumber, p.run = r.decide(timeOf(r.next))
		if !p.run {
			continue
		}
		req.RunNumber = seamRun(p.runNumber)
		r.pre = p
		a.add(r, req, p)
	}
	d.ask(batch[0].env, a)
	for _, r := range batch {
		r.plannedAt = r.now().UnixNano()
		d.handBack(r)
		d.attemptDone()
	}
}

// settleAhead decides, at r's slot, what the reply p got ahead of it
// stands for. True: p answers the attempt (a grant still held, a final
// refusal, or a pause that gave the grant back). False: p is dropped and
// the slot is asked for now, as without lease-ahead.
func (d *dispatcher) settleAhead(r *Runner, p *preAcquired) bool {
	if !p.ok {
		if p.err == nil || errors.Is(p.err, ErrSlotCompleted) {
			return true // held elsewhere for this slot, or done: it stands
		}
		r.pre = nil // undecided (ErrAskAtSlot) or not asked: ask now
		return false
	}
	env := r.env
	if env.paused(r) {
		p.paused, p.ok = true, false
		d.giveBackAhead(r)
		return true
	}
	lease, held := env.coord.CurrentLease(r.id())
	if held && lease.RunNumber == p.runNumber && r.now().UnixNano()-r.slot <= r.grace() {
		return true
	}
	// Lost since it was granted (the process stopped past its deadline,
	// the state was lost), or the boundary came too late: nothing ran on
	// it, so it goes back and the slot is judged and asked for anew.
	d.giveBackAhead(r)
	r.pre = nil
	return false
}

// giveBackAhead releases the lease r was granted ahead of its slot and did
// not run on. A lease already lost locally changes nothing in Redis.
func (d *dispatcher) giveBackAhead(r *Runner) {
	if err := r.env.finishLease(r.env.parent, r, false); err != nil {
		r.logRun(slog.LevelDebug, "giving back a lease granted ahead of its slot", Lease{RunNumber: r.slot / int64(time.Second)}, slog.Any("error", err))
	}
}

// MaxLeaseAhead bounds how long before a slot the pool asks for its lease
// (runtime.MaxLeaseAhead).
const MaxLeaseAhead = 250 * time.Millisecond
