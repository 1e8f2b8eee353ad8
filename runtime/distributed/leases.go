package distributed

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/runtime"
)

// LeaseState is what Redis holds for one pipeline, read by LeaseStates for
// fleet tooling (Inspector.Leases adds whether the holder is alive).
type LeaseState struct {
	// PipelineID names the pipeline.
	PipelineID string `json:"pipeline_id"`
	// Held is true while a lease is in force.
	Held bool `json:"held"`
	// Holder is the worker id of the lease's holder, "" when not held.
	Holder string `json:"holder,omitempty"`
	// FencingToken is the held lease's token, 0 when not held.
	FencingToken int64 `json:"fencing_token"`
	// RunNumber is the held lease's run number, 0 when not held.
	RunNumber int64 `json:"run_number"`
	// ExpiresIn is how long the held lease lives unless renewed; in JSON
	// expires_in_ns, integer nanoseconds (the fleet's rule for durations).
	ExpiresIn time.Duration `json:"expires_in_ns"`
	// LastToken is the last fencing token handed out, 0 when none is known.
	LastToken int64 `json:"last_token"`
	// LastCompleted is the last completed slot (Unix seconds), 0 when none.
	LastCompleted int64 `json:"last_completed"`
	// OnceCompleted is true when a Once pipeline's run completed.
	OnceCompleted bool `json:"once_completed"`
	// LastDeadlineMissed is the last slot (Unix seconds) reported as
	// missing its deadline (deadline.go), 0 when none is kept.
	LastDeadlineMissed int64 `json:"last_deadline_missed,omitempty"`
	// Problem says which of the pipeline's keys hold data agora did not
	// write (another type, or a value that does not parse), "" when none
	// does: such a pipeline is granted no lease until the key is fixed
	// (its deadline key: no missed deadline is reported or shown).
	Problem string `json:"problem,omitempty"`
}

// LeaseStates reads the lease, last token, last completed slot, Once
// marker and last slot reported as missing its deadline of each pipeline
// from the primary in one pipelined round trip. It
// only reads, so it works on a coordinator that is merely connected. With a
// Redlock quorum the lease itself lives on the quorum nodes; the primary's
// copy shown here is the one the coordinator reserved it under.
func (c *RedisWorkerCoordinator) LeaseStates(ctx context.Context, pipelineIDs []string) ([]LeaseState, error) {
	if c.isClosed() {
		return nil, ErrClosed
	}
	type reads struct {
		lease *redis.StringCmd
		ttl   *redis.DurationCmd
		token *redis.StringCmd
		done  *redis.FloatCmd
		once  *redis.IntCmd
		late  *redis.StringCmd
	}
	all := make([]reads, len(pipelineIDs))
	ctx, cancel := c.opContext(ctx, opInspect)
	defer cancel()
	_, err := c.client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, id := range pipelineIDs {
			all[i] = reads{
				lease: p.LIndex(ctx, c.keys.lease(id), 0),
				ttl:   p.PTTL(ctx, c.keys.lease(id)),
				token: p.Get(ctx, c.keys.token(id)),
				done:  p.ZScore(ctx, c.keys.done(id), doneMember),
				once:  p.Exists(ctx, c.keys.once(id)),
				late:  p.Get(ctx, c.keys.deadline(id)),
			}
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) && !isWrongType(err) {
		return nil, c.failure("read leases", err)
	}
	c.noteOK()
	out := make([]LeaseState, len(pipelineIDs))
	for i, id := range pipelineIDs {
		r := all[i]
		st := LeaseState{PipelineID: id}
		var problems []string
		// foreign notes a key of id that is not agora's: named once in the
		// log, and in the pipeline's Problem every time.
		foreign := func(key, why string) {
			c.warnForeign(key, why)
			problems = append(problems, key+" "+why)
		}
		for _, cmd := range []redis.Cmder{r.lease, r.token, r.done, r.once, r.late} {
			if isWrongType(cmd.Err()) {
				foreign(cmd.Args()[1].(string), "is of another type than agora writes")
			}
		}
		if v, err := r.lease.Result(); err == nil {
			if token, run, owner, ok := parseLeaseValue(v); ok {
				st.Held, st.FencingToken, st.RunNumber, st.Holder = true, token, run, workerOf(owner)
				if ttl := r.ttl.Val(); ttl > 0 {
					st.ExpiresIn = ttl
				}
			} else {
				foreign(c.keys.lease(id), "holds a lease that does not parse")
			}
		}
		if v := r.token.Val(); v != "" {
			if _, _, ok := parseTokenValue(v); !ok {
				foreign(c.keys.token(id), "holds a token that does not parse (at most 16 digits, then the run)")
			}
		}
		if v := r.late.Val(); v != "" {
			if slot, ok := parseSlotValue(v); ok {
				st.LastDeadlineMissed = slot
			} else {
				foreign(c.keys.deadline(id), "holds no slot (at most 16 digits, Unix seconds)")
			}
		}
		st.Problem = strings.Join(problems, "; ")
		st.LastToken, _ = parseTokenRecord(r.token.Val())
		st.LastCompleted = int64(r.done.Val())
		st.OnceCompleted = r.once.Val() == 1
		out[i] = st
	}
	return out, nil
}

// parseLeaseValue splits a lease's "<token> <run> <owner>".
func parseLeaseValue(v string) (token, run int64, owner string, ok bool) {
	parts := strings.SplitN(v, " ", 3)
	if len(parts) != 3 {
		return 0, 0, "", false
	}
	token, err1 := strconv.ParseInt(parts[0], 10, 64)
	run, err2 := strconv.ParseInt(parts[1], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, "", false
	}
	return token, run, parts[2], true
}

// workerOf drops the per-instance suffix ("#" and hex) Start adds to the
// worker id to make an owner.
func workerOf(owner string) string {
	if i := strings.LastIndexByte(owner, '#'); i >= 0 {
		return owner[:i]
	}
	return owner
}

var _ runtime.CompletionReader = (*RedisWorkerCoordinator)(nil)

// LastCompleted returns pipelineID's last completed slot (Unix seconds) as
// the primary records it, and false when none is. A cron pipeline with a
// catch-up policy reads it at start, to run the slots missed while every
// replica was down.
func (c *RedisWorkerCoordinator) LastCompleted(ctx context.Context, pipelineID string) (int64, bool, error) {
	if c.isClosed() {
		return 0, false, ErrClosed
	}
	ctx, cancel := c.opContext(ctx, opInspect)
	defer cancel()
	slot, err := c.client.ZScore(ctx, c.keys.done(pipelineID), doneMember).Result()
	if errors.Is(err, redis.Nil) {
		c.noteOK()
		return 0, false, nil
	}
	if err != nil {
		return 0, false, c.failure("read last completed slot of "+strconv.Quote(pipelineID), err)
	}
	c.noteOK()
	return int64(slot), true, nil
}

// parseTokenValue checks a token key's "<token> <run>" (or an older
// "<token>") as the acquire script does: a token of at most 16 digits.
func parseTokenValue(v string) (token, run int64, ok bool) {
	t, r, hasRun := strings.Cut(v, " ")
	token, ok = parseSlotValue(t)
	if !ok {
		return 0, 0, false
	}
	if hasRun {
		var err error
		if run, err = strconv.ParseInt(r, 10, 64); err != nil {
			return 0, 0, false
		}
	}
	return token, run, true
}

// parseSlotValue checks a number as the scripts do (a deadline key's slot,
// deadline.lua; a token, acquire.lua): at most 16 decimal digits, which a
// Lua number holds exactly.
func parseSlotValue(v string) (int64, bool) {
	if len(v) == 0 || len(v) > 16 || strings.TrimLeft(v, "0123456789") != "" {
		return 0, false
	}
	slot, err := strconv.ParseInt(v, 10, 64)
	return slot, err == nil
}

// parseTokenRecord reads a token key's "<token> <run>" (or, as written
// before the run was kept, "<token>" alone; run is then 0).
func parseTokenRecord(v string) (token, run int64) {
	t, r, _ := strings.Cut(v, " ")
	token, _ = strconv.ParseInt(t, 10, 64)
	run, _ = strconv.ParseInt(r, 10, 64)
	return token, run
}
