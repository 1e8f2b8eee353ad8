package distributed

import (
	"errors"
	"fmt"
	"strings"

	"github.com/redis/go-redis/v9"
)

// ErrRedisRefusing is wrapped by the error of an operation that Redis
// answered with an error reply saying it will not take the command: out of
// memory under maxmemory with noeviction (OOM), a read-only replica
// (READONLY), a missing ACL permission (NOPERM), failed persistence
// (MISCONF), too few replicas (NOREPLICAS), a password problem (NOAUTH,
// WRONGPASS). Such a Redis is reachable; it is refusing. While it refuses
// the worker's heartbeat, acquires or renewals, Healthy returns an error
// wrapping ErrRedisRefusing (so /readyz answers 503) and
// agora_coordinator_up is 0; see grantRefused for the rule.
var ErrRedisRefusing = errors.New("distributed: Redis refused the command")

// refusalCodes are the error-reply codes that mean the server answered but
// will not take the command. Other replies (a script's own error, WRONGTYPE)
// are errors of the request, and dial errors and timeouts are outages.
var refusalCodes = map[string]bool{
	"OOM": true, "READONLY": true, "NOPERM": true, "MISCONF": true,
	"NOREPLICAS": true, "NOAUTH": true, "WRONGPASS": true,
}

// refusedReply returns the server's reply when err carries an error reply
// that refuses the command (see refusalCodes), and whether it does. A
// reply that a Lua script passed on ("ERR ... -OOM command not allowed")
// counts by the code it carries.
func refusedReply(err error) (string, bool) {
	var re redis.Error
	if err == nil || errors.Is(err, redis.Nil) || !errors.As(err, &re) {
		return "", false
	}
	msg := re.Error()
	code, _, _ := strings.Cut(msg, " ")
	if refusalCodes[code] {
		return msg, true
	}
	for c := range refusalCodes {
		if i := strings.Index(msg, "-"+c+" "); i >= 0 {
			return msg[i+1:], true
		}
	}
	return "", false
}

// grantRefused is the rule for readiness while Redis refuses: the worker is
// not ready from the first heartbeat, acquire or renewal that Redis refuses
// (heartbeats come every HeartbeatInterval, so at most that long after Redis
// starts refusing) until a heartbeat succeeds again. While the state is set,
// each Healthy call (each /readyz probe) retries the heartbeat, so readiness
// comes back at the first probe after Redis accepts writes. A PING does not
// clear it (an OOM Redis still answers PING), nor does a renewal or an
// acquire that gets through: Redis lets a script that already wrote (a
// PEXPIRE needs no memory) write on under OOM, while a worker whose record
// cannot be refreshed is taken for dead by the others once it expires.
//
// grantRefused records a refusal of one of those operations; what names it.
// It logs the change from accepting to refusing once, with the server's
// reason (redacted), and acceptedWrite logs the way back; a Redis at the
// edge of maxmemory that flips between the two is logged like a flapping
// outage (see outageLog), with unlogged_refusals.
func (c *RedisWorkerCoordinator) grantRefused(what string, err error) {
	reason, ok := refusedReply(err)
	if !ok {
		return
	}
	reason = c.s.redactor.Redact(reason)
	if c.health.refused.Swap(&reason) != nil {
		return
	}
	logIt, unlogged := c.health.refusedLog.down(c.clock.Now())
	if !logIt {
		return
	}
	args := []any{"redis", c.s.primary.Redacted, "reason", reason}
	if unlogged > 0 {
		args = append(args, "unlogged_refusals", unlogged)
	}
	c.log.Warn("distributed: Redis refused the "+what+": it answers, but will not take the worker's writes; no lease is granted until it does", args...)
}

// acceptedWrite records a heartbeat that Redis took, ending a refusal (see
// grantRefused).
func (c *RedisWorkerCoordinator) acceptedWrite() {
	if c.health.refused.Swap(nil) != nil && c.health.refusedLog.up() {
		c.log.Info("distributed: Redis accepts writes again", "redis", c.s.primary.Redacted)
	}
}

// refusedErr returns the refusal under way as an error, or nil.
func (c *RedisWorkerCoordinator) refusedErr() error {
	if r := c.health.refused.Load(); r != nil {
		return fmt.Errorf("%w: %s", ErrRedisRefusing, *r)
	}
	return nil
}
