package distributed

import (
	"context"
	"errors"
	"math"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/history"
)

// The run history lives in a pipeline's completed-slot sorted set (see
// keys.done), beside its "slot" member: one member per run, a compact JSON
// array (history_member.go), scored by the run's end in Unix milliseconds. Sharing the key is
// what keeps the history free: a successful slot run is recorded by adding
// its member to the very ZADD that records the slot, so such a run costs no
// extra command and no extra round trip; a failed run, or a Continuous or
// Once run, adds one ZADD to the pipelined release. The slot member is
// scored in Unix seconds, far below any millisecond score
// (historyScoreFloor), so it always ranks first and never counts as a run.
//
// Bounding costs no command per run either: every historyTrimShare-th run
// of a pipeline on a worker also queues ZREMRANGEBYRANK (keep the newest
// Limit) and ZREMRANGEBYSCORE (drop what is older than MaxAge) in the same
// pipeline. So a pipeline holds at most about Limit + Limit/4 runs per
// replica between trims; a reader sees the newest Limit within MaxAge.
// With the defaults (100 runs) a pipeline run by its preferred worker
// stays within Redis's 128 listpack entries (zset-max-listpack-entries),
// the other half of what keeps its key compact.

// historyScoreFloor separates run records (scored in Unix ms) from the
// slot member (scored in Unix s): 1e11 ms is 1973, 1e11 s is far future.
const historyScoreFloor = 1e11

// historyTrimShare: a worker trims a pipeline's history every
// Limit/historyTrimShare of its runs.
const historyTrimShare = 4

// historyPolicy returns the coordinator's run history bounds with defaults.
func (c *RedisWorkerCoordinator) historyPolicy() history.Policy {
	return c.s.RunHistory.WithDefaults()
}

// historyEntry is a run record as queued with its lease's release.
type historyEntry struct {
	member string  // the run's member (history_member.go)
	score  float64 // its end, Unix ms
	// trim, when set, queues the trimming commands too: keep the newest
	// limit runs, drop those that ended before cutMs.
	trim  bool
	limit int
	cutMs int64
}

// FinishRun gives the lease of rec.PipelineID back, completing it when
// rec.Outcome is history.OutcomeSucceeded, and records rec in the
// pipeline's run history in the same pipelined round trip (see the top of
// history.go). RunNumber, FencingToken and WorkerID are taken from the
// lease this worker holds. With the history off it is ReleaseLease or
// CompleteLease.
func (c *RedisWorkerCoordinator) FinishRun(ctx context.Context, rec history.Record) error {
	// A slot the database found done by another run is completed too, so
	// the fleet skips it.
	done := rec.Outcome == history.OutcomeSucceeded || rec.Outcome == history.OutcomeSlotDone
	return c.finishWith(ctx, rec.PipelineID, done, &rec)
}

// historyFor encodes rec for h's run (nil: the lease is gone, rec keeps
// what the pool knew of it) and decides whether this one trims; c.mu is
// held. It returns nil when the history is off.
func (c *RedisWorkerCoordinator) historyFor(h *heldLease, rec *history.Record) *historyEntry {
	p := c.s.RunHistory
	if rec == nil || p.Off {
		return nil
	}
	if h != nil {
		rec.RunNumber, rec.FencingToken, rec.WorkerID = h.lease.RunNumber, h.lease.FencingToken, c.workerID
	}
	if c.histCount == nil {
		c.histCount = map[string]uint32{}
	}
	n := c.histCount[rec.PipelineID] + 1
	c.histCount[rec.PipelineID] = n
	p = p.WithDefaults()
	every := uint32(max(1, p.Limit/historyTrimShare))
	return &historyEntry{
		member: encodeRunMember(rec), score: float64(rec.End.UnixMilli()), trim: n%every == 0,
		limit: p.Limit, cutMs: c.clock.Now().UnixMilli() - p.MaxAge.Milliseconds(),
	}
}

// queueHistory queues e's record, unless the completion's ZADD carries it
// already (inSlotZAdd), and, when due, the trim, on p.
func queueHistory(ctx context.Context, p redis.Pipeliner, key string, e *historyEntry, inSlotZAdd bool) {
	if !inSlotZAdd {
		p.ZAdd(ctx, key, redis.Z{Score: e.score, Member: e.member})
	}
	if !e.trim {
		return
	}
	// Rank 0 is the slot member when there is one; a pipeline without
	// slots keeps one run more, which no reader shows.
	p.ZRemRangeByRank(ctx, key, 1, -int64(e.limit)-1)
	if cut := float64(e.cutMs); cut > historyScoreFloor {
		p.ZRemRangeByScore(ctx, key, strconv.FormatFloat(historyScoreFloor, 'f', 0, 64), "("+strconv.FormatFloat(cut, 'f', 0, 64))
	}
}

// writeHistory records e on its own, for the paths whose release does not
// go through the single-node pipeline (Redlock quorum leases, a retried
// release).
func (c *RedisWorkerCoordinator) writeHistory(ctx context.Context, pipelineID string, e *historyEntry) {
	opCtx, cancel := c.opContext(ctx, opHistory)
	defer cancel()
	key := c.keys.done(pipelineID)
	_, err := c.client.Pipelined(opCtx, func(p redis.Pipeliner) error {
		queueHistory(opCtx, p, key, e, false)
		return nil
	})
	if err != nil {
		c.log.Warn("distributed: could not record a run in the run history", "pipeline", pipelineID, "error", err)
	}
}

// writeHistoryTrim trims pipelineID's history as e says, for a run a
// script recorded already (a backfill slot's).
func (c *RedisWorkerCoordinator) writeHistoryTrim(ctx context.Context, pipelineID string, e *historyEntry) {
	opCtx, cancel := c.opContext(ctx, opHistory)
	defer cancel()
	key := c.keys.done(pipelineID)
	_, err := c.client.Pipelined(opCtx, func(p redis.Pipeliner) error {
		queueHistory(opCtx, p, key, e, true)
		return nil
	})
	if err != nil {
		c.log.Warn("distributed: could not trim the run history", "pipeline", pipelineID, "error", err)
	}
}

// RunHistory reads the newest runs of pipelineID from Redis, newest first,
// at most limit (<= 0: the policy's Limit), none older than the policy's
// MaxAge. It needs only Connect.
func (c *RedisWorkerCoordinator) RunHistory(ctx context.Context, pipelineID string, limit int) ([]history.Record, error) {
	all, err := c.RunHistories(ctx, []string{pipelineID}, limit)
	if err != nil {
		return nil, err
	}
	return all[0], nil
}

// RunHistories is RunHistory for many pipelines in one pipelined round
// trip; the answer at index i is pipelineIDs[i]'s.
func (c *RedisWorkerCoordinator) RunHistories(ctx context.Context, pipelineIDs []string, limit int) ([][]history.Record, error) {
	pol := c.historyPolicy()
	if limit <= 0 {
		limit = pol.Limit
	}
	minScore := math.Max(historyScoreFloor, float64(c.clock.Now().UnixMilli()-pol.MaxAge.Milliseconds()))
	// Below the failure state's band (failures.go), which is no run.
	by := &redis.ZRangeBy{Max: "(" + strconv.FormatInt(failBand, 10), Min: strconv.FormatFloat(minScore, 'f', 0, 64), Count: int64(limit)}
	opCtx, cancel := c.opContext(ctx, opHistory)
	defer cancel()
	cmds := make([]*redis.ZSliceCmd, len(pipelineIDs))
	_, err := c.client.Pipelined(opCtx, func(p redis.Pipeliner) error {
		for i, id := range pipelineIDs {
			cmds[i] = p.ZRevRangeByScoreWithScores(opCtx, c.keys.done(id), by)
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) && !isWrongType(err) {
		return nil, c.failure("read the run history", err)
	}
	out := make([][]history.Record, len(pipelineIDs))
	for i, cmd := range cmds {
		members, err := cmd.Result()
		if isWrongType(err) {
			c.warnForeign(c.keys.done(pipelineIDs[i]), "not a sorted set: no run history can be read from it")
		}
		out[i] = make([]history.Record, 0, len(members))
		for _, z := range members {
			m, _ := z.Member.(string)
			if rec, ok := decodeRunMember(pipelineIDs[i], m, z.Score); ok {
				out[i] = append(out[i], rec)
			} else if m != doneMember {
				// Written by something else under the prefix: skipped and
				// counted, never shown as a run without an id.
				c.stats.historySkipped.Add(1)
				c.warnForeign(c.keys.done(pipelineIDs[i]), "holds members that are not run records; they are skipped")
			}
		}
	}
	return out, nil
}

var (
	_ runtime.RunRecorder      = (*RedisWorkerCoordinator)(nil)
	_ runtime.RunHistoryReader = (*RedisWorkerCoordinator)(nil)
)
