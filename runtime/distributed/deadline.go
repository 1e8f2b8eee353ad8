package distributed

import (
	"context"
	"fmt"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/distributed/internal/leasebackend"
)

// Missed deadlines (runtime.ScheduledPipeline.Deadline) are reported once
// for the fleet: the worker that finds a slot past its deadline asks
// deadline.lua, which answers yes to one caller only, and only when the
// slot has not completed. The last reported slot is kept per pipeline in
// keys.deadline, beside the completed slot it is compared with, under the
// same hash tag and the same state TTL (FencingKeyTTL). In Redlock mode
// both live on the primary, as the failure state does (failBackend): the
// completed slot is recorded there too, and a primary that cannot be asked
// makes the pool ask again a little later rather than report twice.

var _ runtime.DeadlineReporter = (*RedisWorkerCoordinator)(nil)

// MissedDeadline reports whether this worker is the one to report that
// slot (Unix s) of pipelineID missed its deadline: true for one caller per
// pipeline and slot, false when the slot (or a later one) completed or
// was reported already (this slot or a later one). A key holding data
// agora did not write gives an error wrapping ErrForeignData, and nothing
// is written.
func (c *RedisWorkerCoordinator) MissedDeadline(ctx context.Context, pipelineID string, slot int64) (bool, error) {
	n, err := c.slotScript(ctx, "check the deadline of", pipelineID, slot, leasebackend.DeadlineScript,
		func(b *singleBackend) []string {
			return []string{b.pipelineKeys(pipelineID)[2], c.keys.deadline(pipelineID)}
		},
		slot, c.s.FencingKeyTTL.Milliseconds())
	if err != nil {
		return false, err
	}
	switch n {
	case 1:
		return true, nil
	case 0:
		return false, nil
	case -6:
		return false, foreignKeyError("check a missed deadline", c.keys.done(pipelineID), "is not the sorted set of completed slots agora writes")
	case -7:
		return false, foreignKeyError("check a missed deadline", c.keys.deadline(pipelineID), "holds no slot (another type, or a value that is not a number of Unix seconds)")
	}
	return false, fmt.Errorf("distributed: the deadline script answered %d for %q", n, pipelineID)
}
