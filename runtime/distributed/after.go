package distributed

import (
	"context"
	"fmt"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/distributed/internal/leasebackend"
)

// A downstream pipeline (runtime.ScheduledPipeline.After) asks, before
// each slot, whether its upstream completed that very slot, whichever
// binary of the fleet ran it: slot_completed.lua reads the upstream's
// completed key, where the last completed slot and the run history live
// (keys.done), in one round trip to the one Cluster slot of that key. In
// Redlock mode it asks the primary, where completions are recorded too, as
// MissedDeadline does.

var _ runtime.SlotCompletionReader = (*RedisWorkerCoordinator)(nil)

// SlotCompleted reports whether slot (Unix s) of pipelineID completed: it
// is the last completed slot, or the run history holds a successful run
// of it (or one that found its slot done). A slot before the last
// completed one that the history does not hold (the history is off,
// trimmed past it, or the run was never recorded) is reported as not
// completed. A completed key holding data agora did not write gives an
// error wrapping ErrForeignData naming it. It needs only Connect.
func (c *RedisWorkerCoordinator) SlotCompleted(ctx context.Context, pipelineID string, slot int64) (bool, error) {
	n, err := c.slotScript(ctx, "ask about the completion of", pipelineID, slot, leasebackend.SlotCompletedScript,
		func(b *singleBackend) []string { return []string{b.pipelineKeys(pipelineID)[2]} },
		slot, slot*1000-c.s.LeaseTTL.Milliseconds())
	if err != nil {
		return false, err
	}
	switch n {
	case 1:
		return true, nil
	case 0:
		return false, nil
	case -6:
		return false, foreignKeyError("read a completed slot", c.keys.done(pipelineID), "is not the sorted set of completed slots agora writes")
	}
	return false, fmt.Errorf("distributed: the slot completion script answered %d for %q", n, pipelineID)
}
