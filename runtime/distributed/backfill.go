package distributed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/distributed/internal/leasebackend"
)

// A backfill (docs/backfill.md) runs every slot of a cron or every
// pipeline in a range, oldest first, across the fleet. It is kept in one
// hash per pipeline, <prefix>backfill:{<pipeline>} (keys.backfill), under
// the pipeline's hash tag and where the failure state lives
// (failBackend), so each step is one script on one Cluster slot:
//
//	id        the backfill's id: its start in Unix ms
//	req       the request, JSON (BackfillRequest)
//	state     running, done, canceled or failed
//	parallel  how many slots may be in flight at once
//	total     how many slots the range holds
//	cursor    the last slot handed out (Unix s)
//	exhausted "1" once no slot is left to hand out
//	done, skipped, failed, consec  counts (consec: failed in a row)
//	end       when it ended (Unix ms)
//	f:<slot>  a slot in flight: "<token> <expiry ms> <owner>"
//	e:<slot>  a failed slot's error (the first MaxBackfillErrors)
//
// A replica hands itself the next slot with backfill_claim.lua: it reads
// the cursor, computes the slot after it from the schedule (Lua knows no
// cron) and the script moves the cursor only if it did not move
// meanwhile. A slot in flight whose expiry passed (its holder died) is
// handed out again under a new token.

// MaxBackfillSlots bounds the slots one backfill may hold, so a range
// typed wrong (a year of a one-second schedule) is refused rather than
// queued.
const MaxBackfillSlots = 100_000

// MaxBackfillErrors is how many failed slots keep their error text in the
// backfill's progress; the count goes on beyond it.
const MaxBackfillErrors = 100

// BackfillKeep is how long a backfill's progress stays readable after it
// began, so a finished one can be looked at and then goes by itself.
const BackfillKeep = 7 * 24 * time.Hour

// ErrBackfillRunning is wrapped by the error of a backfill asked for while
// another one of the same pipeline runs: cancel that one first.
var ErrBackfillRunning = errors.New("distributed: a backfill is already running")

// ErrInvalidBackfill is wrapped by the error of a backfill request that
// cannot run: a range that is empty, in the future or too long, or a
// pipeline whose schedule has no slots (continuous, once).
var ErrInvalidBackfill = errors.New("distributed: invalid backfill")

// BackfillState is where a backfill stands.
type BackfillState string

// The states of a backfill.
const (
	// BackfillRunning hands out slots, or waits for its last ones.
	BackfillRunning BackfillState = "running"
	// BackfillDone ran, skipped or failed each of its slots.
	BackfillDone BackfillState = "done"
	// BackfillCanceled was cancelled: no slot is handed out any more; the
	// ones in flight finish.
	BackfillCanceled BackfillState = "canceled"
	// BackfillFailed stopped after MaxConsecutiveErrors failed slots in a
	// row.
	BackfillFailed BackfillState = "failed"
)

// BackfillRequest asks for every slot of a pipeline in [From, To).
type BackfillRequest struct {
	// PipelineID names the pipeline.
	PipelineID string `json:"pipeline"`
	// From is the first slot's earliest start; To the end of the range,
	// not included.
	From time.Time `json:"from"`
	To   time.Time `json:"to"`
	// Parallel is how many slots the fleet runs at once (< 1: 1).
	Parallel int `json:"parallel"`
	// Reprocess runs slots that already completed, again.
	Reprocess bool `json:"reprocess,omitempty"`
	// Params are every slot run's parameters (runtime.ParamsFromContext),
	// as a trigger's; nil for none.
	Params map[string]string `json:"params,omitempty"`
	// Downstream also backfills, over the same range, every pipeline that
	// waits for this one (its After, and theirs in turn, as the workers
	// published them); each of their slots runs once its upstreams
	// completed it. Dependents names them in the started request.
	Downstream bool     `json:"downstream,omitempty"`
	Dependents []string `json:"dependents,omitempty"`
	// WaitUpstream marks a dependent's backfill started by Downstream:
	// its slots wait for the pipeline's upstreams (runtime.BackfillSlot).
	WaitUpstream bool `json:"wait_upstream,omitempty"`
	// Actor, Origin and Reason are recorded with the request and in the
	// audit log (see AuditEntry).
	Actor  string `json:"actor,omitempty"`
	Origin string `json:"from_host,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// BackfillSlot is a slot in flight.
type BackfillSlot struct {
	// Slot is the slot's start.
	Slot time.Time `json:"slot"`
	// Worker names the worker running it.
	Worker string `json:"worker"`
	// Expires is when its lease lapses unless renewed.
	Expires time.Time `json:"expires"`
}

// BackfillError is a failed slot and its error.
type BackfillError struct {
	// Slot is the slot's start.
	Slot time.Time `json:"slot"`
	// Error is why its run failed.
	Error string `json:"error"`
}

// BackfillProgress is a backfill's request and where it stands.
type BackfillProgress struct {
	// ID names the backfill: its start in Unix ms.
	ID string `json:"id"`
	// Request is what was asked for.
	Request BackfillRequest `json:"request"`
	// State is where it stands.
	State BackfillState `json:"state"`
	// Total is how many slots the range holds; Done, Skipped (they had
	// completed before) and Failed how many were finished so far.
	Total   int `json:"total"`
	Done    int `json:"done"`
	Skipped int `json:"skipped"`
	Failed  int `json:"failed"`
	// Cursor is the last slot handed out; zero before the first.
	Cursor time.Time `json:"cursor,omitzero"`
	// InFlight are the slots running now, oldest first.
	InFlight []BackfillSlot `json:"in_flight,omitempty"`
	// Errors are the failed slots' errors, oldest first (the first
	// MaxBackfillErrors).
	Errors []BackfillError `json:"errors,omitempty"`
	// Ended is when it ended; zero while running.
	Ended time.Time `json:"ended,omitzero"`
}

// Remaining is how many slots are neither finished nor in flight.
func (p BackfillProgress) Remaining() int {
	return max(0, p.Total-p.Done-p.Skipped-p.Failed-len(p.InFlight))
}

// backfill holds a pipeline's backfill.
func (k keys) backfill(pipelineID string) string { return k.prefix + "backfill:" + k.tag(pipelineID) }

// BackfillSlots returns the slots of s in [from, to), oldest first, at
// most limit+1 of them (so a caller can tell a range over its limit). The
// slots are the run numbers the schedule gives (runtime.SlotRun): a cron
// schedule's fire times, an every schedule's windows of its interval from
// the Unix epoch. A schedule without slots (continuous, once, every under a
// second, or not a whole number of seconds) is an error wrapping
// ErrInvalidBackfill.
func BackfillSlots(s runtime.Schedule, from, to time.Time, limit int) ([]time.Time, error) {
	switch s.Kind() {
	case runtime.ScheduleCron:
	case runtime.ScheduleEvery:
		if s.Interval() < time.Second || s.Interval()%time.Second != 0 {
			return nil, fmt.Errorf("%w: every=%s is not a whole number of seconds, so its windows are not slots a backfill can name", ErrInvalidBackfill, s.Interval())
		}
	default:
		return nil, fmt.Errorf("%w: a %s schedule has no slots to backfill", ErrInvalidBackfill, s)
	}
	var out []time.Time
	for t := NextBackfillSlot(s, from.Add(-time.Nanosecond)); !t.IsZero() && t.Before(to); t = NextBackfillSlot(s, t) {
		out = append(out, t)
		if len(out) > limit {
			break
		}
	}
	return out, nil
}

// NextBackfillSlot returns the first slot of s (a cron or every schedule)
// that starts after t, in whole seconds; zero when there is none.
func NextBackfillSlot(s runtime.Schedule, t time.Time) time.Time {
	switch s.Kind() {
	case runtime.ScheduleEvery:
		d := s.Interval()
		n := t.UnixNano()
		start := n - n%int64(d)
		if n < 0 && n%int64(d) != 0 {
			start -= int64(d)
		}
		return time.Unix(0, start+int64(d))
	case runtime.ScheduleCron:
		return s.Next(t)
	}
	return time.Time{}
}

// StartBackfill asks the fleet to run every slot of req.PipelineID in
// [req.From, req.To), oldest first (docs/backfill.md). The pipeline must
// be run by a live worker (ErrUnknownPipeline) and have a cron or every
// schedule; the range must hold at least one slot and at most
// MaxBackfillSlots and end no later than now (ErrInvalidBackfill). A
// pipeline whose backfill is running is refused with ErrBackfillRunning.
// The request is appended to the audit log.
func (in *Inspector) StartBackfill(ctx context.Context, req BackfillRequest) (BackfillProgress, error) {
	id := req.PipelineID
	ws, err := in.Workers(ctx)
	if err != nil {
		return BackfillProgress{}, err
	}
	ids, _ := knownPipelines(ws)
	if !containsString(ids, id) {
		return BackfillProgress{}, unknownPipeline(id, ids)
	}
	text := schedulesOf(ws)[id]
	s, err := runtime.ParseSchedule(text)
	if err != nil {
		return BackfillProgress{}, fmt.Errorf("%w: pipeline %q publishes the schedule %q, which does not parse: %w", ErrInvalidBackfill, id, text, err)
	}
	now := in.now()
	if !req.From.Before(req.To) {
		return BackfillProgress{}, fmt.Errorf("%w: the range [%s, %s) of %q is empty", ErrInvalidBackfill, stamp(req.From), stamp(req.To), id)
	}
	if req.To.After(now) {
		return BackfillProgress{}, fmt.Errorf("%w: the range of %q ends at %s, after now (%s): slots to come are the schedule's", ErrInvalidBackfill, id, stamp(req.To), stamp(now))
	}
	slots, err := BackfillSlots(s, req.From, req.To, MaxBackfillSlots)
	if err != nil {
		return BackfillProgress{}, fmt.Errorf("pipeline %q: %w", id, err)
	}
	if len(slots) == 0 {
		return BackfillProgress{}, fmt.Errorf("%w: %q (%s) has no slot in [%s, %s)", ErrInvalidBackfill, id, text, stamp(req.From), stamp(req.To))
	}
	if len(slots) > MaxBackfillSlots {
		return BackfillProgress{}, fmt.Errorf("%w: [%s, %s) holds more than %d slots of %q (%s); split it", ErrInvalidBackfill, stamp(req.From), stamp(req.To), MaxBackfillSlots, id, text)
	}
	creq, err := newControlRequest([]ControlOption{WithActor(req.Actor), WithFrom(req.Origin), WithReason(req.Reason), WithParams(req.Params)})
	if err != nil {
		return BackfillProgress{}, err
	}
	if req.Downstream {
		req.Dependents = dependentsOf(ws, id)
		if len(req.Dependents) == 0 {
			return BackfillProgress{}, fmt.Errorf("%w: --downstream: no pipeline a live worker runs waits for %q (after=)", ErrInvalidBackfill, id)
		}
		for _, d := range req.Dependents {
			if p, err := in.c.readBackfill(ctx, d); err == nil && p.State == BackfillRunning {
				return BackfillProgress{}, fmt.Errorf("%w for %q, a dependent of %q; cancel it first (fleet backfill %s --cancel)", ErrBackfillRunning, d, id, d)
			} else if err != nil && !errors.Is(err, ErrNoBackfill) {
				return BackfillProgress{}, err
			}
		}
	}
	req.Actor, req.Origin, req.Reason = creq.actor, creq.from, creq.reason
	req.Parallel = max(1, req.Parallel)
	req.From, req.To = req.From.UTC(), req.To.UTC()
	body, _ := jsonRequest(req)
	startID := strconv.FormatInt(now.UnixMilli(), 10)
	n, err := in.c.backfillScript(ctx, "start a backfill of", id, leasebackend.BackfillStartScript,
		startID, string(body), req.Parallel, len(slots), BackfillKeep.Milliseconds())
	if err != nil {
		return BackfillProgress{}, err
	}
	switch n {
	case 0:
		return BackfillProgress{}, fmt.Errorf("%w for %q; cancel it first (fleet backfill %s --cancel)", ErrBackfillRunning, id, id)
	case -6:
		return BackfillProgress{}, foreignKeyError("start a backfill", in.c.keys.backfill(id), "is not the backfill hash agora writes")
	}
	if err := in.c.indexBackfill(ctx, id, startID); err != nil {
		return BackfillProgress{}, err
	}
	in.audit(ctx, AuditEntry{At: now, PipelineID: id, Action: AuditBackfill, Actor: req.Actor, From: req.Origin, Reason: req.Reason,
		Params: backfillAuditParams(req)})
	for _, d := range req.Dependents {
		dreq := req
		dreq.PipelineID, dreq.Downstream, dreq.Dependents, dreq.WaitUpstream = d, false, nil, true
		dreq.Reason = "downstream of the backfill of " + id
		if req.Reason != "" {
			dreq.Reason += ": " + req.Reason
		}
		if _, err := in.StartBackfill(ctx, dreq); err != nil {
			return BackfillProgress{}, fmt.Errorf("the backfill of %q started, but not its dependent %q's: %w", id, d, err)
		}
	}
	return in.Backfill(ctx, id)
}

// dependentsOf returns the pipelines that wait for id, directly or through
// others, as the live workers published them (WorkerInfo.After), sorted.
func dependentsOf(ws []WorkerInfo, id string) []string {
	after := map[string][]string{}
	for _, w := range ws {
		for p, ups := range w.After {
			after[p] = ups
		}
	}
	seen := map[string]bool{id: true}
	frontier := []string{id}
	var out []string
	for len(frontier) > 0 {
		up := frontier[0]
		frontier = frontier[1:]
		for p, ups := range after {
			if !seen[p] && slices.Contains(ups, up) {
				seen[p] = true
				out = append(out, p)
				frontier = append(frontier, p)
			}
		}
	}
	sort.Strings(out)
	return out
}

// backfillAuditParams is what the audit entry of a backfill keeps of it:
// its range, parallel and reprocess, and the runs' parameters prefixed
// "param." so they cannot be mistaken for the request's own.
func backfillAuditParams(req BackfillRequest) map[string]string {
	m := map[string]string{"from": stamp(req.From), "to": stamp(req.To), "parallel": strconv.Itoa(req.Parallel), "reprocess": strconv.FormatBool(req.Reprocess)}
	if len(req.Dependents) > 0 {
		m["downstream"] = strings.Join(req.Dependents, ",")
	}
	for k, v := range req.Params {
		m["param."+k] = v
	}
	return m
}

// TriggerSlot runs one slot of pipelineID, on exactly one replica, as a
// backfill of that one slot (StartBackfill's rules): slot must be a slot
// of the pipeline's schedule, and begun; a slot that completed is skipped
// unless reprocess. The request's other fields (Parallel aside) are
// req's.
func (in *Inspector) TriggerSlot(ctx context.Context, req BackfillRequest, slot time.Time) (BackfillProgress, error) {
	id := req.PipelineID
	ws, err := in.Workers(ctx)
	if err != nil {
		return BackfillProgress{}, err
	}
	text := schedulesOf(ws)[id]
	if s, err := runtime.ParseSchedule(text); err == nil {
		slots, err := BackfillSlots(s, slot.Add(-time.Second), slot.Add(time.Second), 2)
		if err != nil {
			return BackfillProgress{}, fmt.Errorf("pipeline %q: %w", id, err)
		}
		if !slices.ContainsFunc(slots, slot.Equal) {
			before, after := previousSlot(s, slot), NextBackfillSlot(s, slot)
			return BackfillProgress{}, fmt.Errorf("%w: %s is not a slot of %q (%s); the slots around it are %s and %s",
				ErrInvalidBackfill, stamp(slot), id, text, stampOrNone(before), stampOrNone(after))
		}
	}
	// The range is [slot, slot + 1s), cut at now for a slot begun less
	// than a second ago, which is the one run late most often.
	now := in.now()
	if !slot.Before(now) {
		return BackfillProgress{}, fmt.Errorf("%w: slot %s of %q has not begun (now %s): it is the schedule's", ErrInvalidBackfill, stamp(slot), id, stamp(now))
	}
	req.From, req.To, req.Parallel = slot, slot.Add(time.Second), 1
	if req.To.After(now) {
		req.To = now
	}
	return in.StartBackfill(ctx, req)
}

// previousSlot is the last slot of s at or before t, looked for within a
// year; zero when none.
func previousSlot(s runtime.Schedule, t time.Time) time.Time {
	if s.Kind() == runtime.ScheduleEvery {
		return NextBackfillSlot(s, t.Add(-s.Interval()-time.Nanosecond))
	}
	var last time.Time
	for step := time.Hour; step <= 366*24*time.Hour; step *= 4 {
		for n := NextBackfillSlot(s, t.Add(-step)); !n.IsZero() && !n.After(t); n = NextBackfillSlot(s, n) {
			last = n
		}
		if !last.IsZero() {
			return last
		}
	}
	return last
}

func stampOrNone(t time.Time) string {
	if t.IsZero() {
		return "none"
	}
	return stamp(t)
}

// jsonRequest is the request as the backfill hash keeps it.
func jsonRequest(req BackfillRequest) (string, error) {
	b, err := json.Marshal(req) // strings, times and numbers always marshal
	return string(b), err
}

// containsString reports whether list holds s.
func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// stamp formats t for messages and the audit log.
func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// Backfill returns pipelineID's backfill, the running one or the last one
// (for BackfillKeep); ErrNoBackfill when there is none, wrapping
// ErrUnknownPipeline too when no live worker runs pipelineID (a typo, most
// likely, rather than a backfill that ended long ago).
func (in *Inspector) Backfill(ctx context.Context, pipelineID string) (BackfillProgress, error) {
	p, err := in.c.readBackfill(ctx, pipelineID)
	if errors.Is(err, ErrNoBackfill) {
		if kerr := in.checkKnown(ctx, pipelineID); errors.Is(kerr, ErrUnknownPipeline) {
			return p, &noBackfillError{
				msg:  fmt.Sprintf("%v of %q: %s", ErrNoBackfill, pipelineID, strings.TrimPrefix(kerr.Error(), "distributed: ")),
				errs: []error{ErrNoBackfill, kerr},
			}
		}
	}
	return p, err
}

// ErrNoBackfill is wrapped by the error of a backfill looked up, or
// cancelled, where there is none.
var ErrNoBackfill = errors.New("distributed: no backfill")

// noBackfillError is ErrNoBackfill of a pipeline no live worker runs: it
// wraps ErrUnknownPipeline too, and says both in one sentence.
type noBackfillError struct {
	msg  string
	errs []error
}

func (e *noBackfillError) Error() string   { return e.msg }
func (e *noBackfillError) Unwrap() []error { return e.errs }

// CancelBackfill stops pipelineID's running backfill: no slot is handed
// out any more, and the slots in flight finish. The cancel is appended to
// the audit log. Changed is false when no backfill was running; with no
// backfill and no live worker running pipelineID, the error is Backfill's.
func (in *Inspector) CancelBackfill(ctx context.Context, pipelineID string, opts ...ControlOption) (ControlResult, error) {
	req, err := newControlRequest(opts)
	if err != nil {
		return ControlResult{}, err
	}
	p, err := in.Backfill(ctx, pipelineID)
	if errors.Is(err, ErrUnknownPipeline) { // a typo: not "none is running"
		return ControlResult{}, err
	}
	if errors.Is(err, ErrNoBackfill) || (err == nil && p.State != BackfillRunning) {
		return ControlResult{PipelineID: pipelineID, Action: "backfill cancel", Message: "no backfill of " + pipelineID + " is running"}, nil
	}
	if err != nil {
		return ControlResult{}, err
	}
	changed, err := in.c.cancelBackfill(ctx, pipelineID, p.ID)
	if err != nil {
		return ControlResult{}, err
	}
	if !changed {
		return ControlResult{PipelineID: pipelineID, Action: "backfill cancel", Message: "no backfill of " + pipelineID + " is running"}, nil
	}
	in.audit(ctx, AuditEntry{PipelineID: pipelineID, Action: AuditBackfillCancel, Actor: req.actor, From: req.from, Reason: req.reason})
	msg := fmt.Sprintf("cancelled the backfill of %s after %d of %d slots; %d in flight finish", pipelineID, p.Done+p.Skipped+p.Failed, p.Total, len(p.InFlight))
	// Its dependents' slots would wait for upstream slots that no longer
	// come: their backfills, started with it, end with it.
	var also []string
	for _, d := range p.Request.Dependents {
		dp, err := in.c.readBackfill(ctx, d)
		if err != nil || dp.State != BackfillRunning || !dp.Request.WaitUpstream {
			continue
		}
		if ok, err := in.c.cancelBackfill(ctx, d, dp.ID); err == nil && ok {
			in.audit(ctx, AuditEntry{PipelineID: d, Action: AuditBackfillCancel, Actor: req.actor, From: req.from,
				Reason: cancelReason(pipelineID, req.reason)})
			also = append(also, d)
		}
	}
	if len(also) > 0 {
		msg += "; and the backfills of its dependents " + strings.Join(also, ", ")
	}
	return ControlResult{PipelineID: pipelineID, Action: "backfill cancel", Changed: true, Message: msg}, nil
}

// cancelReason is the audit reason of a dependent's backfill cancelled
// with pipelineID's.
func cancelReason(pipelineID, reason string) string {
	r := "with the backfill of " + pipelineID
	if reason != "" {
		r += ": " + reason
	}
	return r
}

// cancelBackfill sets a running backfill with id to canceled, atomically
// with the check (WATCH): false when it is not running any more.
func (c *RedisWorkerCoordinator) cancelBackfill(ctx context.Context, pipelineID, id string) (bool, error) {
	b := c.failBackend()
	if b == nil {
		return false, fmt.Errorf("distributed: cancel the backfill of %q: no backend to ask", pipelineID)
	}
	ctx, cancel := c.opContext(ctx, opInspect)
	defer cancel()
	key := c.keys.backfill(pipelineID)
	changed := false
	err := b.client.Watch(ctx, func(tx *redis.Tx) error {
		v, err := tx.HMGet(ctx, key, "id", "state").Result()
		if err != nil {
			return err
		}
		if s, _ := v[0].(string); s != id {
			return nil
		}
		if s, _ := v[1].(string); s != string(BackfillRunning) {
			return nil
		}
		_, err = tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.HSet(ctx, key, "state", string(BackfillCanceled), "end", c.clock.Now().UnixMilli())
			return nil
		})
		changed = err == nil
		return err
	}, key)
	if err != nil {
		return false, c.failure("cancel the backfill of "+strconv.Quote(pipelineID), err)
	}
	return changed, nil
}

// readBackfill reads and decodes pipelineID's backfill hash.
func (c *RedisWorkerCoordinator) readBackfill(ctx context.Context, pipelineID string) (BackfillProgress, error) {
	b := c.failBackend()
	if b == nil {
		return BackfillProgress{}, fmt.Errorf("distributed: read the backfill of %q: no backend to ask", pipelineID)
	}
	ctx, cancel := c.opContext(ctx, opInspect)
	defer cancel()
	key := c.keys.backfill(pipelineID)
	m, err := b.client.HGetAll(ctx, key).Result()
	if err != nil {
		if strings.HasPrefix(err.Error(), "WRONGTYPE") {
			return BackfillProgress{}, foreignKeyError("read the backfill", key, "is not the backfill hash agora writes")
		}
		return BackfillProgress{}, c.failure("read the backfill of "+strconv.Quote(pipelineID), err)
	}
	if len(m) == 0 {
		return BackfillProgress{}, fmt.Errorf("%w of %q", ErrNoBackfill, pipelineID)
	}
	p, why := decodeBackfill(m)
	if why != "" {
		return BackfillProgress{}, foreignKeyError("read the backfill", key, why)
	}
	return p, nil
}

// decodeBackfill reads a backfill hash; why says what is wrong with one
// agora did not write.
func decodeBackfill(m map[string]string) (p BackfillProgress, why string) {
	p.ID = m["id"]
	if _, err := strconv.ParseInt(p.ID, 10, 64); err != nil {
		return p, "holds no backfill id"
	}
	if err := json.Unmarshal([]byte(m["req"]), &p.Request); err != nil || p.Request.PipelineID == "" {
		return p, "holds no backfill request"
	}
	if err := runtime.ValidateParams(p.Request.Params); err != nil {
		return p, "holds a backfill request with bad parameters: " + err.Error()
	}
	p.State = BackfillState(m["state"])
	switch p.State {
	case BackfillRunning, BackfillDone, BackfillCanceled, BackfillFailed:
	default:
		return p, "holds an unknown backfill state " + strconv.Quote(m["state"])
	}
	nums := []struct {
		field string
		dst   *int
	}{{"total", &p.Total}, {"done", &p.Done}, {"skipped", &p.Skipped}, {"failed", &p.Failed}}
	for _, n := range nums {
		v, err := strconv.Atoi(m[n.field])
		if err != nil || v < 0 {
			return p, "holds a count " + n.field + " that is not a number"
		}
		*n.dst = v
	}
	if s, ok := m["cursor"]; ok {
		sec, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return p, "holds a cursor that is not a time in Unix seconds"
		}
		p.Cursor = time.Unix(sec, 0).UTC()
	}
	if s, ok := m["end"]; ok {
		ms, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return p, "holds an end that is not a time in Unix ms"
		}
		p.Ended = time.UnixMilli(ms).UTC()
	}
	for k, v := range m {
		switch {
		case strings.HasPrefix(k, "f:"):
			sec, err1 := strconv.ParseInt(k[2:], 10, 64)
			parts := strings.SplitN(v, " ", 3)
			if err1 != nil || len(parts) != 3 {
				return p, "holds a slot in flight agora did not write (" + k + ")"
			}
			exp, err2 := strconv.ParseInt(parts[1], 10, 64)
			if err2 != nil {
				return p, "holds a slot in flight agora did not write (" + k + ")"
			}
			p.InFlight = append(p.InFlight, BackfillSlot{Slot: time.Unix(sec, 0).UTC(), Worker: ownerWorker(parts[2]), Expires: time.UnixMilli(exp).UTC()})
		case strings.HasPrefix(k, "e:"):
			sec, err := strconv.ParseInt(k[2:], 10, 64)
			if err != nil {
				return p, "holds a failed slot agora did not write (" + k + ")"
			}
			p.Errors = append(p.Errors, BackfillError{Slot: time.Unix(sec, 0).UTC(), Error: v})
		}
	}
	sort.Slice(p.InFlight, func(i, j int) bool { return p.InFlight[i].Slot.Before(p.InFlight[j].Slot) })
	sort.Slice(p.Errors, func(i, j int) bool { return p.Errors[i].Slot.Before(p.Errors[j].Slot) })
	return p, ""
}

// backfillScript runs one backfill script on pipelineID's backfill hash
// and completed key, where the failure state lives, and returns its
// integer answer.
func (c *RedisWorkerCoordinator) backfillScript(ctx context.Context, what, pipelineID string, script *redis.Script, args ...any) (int64, error) {
	res, err := c.backfillCall(ctx, what, pipelineID, script, func(b *singleBackend) []string {
		return []string{c.keys.backfill(pipelineID), b.pipelineKeys(pipelineID)[2]}
	}, args...)
	if err != nil {
		return 0, err
	}
	n, ok := res.(int64)
	if !ok {
		return 0, fmt.Errorf("distributed: %s %q: the script answered %v", what, pipelineID, res)
	}
	return n, nil
}

// backfillCall runs script where the failure state lives and returns its
// raw answer.
func (c *RedisWorkerCoordinator) backfillCall(ctx context.Context, what, pipelineID string, script *redis.Script, keys func(b *singleBackend) []string, args ...any) (any, error) {
	if c.isClosed() {
		return nil, ErrClosed
	}
	b := c.failBackend()
	if b == nil {
		return nil, fmt.Errorf("distributed: %s %q: no backend to ask", what, pipelineID)
	}
	ctx, cancel := c.opContext(ctx, opInspect)
	defer cancel()
	cmd := leasebackend.RunPipelined(ctx, b.client, []leasebackend.Call{{Script: script, Keys: keys(b), Args: args}})[0]
	res, err := cmd.Result()
	if err != nil {
		return nil, c.failure(what+" "+strconv.Quote(pipelineID), err)
	}
	c.noteOK()
	return res, nil
}
