package distributed

import (
	"context"
	"fmt"
)

// Fencing tokens
//
// The acquire script mints a pipeline's token as
//
//	token = max(last + 1, now_µs)
//
// where last is the pipeline's token key and now_µs the Redis server's TIME
// in microseconds since the Unix epoch. It writes now_µs with SET … GET,
// which hands back last in the same call, and corrects the token in the rare
// case the clock is not ahead of it; a refused attempt is decided before
// anything is written, so only granted leases move the counter. One script
// call that decides a batch reads the clock once and adds a microsecond per
// grant, so the tokens it mints are distinct, as separate calls' would be.
//
// The counter alone would restart at 1 after it is lost (FencingKeyTTL
// expiry, a restart without persistence) and repeat tokens after it goes
// stale (a failover to a replica that missed writes, a restart from an AOF
// or RDB file older than the last writes). The clock term keeps tokens
// increasing through all of these. A token is the clock reading of its mint,
// unless the clock was not ahead of the previous token: then it is one more.
// A lease is granted only after the previous one was released — its holder
// needed the acquire reply first, a network round trip — or expired, so a
// pipeline is granted far fewer than one lease per microsecond, and the
// counter stays within a few microseconds of the clock. So while the clock
// moves forward, now_µs is already past every earlier token.
//
// Assumption: the clock of the Redis server that mints a token after the
// counter was lost or went stale reads later than the clock of the server
// that minted the previous token did at that moment. NTP-synchronised
// servers meet this with a wide margin (a restart or failover takes
// seconds, clock offsets are milliseconds); a server clock set back by more
// than the outage lasted would break it. While the counter survives, a clock
// set back does not matter: last + 1 wins.
//
// Tokens are near 1.8e15 today: well inside int64, and exact in the Lua
// doubles Redis scripts compute with until about the year 2255.

// ValidateLease reports whether token is the fencing token of the lease in
// force for pipelineID right now, in one round trip: true only while Redis
// holds exactly that token. A downstream store can call it just before a
// critical write; a store that keeps the highest token it has seen and
// rejects smaller ones needs no call at all. Token 0 (an unfenced local
// lease) is never valid. ValidateLease works after Connect, without Start.
func (c *RedisWorkerCoordinator) ValidateLease(ctx context.Context, pipelineID string, token int64) (bool, error) {
	if c.isClosed() {
		return false, ErrClosed
	}
	if token <= 0 {
		return false, nil
	}
	ctx, cancel := c.opContext(ctx, opValidate)
	defer cancel()
	ok, err := c.backend.validate(ctx, pipelineID, token)
	if err != nil {
		return false, c.failure(fmt.Sprintf("validate lease of %q", pipelineID), err)
	}
	c.noteOK()
	return ok, nil
}
