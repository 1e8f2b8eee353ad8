package distributed

import (
	"context"
	"fmt"
	"strconv"

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
	if c.isClosed() {
		return false, ErrClosed
	}
	b := c.failBackend()
	if b == nil {
		return false, fmt.Errorf("distributed: deadline of %q: no backend to ask", pipelineID)
	}
	ctx, cancel := c.opContext(ctx, opInspect)
	defer cancel()
	done, reported := b.pipelineKeys(pipelineID)[2], c.keys.deadline(pipelineID)
	cmd := leasebackend.RunPipelined(ctx, b.client, []leasebackend.Call{{
		Script: leasebackend.DeadlineScript,
		Keys:   []string{done, reported},
		Args:   []any{slot, b.stateTTLArg},
	}})[0]
	n, err := cmd.Int64()
	if err != nil {
		return false, c.failure("check the deadline of slot "+strconv.FormatInt(slot, 10)+" of "+strconv.Quote(pipelineID), err)
	}
	c.noteOK()
	switch n {
	case 1:
		return true, nil
	case 0:
		return false, nil
	case -6:
		return false, foreignKeyError("check a missed deadline", done, "is not the sorted set of completed slots agora writes")
	case -7:
		return false, foreignKeyError("check a missed deadline", reported, "holds no slot (another type, or a value that is not a number of Unix seconds)")
	}
	return false, fmt.Errorf("distributed: the deadline script answered %d for %q", n, pipelineID)
}
