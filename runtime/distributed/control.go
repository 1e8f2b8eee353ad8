package distributed

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/runtime"
)

var _ runtime.FleetController = (*RedisWorkerCoordinator)(nil)

// ControlPollInterval is how often a started coordinator reads the fleet's
// pause flags and run-now requests from Redis: a pause takes effect, and a
// trigger is picked up, within about this long.
const ControlPollInterval = time.Second

// Fleet-wide control keys, one hash each (not per pipeline, so one poll of
// two keys serves any number of pipelines):
//
//	<prefix>control:paused   hash: pipeline id → PauseInfo as JSON
//	<prefix>control:trigger  hash: pipeline id → run-now request: its time in
//	                         Unix ms, or with parameters a JSON object
//	                         (trigger_request.go)
func (k keys) paused() string   { return k.prefix + "control:paused" }
func (k keys) triggers() string { return k.prefix + "control:trigger" }

// PauseInfo says who paused a pipeline, when, why and until when.
type PauseInfo struct {
	// At is when the pause was set.
	At time.Time `json:"at"`
	// By names where it was set from (user and host of the command).
	By string `json:"by,omitempty"`
	// Reason is the reason given (fleet pause --reason).
	Reason string `json:"reason,omitempty"`
	// Until is when the pause ends by itself; zero for a pause that lasts
	// until resumed. From Until on every reader counts the pipeline as
	// resumed, whether or not the flag was deleted yet.
	Until time.Time `json:"until,omitzero"`
}

// expired reports whether the pause ended by itself at its Until.
func (p PauseInfo) expired(now time.Time) bool {
	return !p.Until.IsZero() && !now.Before(p.Until)
}

// control is the coordinator's copy of the fleet's commands.
type control struct {
	mu     sync.RWMutex
	paused map[string]bool
	// until holds the end of each timed pause, so that Paused stops
	// counting it at its Until rather than at the next poll.
	until     map[string]time.Time
	mine      map[string]bool // the pipelines this worker runs
	handler   func(runtime.Trigger)
	every     time.Duration
	schedules map[string]string
	after     map[string][]string // SetDependencies'
	// backfills are the running backfills of this worker's pipelines, as
	// last read (backfill_watch.go).
	backfills map[string]BackfillProgress
}

var _ runtime.ScheduleReporter = (*RedisWorkerCoordinator)(nil)

var _ runtime.InterruptedRerunner = (*RedisWorkerCoordinator)(nil)

// SetRerunInterrupted names the pipelines that re-run a slot whose holder
// died before completing it, when their lease is taken over (see
// runtime.ScheduledPipeline.RerunInterrupted). The pool calls it before
// Start.
func (c *RedisWorkerCoordinator) SetRerunInterrupted(pipelineIDs []string) {
	m := make(map[string]bool, len(pipelineIDs))
	for _, id := range pipelineIDs {
		m[id] = true
	}
	c.mu.Lock()
	c.rerun = m
	c.mu.Unlock()
}

// SetSchedules records each pipeline's schedule (directive form) for the
// worker record, where "fleet pipelines" reads next fire times. The pool
// calls it before Start.
func (c *RedisWorkerCoordinator) SetSchedules(schedules map[string]string) {
	c.ctl.mu.Lock()
	defer c.ctl.mu.Unlock()
	c.ctl.schedules = schedules
}

var _ runtime.DependencyReporter = (*RedisWorkerCoordinator)(nil)

// SetDependencies records each pipeline's upstreams for the worker
// record, where fleet backfill --downstream finds a pipeline's
// dependents. The pool calls it before Start.
func (c *RedisWorkerCoordinator) SetDependencies(after map[string][]string) {
	c.ctl.mu.Lock()
	defer c.ctl.mu.Unlock()
	c.ctl.after = after
}

func (ctl *control) afterJSON() string {
	ctl.mu.RLock()
	defer ctl.mu.RUnlock()
	if len(ctl.after) == 0 {
		return ""
	}
	b, _ := json.Marshal(ctl.after)
	return string(b)
}

func (ctl *control) schedulesJSON() string {
	ctl.mu.RLock()
	defer ctl.mu.RUnlock()
	if len(ctl.schedules) == 0 {
		return ""
	}
	b, _ := json.Marshal(ctl.schedules)
	return string(b)
}

// Paused reports whether pipelineID was paused fleet-wide at the last poll
// (at Start, then every ControlPollInterval). When Redis cannot be read the
// last known flags stay in force.
func (c *RedisWorkerCoordinator) Paused(pipelineID string) bool {
	c.ctl.mu.RLock()
	defer c.ctl.mu.RUnlock()
	if until, ok := c.ctl.until[pipelineID]; ok && !c.clock.Now().Before(until) {
		return false
	}
	return c.ctl.paused[pipelineID]
}

// SetTriggerHandler sets the function called when this worker claimed a
// run-now request (Trigger) for one of its pipelines, with the request's
// parameters. Exactly one worker claims each request: the one whose HDEL
// removes it.
func (c *RedisWorkerCoordinator) SetTriggerHandler(handler func(runtime.Trigger)) {
	c.ctl.mu.Lock()
	defer c.ctl.mu.Unlock()
	c.ctl.handler = handler
}

// startControl records the worker's pipelines and reads the pause flags
// once, so a worker started while a pipeline is paused never runs it. It
// claims no run-now request: the pool is not running yet and would drop
// it, so the first poll of the control loop claims them.
func (c *RedisWorkerCoordinator) startControl(ctx context.Context, pipelineIDs []string) {
	c.ctl.mu.Lock()
	c.ctl.mine = make(map[string]bool, len(pipelineIDs))
	for _, id := range pipelineIDs {
		c.ctl.mine[id] = true
	}
	if c.ctl.every == 0 {
		c.ctl.every = ControlPollInterval
	}
	c.ctl.mu.Unlock()
	if c.health.reachable.Load() { // Start's connect worked
		_ = c.poll(ctx, false)
	}
}

// controlLoop polls the commands every ControlPollInterval until stop.
func (c *RedisWorkerCoordinator) controlLoop(stop <-chan struct{}) {
	defer c.loops.Done()
	c.ctl.mu.RLock()
	every := c.ctl.every
	c.ctl.mu.RUnlock()
	everyRealTime(stop, func() time.Duration { return every }, func() { _ = c.pollControl(context.Background()) })
}

// everyRealTime calls f after each wait() of real time until stop. Real
// time, not the coordinator's clock, for the loops whose timing means
// nothing for leases (control polls, the preference view): tests that step
// a fake clock timer by timer count only the renewal and heartbeat loops.
func everyRealTime(stop <-chan struct{}, wait func() time.Duration, f func()) {
	timer := time.NewTimer(wait())
	defer timer.Stop()
	for {
		select {
		case <-stop:
			return
		case <-timer.C:
		}
		f()
		timer.Reset(wait())
	}
}

// pollControl reads the pause flags and claims run-now requests for this
// worker's pipelines.
func (c *RedisWorkerCoordinator) pollControl(ctx context.Context) error { return c.poll(ctx, true) }

// poll is pollControl; it claims run-now requests only when claim is set.
func (c *RedisWorkerCoordinator) poll(ctx context.Context, claim bool) error {
	opCtx, cancel := c.opContext(ctx, opControl)
	defer cancel()
	var paused, triggers, backfills *redis.MapStringStringCmd
	_, err := c.client.Pipelined(opCtx, func(p redis.Pipeliner) error {
		paused = p.HGetAll(opCtx, c.keys.paused())
		triggers = p.HGetAll(opCtx, c.keys.triggers())
		backfills = p.HGetAll(opCtx, c.keys.backfills())
		return nil
	})
	if err != nil && !isWrongType(err) {
		return err
	}
	// A pause or trigger key of another type holds no flag agora can read:
	// nothing is paused or asked for, as when the key is missing, and the
	// key is named once (a worker that kept its last flags would go on
	// skipping a pipeline nobody can resume).
	for _, cmd := range []*redis.MapStringStringCmd{paused, triggers, backfills} {
		switch err := cmd.Err(); {
		case isWrongType(err):
			c.warnForeign(cmd.Args()[1].(string), "not a hash: no pause flag, run-now request or backfill can be read from it")
		case err != nil:
			return err
		}
	}
	live := c.livePauses(ctx, paused.Val())
	flags := make(map[string]bool, len(live))
	until := map[string]time.Time{}
	for id, raw := range live {
		flags[id] = true
		var info PauseInfo
		if json.Unmarshal([]byte(raw), &info) == nil && !info.Until.IsZero() {
			until[id] = info.Until
		}
	}
	pending := c.decodeTriggers(triggers.Val()) // logs: outside the lock
	c.ctl.mu.Lock()
	was := c.ctl.paused
	c.ctl.paused, c.ctl.until = flags, until
	c.logPauseChanges(was, live)
	handler := c.ctl.handler
	var mine []string
	for id := range pending {
		if c.ctl.mine[id] {
			mine = append(mine, id)
		}
	}
	c.ctl.mu.Unlock()
	c.watchBackfills(opCtx, backfills.Val())
	if handler == nil || !claim {
		return nil
	}
	for _, id := range mine {
		req, ok, err := c.claimTrigger(opCtx, id)
		if err != nil {
			return err
		}
		if ok { // this worker removed it: the run is ours
			if len(req.Params) > 0 {
				c.log.Info("distributed: claimed a run-now request", "pipeline", id, "params", runtime.FormatParams(req.Params))
			} else {
				c.log.Info("distributed: claimed a run-now request", "pipeline", id)
			}
			handler(runtime.Trigger{PipelineID: id, Params: req.Params})
		}
	}
	return nil
}

// logPauseChanges logs, at INFO, each of the worker's pipelines whose pause
// flag changed since the last poll: one line when this worker first sees
// it paused (by "fleet pause" or the dashboard, or already paused at
// Start), one when it sees it resumed. Polls that change nothing log
// nothing. c.ctl.mu is held.
func (c *RedisWorkerCoordinator) logPauseChanges(was map[string]bool, now map[string]string) {
	for id := range c.ctl.mine {
		_, paused := now[id]
		switch {
		case paused && !was[id]:
			var info PauseInfo
			_ = json.Unmarshal([]byte(now[id]), &info)
			c.log.Info("distributed: pipeline paused fleet-wide; its runs are skipped on this worker until it is resumed",
				"pipeline", id, "paused_by", info.By, "paused_at", info.At, "reason", info.Reason, "until", info.Until)
		case !paused && was[id]:
			c.log.Info("distributed: pipeline resumed fleet-wide; its runs start again on schedule", "pipeline", id)
		}
	}
}

// errEmptyPipeline is returned by the fleet commands for an empty id.
var errEmptyPipeline = errors.New("distributed: empty pipeline id")

// Pause sets pipelineID's fleet-wide pause flag: every replica skips its
// scheduled attempts (reason paused) from its next poll on, within
// ControlPollInterval; a run in flight finishes. by says who paused it
// ("" names the user and host of this process); WithReason and WithUntil
// give its reason and end (WithActor and WithFrom are for the audit log,
// which this method does not write: Inspector.Pause does).
func (c *RedisWorkerCoordinator) Pause(ctx context.Context, pipelineID, by string, opts ...ControlOption) error {
	if pipelineID == "" {
		return errEmptyPipeline
	}
	req, err := newControlRequest(append([]ControlOption{WithActor(by)}, opts...))
	if err != nil {
		return err
	}
	_, err = c.pause(ctx, pipelineID, req)
	return err
}

// pause writes req's pause flag for pipelineID and returns it.
func (c *RedisWorkerCoordinator) pause(ctx context.Context, pipelineID string, req controlRequest) (PauseInfo, error) {
	p := PauseInfo{At: c.clock.Now().UTC(), By: req.actor, Reason: req.reason}
	if !req.until.IsZero() {
		p.Until = req.until.UTC()
	}
	info, _ := json.Marshal(p)
	ctx, cancel := c.opContext(ctx, opControl)
	defer cancel()
	if err := c.client.HSet(ctx, c.keys.paused(), pipelineID, info).Err(); err != nil {
		if isWrongType(err) {
			return PauseInfo{}, foreignKeyError("pause "+strconv.Quote(pipelineID), c.keys.paused(), "is not a hash of pause flags")
		}
		return PauseInfo{}, c.failure("pause "+strconv.Quote(pipelineID), err)
	}
	return p, nil
}

// Resume clears pipelineID's pause flag and reports whether it was set.
func (c *RedisWorkerCoordinator) Resume(ctx context.Context, pipelineID string) (bool, error) {
	if pipelineID == "" {
		return false, errEmptyPipeline
	}
	ctx, cancel := c.opContext(ctx, opControl)
	defer cancel()
	n, err := c.client.HDel(ctx, c.keys.paused(), pipelineID).Result()
	if isWrongType(err) {
		return false, foreignKeyError("resume "+strconv.Quote(pipelineID), c.keys.paused(), "is not a hash of pause flags")
	}
	if err != nil {
		return false, c.failure("resume "+strconv.Quote(pipelineID), err)
	}
	return n == 1, nil
}

// PausedPipelines returns the pause flags of the fleet, by pipeline id.
func (c *RedisWorkerCoordinator) PausedPipelines(ctx context.Context) (map[string]PauseInfo, error) {
	ctx, cancel := c.opContext(ctx, opControl)
	defer cancel()
	all, err := c.client.HGetAll(ctx, c.keys.paused()).Result()
	if isWrongType(err) {
		c.warnForeign(c.keys.paused(), "not a hash: no pause flag can be read from it")
		return map[string]PauseInfo{}, nil
	}
	if err != nil {
		return nil, c.failure("read pause flags", err)
	}
	all = c.livePauses(ctx, all)
	out := make(map[string]PauseInfo, len(all))
	for id, v := range all {
		var info PauseInfo
		_ = json.Unmarshal([]byte(v), &info) // a hand-set flag still pauses
		out[id] = info
	}
	return out, nil
}

// livePauses returns the pause flags of raw (pipeline id → PauseInfo
// JSON) whose Until has not passed. An expired flag is deleted, only if
// it is still the same value (another "fleet pause" since wins), and the
// reader that deleted it, and only that one, appends the resume to the
// audit log. A failed delete changes nothing: the flag counts as resumed
// all the same, and the next reader tries again.
func (c *RedisWorkerCoordinator) livePauses(ctx context.Context, raw map[string]string) map[string]string {
	now := c.clock.Now()
	var live map[string]string
	for id, v := range raw {
		var info PauseInfo
		if json.Unmarshal([]byte(v), &info) != nil || !info.expired(now) {
			continue
		}
		if live == nil {
			live = maps.Clone(raw)
		}
		delete(live, id)
		if c.deleteExpiredPause(ctx, id, v) {
			if err := c.AppendAudit(ctx, AuditEntry{PipelineID: id, Action: AuditResume, Actor: info.By,
				Reason: "pause ended at its until", Until: info.Until}); err != nil {
				c.log.Warn("distributed: could not record the end of a timed pause in the audit log", "pipeline", id, "error", err)
			}
			c.log.Info("distributed: timed pause ended; the pipeline is resumed fleet-wide", "pipeline", id, "until", info.Until)
		}
	}
	if live == nil {
		return raw
	}
	return live
}

// deleteExpiredPause deletes pipelineID's pause flag if it still holds
// value (WATCH, then HDEL in MULTI) and reports whether this call deleted
// it.
func (c *RedisWorkerCoordinator) deleteExpiredPause(ctx context.Context, pipelineID, value string) bool {
	opCtx, cancel := c.opContext(ctx, opControl)
	defer cancel()
	key := c.keys.paused()
	deleted := false
	err := c.client.Watch(opCtx, func(tx *redis.Tx) error {
		cur, err := tx.HGet(opCtx, key, pipelineID).Result()
		if err != nil || cur != value {
			return nil // gone or changed: not ours to delete
		}
		cmds, err := tx.TxPipelined(opCtx, func(p redis.Pipeliner) error {
			p.HDel(opCtx, key, pipelineID)
			return nil
		})
		if err == nil && len(cmds) == 1 {
			deleted = cmds[0].(*redis.IntCmd).Val() == 1
		}
		return err
	}, key)
	if err != nil && !errors.Is(err, redis.TxFailedErr) {
		c.log.Debug("distributed: could not delete an expired pause", "pipeline", pipelineID, "error", c.s.redactor.Wrap(err))
	}
	return deleted
}

// Trigger asks for one run of pipelineID now. The first replica running
// the pipeline to poll (within ControlPollInterval) claims the request and
// runs it once, under a fenced lease numbered by the coordinator
// (runtime.RunNumberAuto), beside its schedule; while another replica holds
// the lease it asks again every runtime.TriggerRetryInterval. Requests not
// yet claimed coalesce: two triggers before any replica polls make one run,
// and so a trigger whose parameters (WithParams) differ from a pending
// request's is refused with an error wrapping ErrTriggerPending. Only
// WithParams of opts is used here; the audit log is Inspector.Trigger's.
func (c *RedisWorkerCoordinator) Trigger(ctx context.Context, pipelineID string, opts ...ControlOption) error {
	if pipelineID == "" {
		return errEmptyPipeline
	}
	req, err := newControlRequest(opts)
	if err != nil {
		return err
	}
	return c.writeTrigger(ctx, pipelineID, req.params)
}

// PendingTriggers returns the run-now requests no replica has claimed yet,
// by pipeline id, with when they were made (PendingTriggerRequests gives
// their parameters too).
func (c *RedisWorkerCoordinator) PendingTriggers(ctx context.Context) (map[string]time.Time, error) {
	all, err := c.PendingTriggerRequests(ctx)
	if err != nil {
		return nil, err
	}
	out := make(map[string]time.Time, len(all))
	for id, req := range all {
		out[id] = req.At
	}
	return out, nil
}
