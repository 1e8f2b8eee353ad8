package distributed

import (
	"context"
	_ "embed"

	"github.com/redis/go-redis/v9"
)

// The Lua scripts. Each runs atomically on one Redis (one Cluster slot: all
// its keys share the pipeline's hash tag) and is sent with EVALSHA, falling
// back to EVAL when the server does not know it yet (NOSCRIPT, e.g. after a
// restart). Release needs none: it is a plain LREM (see singleBackend.release).
var (
	//go:embed lua/acquire.lua
	acquireSource string
	//go:embed lua/renew.lua
	renewSource string
	//go:embed lua/complete.lua
	completeSource string
	//go:embed lua/heartbeat.lua
	heartbeatSource string

	acquireScript   = redis.NewScript(acquireSource)
	renewScript     = redis.NewScript(renewSource)
	completeScript  = redis.NewScript(completeSource)
	heartbeatScript = redis.NewScript(heartbeatSource)

	primaryScripts = []*redis.Script{acquireScript, renewScript, completeScript, heartbeatScript}
)

// loadScripts makes the server know scripts (one pipelined round trip), so
// the first request after connecting needs no EVAL fallback.
func loadScripts(ctx context.Context, c redis.Cmdable, scripts []*redis.Script) error {
	_, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, s := range scripts {
			s.Load(ctx, p)
		}
		return nil
	})
	return err
}

// isNoScript reports whether err says the server lacks a script.
func isNoScript(err error) bool { return redis.HasErrorPrefix(err, "NOSCRIPT") }

// scriptCall is one script invocation inside a pipeline.
type scriptCall struct {
	script *redis.Script
	keys   []string
	args   []any
}

// runPipelined runs calls in one pipelined round trip with EVALSHA. Calls
// the server answered NOSCRIPT are sent again with EVAL in a second round
// trip, which only happens after the server lost its script cache.
func runPipelined(ctx context.Context, c redis.Cmdable, calls []scriptCall) []*redis.Cmd {
	cmds := make([]*redis.Cmd, len(calls))
	_, _ = c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, call := range calls {
			cmds[i] = call.script.EvalSha(ctx, p, call.keys, call.args...)
		}
		return nil
	})
	var retry []int
	for i, cmd := range cmds {
		if isNoScript(cmd.Err()) {
			retry = append(retry, i)
		}
	}
	if len(retry) == 0 {
		return cmds
	}
	_, _ = c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, i := range retry {
			call := calls[i]
			cmds[i] = call.script.Eval(ctx, p, call.keys, call.args...)
		}
		return nil
	})
	return cmds
}
