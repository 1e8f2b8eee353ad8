package leasebackend

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/redis/go-redis/v9"
)

// The Lua scripts. Each runs atomically on one Redis (one Cluster slot: all
// its keys share the pipeline's hash tag) and is sent with EVALSHA, falling
// back to EVAL when the server does not know it yet (NOSCRIPT, e.g. after a
// restart). Release and completion need none: they are plain commands (see
// runtime/distributed's singleBackend.release and queueRecord).
//
// AcquireScript grants leases (lua/acquire.lua), RenewScript extends them,
// HeartbeatScript refreshes a worker record, EpochBumpScript and
// EpochInitScript keep the state epoch (runtime/distributed's epoch.go),
// FailScript records a failed run and gives its lease back, and
// FailResetScript clears a stopped pipeline's failure state (failures.go),
// DeadlineScript decides who reports a missed deadline (deadline.go), and
// SlotCompletedScript tells whether one slot completed (after.go).
var (
	//go:embed lua/acquire.lua
	acquireSource string
	//go:embed lua/renew.lua
	renewSource string
	//go:embed lua/heartbeat.lua
	heartbeatSource string
	//go:embed lua/epoch_bump.lua
	epochBumpSource string
	//go:embed lua/epoch_init.lua
	epochInitSource string
	//go:embed lua/fail.lua
	failSource string
	//go:embed lua/fail_reset.lua
	failResetSource string
	//go:embed lua/deadline.lua
	deadlineSource string
	//go:embed lua/slot_completed.lua
	slotCompletedSource string
	//go:embed lua/backfill_start.lua
	backfillStartSource string
	//go:embed lua/backfill_claim.lua
	backfillClaimSource string
	//go:embed lua/backfill_finish.lua
	backfillFinishSource string

	AcquireScript   = newScript(acquireSource)
	RenewScript     = newScript(renewSource)
	HeartbeatScript = newScript(heartbeatSource)
	EpochBumpScript = newScript(epochBumpSource)
	EpochInitScript = newScript(epochInitSource)
	FailScript      = newScript(failSource)
	FailResetScript = newScript(failResetSource)
	DeadlineScript  = newScript(deadlineSource)
	// SlotCompletedScript is not loaded at connect: only workers with a
	// downstream pipeline run it, and the first call loads it.
	SlotCompletedScript = newScript(slotCompletedSource)
	// The backfill scripts (runtime/distributed's backfill.go) are not
	// loaded at connect either: BackfillStartScript starts one,
	// BackfillClaimScript hands a replica its next slot, and
	// BackfillFinishScript renews or finishes a slot it holds.
	BackfillStartScript  = newScript(backfillStartSource)
	BackfillClaimScript  = newScript(backfillClaimSource)
	BackfillFinishScript = newScript(backfillFinishSource)

	// PrimaryScripts are the scripts the primary Redis runs, loaded when
	// the coordinator connects (the epoch bump runs once per new
	// connection, with EVAL).
	PrimaryScripts = []*redis.Script{AcquireScript, RenewScript, HeartbeatScript, EpochInitScript, FailScript, FailResetScript, DeadlineScript}
)

// LoadScripts makes the server know scripts (one pipelined round trip), so
// the first request after connecting needs no EVAL fallback.
//
// It sends SCRIPT LOAD itself rather than calling Script.Load: from go-redis
// v9.19.0, Script.Load stores the command's value as the script's hash at
// once, and inside a pipeline that value is still empty, so every later
// EVALSHA would ask for "" and fall back to EVAL. The scripts keep the
// SHA1 NewScript computed locally; the server's answer is only checked
// against it.
func LoadScripts(ctx context.Context, c redis.Cmdable, scripts []*redis.Script) error {
	cmds := make([]*redis.StringCmd, len(scripts))
	_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, s := range scripts {
			cmds[i] = p.ScriptLoad(ctx, Source(s))
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, s := range scripts {
		if got := cmds[i].Val(); got != s.Hash() {
			return fmt.Errorf("distributed: the server hashed a script to %q, want %q", got, s.Hash())
		}
	}
	return nil
}

// scriptSources maps each script newScript made to its source, for SCRIPT
// LOAD; written only while the package initialises.
var scriptSources = map[*redis.Script]string{}

// newScript returns a script for src (its SHA1 computed locally) and
// remembers the source.
func newScript(src string) *redis.Script {
	s := redis.NewScript(src)
	scriptSources[s] = src
	return s
}

// Source returns the Lua source of one of the package's scripts ("" for
// any other script).
func Source(s *redis.Script) string { return scriptSources[s] }

// IsNoScript reports whether err says the server lacks a script.
func IsNoScript(err error) bool { return redis.HasErrorPrefix(err, "NOSCRIPT") }

// Call is one script invocation inside a pipeline.
type Call struct {
	Script *redis.Script
	Keys   []string
	Args   []any
}

// RunPipelined runs calls in one pipelined round trip with EVALSHA. Calls
// the server answered NOSCRIPT are sent again with EVAL in a second round
// trip, which only happens after the server lost its script cache.
func RunPipelined(ctx context.Context, c redis.Cmdable, calls []Call) []*redis.Cmd {
	cmds := make([]*redis.Cmd, len(calls))
	_, _ = c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, call := range calls {
			cmds[i] = call.Script.EvalSha(ctx, p, call.Keys, call.Args...)
		}
		return nil
	})
	var retry []int
	for i, cmd := range cmds {
		if IsNoScript(cmd.Err()) {
			retry = append(retry, i)
		}
	}
	if len(retry) == 0 {
		return cmds
	}
	_, _ = c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, i := range retry {
			call := calls[i]
			cmds[i] = call.Script.Eval(ctx, p, call.Keys, call.Args...)
		}
		return nil
	})
	return cmds
}
