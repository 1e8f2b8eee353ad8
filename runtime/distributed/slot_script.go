package distributed

import (
	"context"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/runtime/distributed/internal/leasebackend"
)

// slotScript runs one script about slot (Unix s) of pipelineID where the
// failure state lives (failBackend: the one Redis, or the Redlock
// primary) and returns its integer answer; the caller reads the answer's
// meaning. keys gets the backend, whose hash tags name the keys. what says
// what was asked, for errors: "check the deadline of".
func (c *RedisWorkerCoordinator) slotScript(ctx context.Context, what, pipelineID string, slot int64, script *redis.Script, keys func(b *singleBackend) []string, args ...any) (int64, error) {
	if c.isClosed() {
		return 0, ErrClosed
	}
	b := c.failBackend()
	if b == nil {
		return 0, fmt.Errorf("distributed: %s slot %d of %q: no backend to ask", what, slot, pipelineID)
	}
	ctx, cancel := c.opContext(ctx, opInspect)
	defer cancel()
	cmd := leasebackend.RunPipelined(ctx, b.client, []leasebackend.Call{{Script: script, Keys: keys(b), Args: args}})[0]
	n, err := cmd.Int64()
	if err != nil {
		return 0, c.failure(what+" slot "+strconv.FormatInt(slot, 10)+" of "+strconv.Quote(pipelineID), err)
	}
	c.noteOK()
	return n, nil
}
