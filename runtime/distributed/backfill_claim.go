package distributed

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/distributed/internal/leasebackend"
	"github.com/agora-etl/agora/runtime/history"
)

// backfillClaim is a backfill slot a replica holds: it runs the slot under
// Token, renews it within the lease TTL, and finishes it.
type backfillClaim struct {
	// PipelineID names the pipeline; ID the backfill.
	PipelineID string
	ID         string
	// Slot is the slot's start; the run number is its Unix second, as a
	// scheduled slot's (runtime.Lease.RunNumber).
	Slot time.Time
	// Token is the run's fencing token, minted like a lease's.
	Token int64
	// Again reports a slot handed out before whose holder's lease
	// expired: its run may have written part of the slot.
	Again bool
	// Reprocess is the request's: the slot runs even if it completed.
	Reprocess bool
	// Params are the request's parameters of every slot run.
	Params map[string]string
	// WaitUpstream is the request's (a dependent's backfill).
	WaitUpstream bool
}

// backfillTurn says why claimBackfillSlot handed out no slot.
type backfillTurn uint8

// The answers of claimBackfillSlot.
const (
	// backfillClaimed: the claim is this replica's to run.
	backfillClaimed backfillTurn = iota
	// backfillBusy: the request's parallel slots are in flight.
	backfillBusy
	// backfillWaiting: no slot is left; some are still in flight.
	backfillWaiting
	// backfillEnded: the backfill is over (done, cancelled, failed), or
	// there is none.
	backfillEnded
)

// backfillMoves bounds how often a claim reads the cursor again after
// another replica moved it, before it leaves the turn to the next poll.
const backfillMoves = 3

// claimBackfillSlot hands this replica the next slot of pipelineID's
// running backfill, computing it from s, the pipeline's schedule: a slot
// in flight whose lease expired first (Again), else the slot after the
// cursor, unless the request's parallel slots are in flight. The claim's
// lease lasts LeaseTTL; renewBackfillSlot extends it.
func (c *RedisWorkerCoordinator) claimBackfillSlot(ctx context.Context, pipelineID string, s runtime.Schedule) (backfillClaim, backfillTurn, error) {
	p, err := c.readBackfill(ctx, pipelineID)
	if errors.Is(err, ErrNoBackfill) {
		return backfillClaim{}, backfillEnded, nil
	}
	if err != nil {
		return backfillClaim{}, 0, err
	}
	for range backfillMoves {
		if p.State != BackfillRunning {
			return backfillClaim{}, backfillEnded, nil
		}
		cursor, after := "", p.Request.From.Add(-time.Nanosecond)
		if !p.Cursor.IsZero() {
			cursor, after = strconv.FormatInt(p.Cursor.Unix(), 10), p.Cursor
		}
		next := ""
		if t := NextBackfillSlot(s, after); !t.IsZero() && t.Before(p.Request.To) {
			next = strconv.FormatInt(t.Unix(), 10)
		}
		res, err := c.backfillCall(ctx, "claim a backfill slot of", pipelineID, leasebackend.BackfillClaimScript,
			func(b *singleBackend) []string {
				k := b.pipelineKeys(pipelineID)
				return []string{c.keys.backfill(pipelineID), k[1], k[0], k[2]}
			},
			c.owner, c.s.LeaseTTL.Milliseconds(), p.ID, cursor, next, c.s.FencingKeyTTL.Milliseconds(), BackfillKeep.Milliseconds())
		if err != nil {
			return backfillClaim{}, 0, err
		}
		kind, slot, token, ok := claimReply(res)
		if !ok {
			return backfillClaim{}, 0, fmt.Errorf("distributed: claim a backfill slot of %q: the script answered %v", pipelineID, res)
		}
		claim := backfillClaim{PipelineID: pipelineID, ID: p.ID, Slot: time.Unix(slot, 0).UTC(), Token: token, Reprocess: p.Request.Reprocess, Params: p.Request.Params, WaitUpstream: p.Request.WaitUpstream}
		switch kind {
		case "slot":
			return claim, backfillClaimed, nil
		case "again":
			claim.Again = true
			return claim, backfillClaimed, nil
		case "busy", "held":
			// held: the schedule is running the next slot, or it has not
			// begun; the claim is made again at the next poll.
			return backfillClaim{}, backfillBusy, nil
		case "wait":
			return backfillClaim{}, backfillWaiting, nil
		case "end", "gone":
			return backfillClaim{}, backfillEnded, nil
		case "foreign":
			return backfillClaim{}, 0, foreignKeyError("claim a backfill slot", c.keys.backfill(pipelineID)+", "+c.keys.token(pipelineID)+" or "+c.keys.lease(pipelineID), "holds what agora does not write there")
		case "moved":
			p.Cursor = time.Unix(slot, 0).UTC()
			continue
		}
		return backfillClaim{}, 0, fmt.Errorf("distributed: claim a backfill slot of %q: the script answered %q", pipelineID, kind)
	}
	return backfillClaim{}, backfillBusy, nil
}

// claimReply reads backfill_claim.lua's {kind, slot, token}.
func claimReply(res any) (kind string, slot, token int64, ok bool) {
	a, isList := res.([]any)
	if !isList || len(a) != 3 {
		return "", 0, 0, false
	}
	kind, ok1 := a[0].(string)
	slot, ok2 := a[1].(int64)
	token, ok3 := a[2].(int64)
	return kind, slot, token, ok1 && ok2 && ok3
}

// renewBackfillSlot extends the lease of a slot this replica holds by
// LeaseTTL: false when the slot is no longer its own (the lease expired
// and the slot was handed out again, or the backfill is gone), and the
// run must stop.
func (c *RedisWorkerCoordinator) renewBackfillSlot(ctx context.Context, cl backfillClaim) (bool, error) {
	res, err := c.backfillCall(ctx, "renew a backfill slot of", cl.PipelineID, leasebackend.BackfillFinishScript,
		func(b *singleBackend) []string {
			return []string{c.keys.backfill(cl.PipelineID), b.pipelineKeys(cl.PipelineID)[2]}
		},
		c.owner, cl.ID, cl.Slot.Unix(), cl.Token, "r", c.s.LeaseTTL.Milliseconds(), 0, 0)
	if err != nil {
		return false, err
	}
	n, _ := res.(int64)
	return n == 1, nil
}

// backfillOutcome is how a backfill slot's run ended.
type backfillOutcome uint8

// The outcomes of a backfill slot.
const (
	// backfillSlotDone: the run succeeded.
	backfillSlotDone backfillOutcome = iota
	// backfillSlotSkipped: the slot had completed before (the run
	// history, or a sink's ledger: runtime.ErrSlotCompleted).
	backfillSlotSkipped
	// backfillSlotFailed: the run failed.
	backfillSlotFailed
	// backfillSlotReleased: given back uncounted, not run (its backfill
	// was cancelled while it waited).
	backfillSlotReleased
)

// finishBackfillSlot records how a slot this replica holds ended and
// gives it back. rec is its run (its outcome and error; the run number,
// token and worker are the claim's); nil when it did not run (it had
// completed before: o is backfillSlotSkipped). The run goes into the run
// history in the same step, so SlotCompleted knows a slot counted done.
// A failed run's error is kept for the first MaxBackfillErrors failed
// slots; maxFailed failed slots in a row stop the backfill (0: never).
// false: the slot was not this replica's any more, and nothing was
// counted or recorded.
func (c *RedisWorkerCoordinator) finishBackfillSlot(ctx context.Context, cl backfillClaim, o backfillOutcome, rec *history.Record, maxFailed int) (bool, error) {
	op, text := "d", ""
	switch o {
	case backfillSlotSkipped:
		op = "s"
	case backfillSlotFailed:
		op = "f"
		if rec != nil {
			text = rec.Error
		}
	case backfillSlotReleased:
		op, rec = "x", nil
	}
	var hist *historyEntry
	member, score := "", int64(0)
	if rec != nil {
		r := *rec
		r.PipelineID, r.RunNumber, r.FencingToken, r.WorkerID = cl.PipelineID, cl.Slot.Unix(), cl.Token, c.workerID
		c.mu.Lock()
		hist = c.historyFor(nil, &r)
		c.mu.Unlock()
		if hist != nil {
			member, score = hist.member, int64(hist.score)
		}
	}
	res, err := c.backfillCall(ctx, "finish a backfill slot of", cl.PipelineID, leasebackend.BackfillFinishScript,
		func(b *singleBackend) []string {
			return []string{c.keys.backfill(cl.PipelineID), b.pipelineKeys(cl.PipelineID)[2]}
		},
		c.owner, cl.ID, cl.Slot.Unix(), cl.Token, op, text, maxFailed, MaxBackfillErrors, member, score)
	if err != nil {
		return false, err
	}
	n, _ := res.(int64)
	if n == 1 && hist != nil && hist.trim {
		// The script added the run; a backfill of many slots trims the
		// history as the scheduled runs do, so it stays within its policy.
		c.writeHistoryTrim(ctx, cl.PipelineID, hist)
	}
	return n == 1, nil
}
