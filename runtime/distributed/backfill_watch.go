package distributed

import (
	"context"
	"errors"
	"slices"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/runtime/distributed/internal/leasebackend"
)

// Which pipelines have a running backfill is read with the control state:
// StartBackfill adds the pipeline to the index <prefix>control:backfill
// (keys.backfills: pipeline id → backfill id), and every poll reads it
// with one HGETALL. For each backfill of one of its pipelines the worker
// also reads the backfill's hash, and keeps it: when Redis loses its data
// (restarted empty), the index and the hash are gone together, and the
// worker writes back the backfill it remembers, so it resumes rather than
// vanishes. Its slots in flight then are handed out again first; the
// slots handed out after the worker's last read are handed out again in
// turn. Either way a slot may run a second time, which the slot ledger of
// the fenced database sinks refuses (docs/backfill.md).

// backfills indexes the running backfills.
func (k keys) backfills() string { return k.prefix + "control:backfill" }

// Backfilling returns this worker's pipelines that have a running
// backfill, as of the last control poll, sorted.
func (c *RedisWorkerCoordinator) Backfilling() []string {
	c.ctl.mu.RLock()
	defer c.ctl.mu.RUnlock()
	out := make([]string, 0, len(c.ctl.backfills))
	for id, p := range c.ctl.backfills {
		if p.State == BackfillRunning {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}

// indexBackfill adds pipelineID's backfill id to the index.
func (c *RedisWorkerCoordinator) indexBackfill(ctx context.Context, pipelineID, id string) error {
	ctx, cancel := c.opContext(ctx, opControl)
	defer cancel()
	if err := c.client.HSet(ctx, c.keys.backfills(), pipelineID, id).Err(); err != nil {
		return c.failure("index the backfill of "+strconv.Quote(pipelineID), err)
	}
	return nil
}

// unindexBackfill removes pipelineID from the index if it still names id.
func (c *RedisWorkerCoordinator) unindexBackfill(ctx context.Context, pipelineID, id string) {
	key := c.keys.backfills()
	_ = c.client.Watch(ctx, func(tx *redis.Tx) error {
		if v, err := tx.HGet(ctx, key, pipelineID).Result(); err != nil || v != id {
			return err
		}
		_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.HDel(ctx, key, pipelineID)
			return nil
		})
		return err
	}, key)
}

// watchBackfills brings the worker's view of its pipelines' backfills up
// to date from the index read by the poll (index: pipeline → backfill id),
// writing back those Redis lost.
func (c *RedisWorkerCoordinator) watchBackfills(ctx context.Context, index map[string]string) {
	c.ctl.mu.RLock()
	seen := make(map[string]BackfillProgress, len(c.ctl.backfills))
	for id, p := range c.ctl.backfills {
		seen[id] = p
	}
	mine := make([]string, 0, len(index)+len(seen))
	for id := range index {
		if c.ctl.mine[id] {
			mine = append(mine, id)
		}
	}
	for id := range seen {
		if _, ok := index[id]; !ok {
			mine = append(mine, id)
		}
	}
	c.ctl.mu.RUnlock()
	now := make(map[string]BackfillProgress, len(mine))
	for _, id := range mine {
		p, err := c.readBackfill(ctx, id)
		switch {
		case errors.Is(err, ErrNoBackfill):
			if was, ok := seen[id]; ok && was.State == BackfillRunning {
				if c.restoreBackfill(ctx, was) {
					now[id] = was
				}
			} else if bid, ok := index[id]; ok {
				c.unindexBackfill(ctx, id, bid)
			}
			continue
		case err != nil:
			if was, ok := seen[id]; ok {
				now[id] = was // keep what was known until Redis answers again
			}
			continue
		}
		if p.State == BackfillRunning {
			now[id] = p
			if index[id] != p.ID {
				_ = c.indexBackfill(ctx, id, p.ID)
			}
		} else if bid, ok := index[id]; ok {
			c.unindexBackfill(ctx, id, bid)
		}
	}
	c.ctl.mu.Lock()
	c.ctl.backfills = now
	c.ctl.mu.Unlock()
}

// restoreBackfill writes back a running backfill p that Redis lost, as
// the worker last read it: true when written (or another worker wrote it
// first).
func (c *RedisWorkerCoordinator) restoreBackfill(ctx context.Context, p BackfillProgress) bool {
	id := p.Request.PipelineID
	body, _ := jsonRequest(p.Request)
	cursor := ""
	if !p.Cursor.IsZero() {
		cursor = strconv.FormatInt(p.Cursor.Unix(), 10)
	}
	exhausted := ""
	if p.Remaining() == 0 && len(p.InFlight) > 0 {
		exhausted = "1"
	}
	args := []any{p.ID, body, p.Request.Parallel, p.Total, BackfillKeep.Milliseconds(), "restore", cursor, p.Done, p.Skipped, p.Failed, exhausted}
	for _, s := range p.InFlight {
		args = append(args, s.Slot.Unix())
	}
	n, err := c.backfillScript(ctx, "write back the backfill of", id, leasebackend.BackfillStartScript, args...)
	if err != nil || n < 0 {
		return false
	}
	if n == 1 {
		c.log.Warn("distributed: Redis lost a running backfill; wrote it back as this worker last read it: slots in flight then, and any handed out after, run again (the slot ledger of fenced sinks refuses a second write)",
			"pipeline", id, "backfill", p.ID, "cursor", cursor, "in_flight", len(p.InFlight))
	}
	_ = c.indexBackfill(ctx, id, p.ID)
	return true
}
