package distributed

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/runtime"
)

// The audit log says who steered the fleet: every pause, resume and
// trigger made through an Inspector (the fleet CLI and the dashboard),
// every pause that ended by itself at its until, and every fleet-wide
// stop after max_consecutive_errors (failures.go) is one entry.
//
// It is kept per pipeline, in the sorted set <prefix>audit:{<pipeline>}
// (keys.audit), one JSON member per entry scored by its time in Unix ms:
//
//   - the pipeline's hash tag puts it in the slot of the pipeline's other
//     keys, so a Redis Cluster spreads the log with the pipelines and a
//     script on the pipeline's keys could append to it atomically;
//   - one pipeline triggered every minute by a cron job cannot push
//     another pipeline's pause out of a shared, bounded log.
//
// Reading the whole fleet's log scans for those keys (on each master of a
// Cluster), which is fine for a command a person runs.
//
// It is bounded like the run history: the RunHistory policy's Limit
// entries per pipeline, none older than its MaxAge (the defaults when the
// run history is off: an audit trail does not vanish with it). Appends are
// rare (a person's commands), so every append trims in the same MULTI.

// AuditAction names what an audit entry records.
type AuditAction string

// The actions of the audit log.
const (
	// AuditPause is a fleet-wide pause (with its reason and until).
	AuditPause AuditAction = "pause"
	// AuditResume is a resume that cleared a pause, by a person or, at a
	// pause's until, by the first reader that saw it had passed.
	AuditResume AuditAction = "resume"
	// AuditTrigger is a run-now request.
	AuditTrigger AuditAction = "trigger"
	// AuditStop is a fleet-wide stop after max_consecutive_errors.
	AuditStop AuditAction = "stop"
	// AuditBackfill is a backfill started (its range, parallel and
	// reprocess in Params).
	AuditBackfill AuditAction = "backfill"
	// AuditBackfillCancel is a backfill cancelled.
	AuditBackfillCancel AuditAction = "backfill_cancel"
)

// AuditEntry is one entry of the audit log: one object of "fleet audit
// --json".
type AuditEntry struct {
	// At is when the action was taken.
	At time.Time `json:"at"`
	// PipelineID names the pipeline acted on.
	PipelineID string `json:"pipeline"`
	// Action is what was done.
	Action AuditAction `json:"action"`
	// Actor says who did it: user@host for the fleet CLI, "fleet ui
	// <remote address>" for the dashboard.
	Actor string `json:"actor"`
	// From says where the command ran: host/program.
	From string `json:"from,omitempty"`
	// Reason is the reason given, if any.
	Reason string `json:"reason,omitempty"`
	// Until is when a pause ends by itself; zero for one until resumed.
	Until time.Time `json:"until,omitzero"`
	// Params are a trigger's run parameters (WithParams), if any.
	Params map[string]string `json:"params,omitempty"`
}

// AuditQuery selects audit entries.
type AuditQuery struct {
	// PipelineIDs keeps the entries of these pipelines; none: every
	// pipeline's.
	PipelineIDs []string
	// Limit is how many entries at most, newest first (<= 0: the run
	// history policy's Limit).
	Limit int
}

// audit holds a pipeline's audit log.
func (k keys) audit(pipelineID string) string { return k.prefix + "audit:" + k.tag(pipelineID) }

// auditPattern matches every audit log under the prefix, for SCAN.
func (k keys) auditPattern() string { return globEscape(k.prefix+"audit:{") + "*}" }

// auditPipeline returns the pipeline id of an audit key.
func (k keys) auditPipeline(key string) (string, bool) {
	rest, ok := strings.CutPrefix(key, k.prefix+"audit:{")
	if !ok || !strings.HasSuffix(rest, "}") {
		return "", false
	}
	return strings.TrimSuffix(rest, "}"), true
}

// ControlOption sets what a fleet command (Pause, Resume, Trigger) records
// with its action in the audit log, and, for Pause, in the pause itself.
type ControlOption func(*controlRequest)

// controlRequest is what the ControlOptions set.
type controlRequest struct {
	actor, from, reason string
	until               time.Time
	params              map[string]string // a trigger's (WithParams)
}

// WithReason gives the reason of a pause, resume or trigger: kept with a
// pause (PauseInfo.Reason) and in the audit log.
func WithReason(text string) ControlOption {
	return func(r *controlRequest) { r.reason = text }
}

// WithUntil makes a pause end by itself at t: from then on every reader
// counts the pipeline as resumed. Ignored by Resume and Trigger.
func WithUntil(t time.Time) ControlOption {
	return func(r *controlRequest) { r.until = t }
}

// WithActor names who acts ("" or unset: the user and host of this
// process), as the dashboard names its caller.
func WithActor(who string) ControlOption {
	return func(r *controlRequest) { r.actor = who }
}

// WithFrom names where the command runs ("" or unset: this host and
// program, "host/program").
func WithFrom(where string) ControlOption {
	return func(r *controlRequest) { r.from = where }
}

// MaxReasonBytes bounds a reason (WithReason), and MaxActorBytes an actor
// or a from (WithActor, WithFrom): every pause flag and audit entry holds
// them, and every reader of the fleet's state reads them, so one command
// must not be able to make those reads megabytes long.
const (
	MaxReasonBytes = 1024
	MaxActorBytes  = 256
)

// newControlRequest applies opts over the defaults, and refuses a reason,
// actor or from longer than its bound with an error wrapping
// ErrInvalidControl.
func newControlRequest(opts []ControlOption) (controlRequest, error) {
	var r controlRequest
	for _, opt := range opts {
		opt(&r)
	}
	if r.actor == "" {
		r.actor = whoAmI()
	}
	if r.from == "" {
		r.from = whereAmI()
	}
	for _, f := range []struct {
		what, v string
		max     int
	}{{"reason", r.reason, MaxReasonBytes}, {"actor", r.actor, MaxActorBytes}, {"from", r.from, MaxActorBytes}} {
		if len(f.v) > f.max {
			return controlRequest{}, fmt.Errorf("%w: the %s is %d bytes; at most %d", ErrInvalidControl, f.what, len(f.v), f.max)
		}
	}
	if err := runtime.ValidateParams(r.params); err != nil {
		return controlRequest{}, fmt.Errorf("%w: %w", ErrInvalidControl, err)
	}
	return r, nil
}

// whoAmI names this process's user and host, user@host, for an actor.
func whoAmI() string {
	host, _ := os.Hostname()
	name := os.Getenv("USER")
	if u, err := user.Current(); err == nil && u.Username != "" {
		name = u.Username
	}
	if name == "" {
		return host
	}
	return name + "@" + host
}

// whereAmI names this host and program, host/program, for AuditEntry.From.
func whereAmI() string {
	host, _ := os.Hostname()
	prog := "agora"
	if len(os.Args) > 0 && os.Args[0] != "" {
		prog = filepath.Base(os.Args[0])
	}
	return host + "/" + prog
}

// AppendAudit appends e to its pipeline's audit log and trims the log to
// the run history policy's bounds, in one MULTI. A zero At is now, an
// empty Actor or From this process's (see WithActor, WithFrom).
func (c *RedisWorkerCoordinator) AppendAudit(ctx context.Context, e AuditEntry) error {
	if e.PipelineID == "" {
		return errEmptyPipeline
	}
	now := c.clock.Now()
	if e.At.IsZero() {
		e.At = now
	}
	e.At = e.At.UTC()
	if !e.Until.IsZero() {
		e.Until = e.Until.UTC()
	}
	if e.Actor == "" {
		e.Actor = whoAmI()
	}
	if e.From == "" {
		e.From = whereAmI()
	}
	member, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("distributed: encode an audit entry: %w", err)
	}
	pol := c.historyPolicy()
	key := c.keys.audit(e.PipelineID)
	opCtx, cancel := c.opContext(ctx, opHistory)
	defer cancel()
	cut := now.UnixMilli() - pol.MaxAge.Milliseconds()
	_, err = c.client.TxPipelined(opCtx, func(p redis.Pipeliner) error {
		p.ZAdd(opCtx, key, redis.Z{Score: float64(e.At.UnixMilli()), Member: string(member)})
		p.ZRemRangeByRank(opCtx, key, 0, -int64(pol.Limit)-1)
		p.ZRemRangeByScore(opCtx, key, "-inf", "("+strconv.FormatInt(cut, 10))
		return nil
	})
	if isWrongType(err) {
		return foreignKeyError("append to the audit log of "+strconv.Quote(e.PipelineID), key, "is not a sorted set of audit entries")
	}
	if err != nil {
		return c.failure("append to the audit log of "+strconv.Quote(e.PipelineID), err)
	}
	return nil
}

// AuditLog reads the audit log, newest first: q.PipelineIDs' entries (none:
// every pipeline's, found by scanning for their keys), at most q.Limit,
// none older than the run history policy's MaxAge. Members that are not
// audit entries (written by something else under the prefix) are skipped,
// counted in CoordinatorStatus.AuditSkipped and their key named once in a
// WARN. It needs only Connect.
func (c *RedisWorkerCoordinator) AuditLog(ctx context.Context, q AuditQuery) ([]AuditEntry, error) {
	pol := c.historyPolicy()
	limit := q.Limit
	if limit <= 0 {
		limit = pol.Limit
	}
	ids := q.PipelineIDs
	if len(ids) == 0 {
		var err error
		if ids, err = c.auditPipelines(ctx); err != nil {
			return nil, err
		}
	}
	minScore := float64(c.clock.Now().UnixMilli() - pol.MaxAge.Milliseconds())
	by := &redis.ZRangeBy{Max: "+inf", Min: strconv.FormatFloat(math.Max(0, minScore), 'f', 0, 64), Count: int64(limit)}
	opCtx, cancel := c.opContext(ctx, opHistory)
	defer cancel()
	cmds := make([]*redis.StringSliceCmd, len(ids))
	_, err := c.client.Pipelined(opCtx, func(p redis.Pipeliner) error {
		for i, id := range ids {
			cmds[i] = p.ZRevRangeByScore(opCtx, c.keys.audit(id), by)
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) && !isWrongType(err) {
		return nil, c.failure("read the audit log", err)
	}
	var out []AuditEntry
	for i, cmd := range cmds {
		members, err := cmd.Result()
		if isWrongType(err) {
			c.warnForeign(c.keys.audit(ids[i]), "not a sorted set: no audit entry can be read from it")
			continue
		}
		for _, m := range members {
			var e AuditEntry
			if json.Unmarshal([]byte(m), &e) != nil || e.Action == "" || e.At.IsZero() || e.PipelineID != ids[i] {
				// Not ours: skipped and counted, never shown as an
				// entry without an action or of another pipeline.
				c.stats.auditSkipped.Add(1)
				c.warnForeign(c.keys.audit(ids[i]), "holds members that are not audit entries; they are skipped")
				continue
			}
			out = append(out, e)
		}
	}
	slices.SortStableFunc(out, func(a, b AuditEntry) int {
		return cmp.Or(b.At.Compare(a.At), cmp.Compare(a.PipelineID, b.PipelineID))
	})
	if len(out) > limit {
		out = out[:limit]
	}
	if out == nil {
		out = []AuditEntry{}
	}
	return out, nil
}

// auditPipelines returns the pipelines that have an audit log, sorted,
// scanning each master of a Cluster.
func (c *RedisWorkerCoordinator) auditPipelines(ctx context.Context) ([]string, error) {
	opCtx, cancel := c.opContext(ctx, opInspect)
	defer cancel()
	pattern := c.keys.auditPattern()
	found, err := collectFromPrimaryNodes(opCtx, c.client, func(ctx context.Context, node redis.Cmdable) ([]string, error) {
		var out []string
		iter := node.Scan(ctx, 0, pattern, 100).Iterator()
		for iter.Next(ctx) {
			out = append(out, iter.Val())
		}
		return out, iter.Err()
	})
	if err != nil {
		return nil, c.failure("find the audit logs", err)
	}
	ids := make([]string, 0, len(found))
	for _, key := range found {
		if id, ok := c.keys.auditPipeline(key); ok && id != "" {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids), nil
}
