package distributed

import "context"

// redisOp names what the coordinator was doing when it sent a Redis
// request: the op label of agora_redis_request_duration_seconds. The set is
// agora's own and fixed, so the label never carries a Redis or go-redis
// command name (evalsha, hello, cluster, pipeline) and its values stay few
// whatever the client does underneath.
type redisOp uint8

// The operations. opOther is a request sent from a context no operation
// tagged; the tests keep it from appearing.
const (
	opOther      redisOp = iota
	opConnect            // Connect: ping, script load, quorum checks
	opAcquire            // TryAcquireLease(s), with the preference check
	opRenew              // lease renewal, with the worker record it carries
	opRelease            // ReleaseLease, Stop giving leases back
	opComplete           // CompleteLease, its retries
	opHeartbeat          // the worker record
	opValidate           // ValidateLease
	opControl            // pause, resume, trigger and their polling
	opPreference         // the preferred-worker index
	opInspect            // leases, holders, workers and completed slots read (fleet CLI, catch-up)
	opHealth             // Healthy
	opStop               // Stop deleting the worker record
	opHistory            // run history written on its own or read
	numOps
)

var opNames = [numOps]string{
	opOther: "other", opConnect: "connect", opAcquire: "acquire", opRenew: "renew",
	opRelease: "release", opComplete: "complete", opHeartbeat: "heartbeat", opValidate: "validate",
	opControl: "control", opPreference: "preference", opInspect: "inspect", opHealth: "health", opStop: "stop", opHistory: "history",
}

// String returns the label value.
func (o redisOp) String() string {
	if o < numOps {
		return opNames[o]
	}
	return opNames[opOther]
}

type opKey struct{}

// withOp tags ctx with op for the requests sent under it.
func withOp(ctx context.Context, op redisOp) context.Context {
	return context.WithValue(ctx, opKey{}, op)
}

// opOf returns the operation ctx was tagged with, opOther when none.
func opOf(ctx context.Context) redisOp {
	op, _ := ctx.Value(opKey{}).(redisOp)
	return op
}
