package distributed

import (
	"context"
	"errors"
	"sort"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/history"
)

// PipelineInfo is what the fleet knows of one pipeline: its schedule and
// workers, its lease, its last runs' outcome and when it runs next. It is
// one element of "fleet pipelines --json" and one row of the dashboard.
// Times are UTC; a time the fleet does not know is null.
type PipelineInfo struct {
	// PipelineID names the pipeline.
	PipelineID string `json:"pipeline_id"`
	// Schedule is the pipeline's schedule in directive form, as its
	// workers published it ("" when none did).
	Schedule string `json:"schedule"`
	// Workers are the ids of the live workers that run it, sorted.
	Workers []string `json:"workers"`
	// LastCompleted is the last completed slot.
	LastCompleted *time.Time `json:"last_completed"`
	// NextFire is a cron schedule's next slot.
	NextFire *time.Time `json:"next_fire"`
	// Paused is true while the pipeline is paused fleet-wide.
	Paused bool `json:"paused"`
	// PausedBy says where the pause was set from.
	PausedBy string `json:"paused_by,omitempty"`
	// PausedAt is when it was set.
	PausedAt *time.Time `json:"paused_at,omitempty"`
	// PausedReason is the reason given with the pause.
	PausedReason string `json:"paused_reason,omitempty"`
	// PausedUntil is when the pause ends by itself; nil for a pause that
	// lasts until resumed.
	PausedUntil *time.Time `json:"paused_until,omitempty"`
	// OnceCompleted is true when a once pipeline's run completed.
	OnceCompleted bool `json:"once_completed"`
	// LastOutcome is the outcome of the newest run in the history ("" when
	// none is kept).
	LastOutcome history.Outcome `json:"last_outcome,omitempty"`
	// LastError is that run's error text.
	LastError string `json:"last_error,omitempty"`
	// LastSuccess is when the newest successful run in the history ended.
	LastSuccess *time.Time `json:"last_success"`
	// NextRun is when the pipeline next runs, as far as the fleet can
	// tell: a cron schedule's next slot, an interval's after the last run's
	// end, the end of the fleet's backoff after a failed run; nil for
	// continuous and once pipelines, while paused, once stopped after
	// too many failed runs, and when unknown.
	NextRun *time.Time `json:"next_run"`
	// ConsecutiveErrors is the fleet's count of failed runs since the
	// last success (failures.go).
	ConsecutiveErrors int `json:"consecutive_errors"`
	// BackoffUntil is when the fleet's backoff after a failed run ends;
	// nil when the pipeline is not backing off.
	BackoffUntil *time.Time `json:"backoff_until,omitempty"`
	// FailedStop is true once ConsecutiveErrors reached the pipeline's
	// max_consecutive_errors: every replica stops it, until a worker
	// running it starts again.
	FailedStop bool `json:"failed_stop,omitempty"`
	// LastDeadlineMissed is the last slot reported, once for the fleet,
	// as not succeeded within the pipeline's deadline; absent when none is
	// kept (or its key holds data agora did not write: Lease.Problem
	// names it).
	LastDeadlineMissed *time.Time `json:"last_deadline_missed,omitempty"`
	// Lease is the pipeline's lease.
	Lease LeaseInfo `json:"lease"`
	// StaleRefusals counts the runs in the history refused as stale.
	StaleRefusals int `json:"stale_refusals"`
	// Backfill is the pipeline's running backfill; absent when none runs
	// (fleet backfill ID --status shows a finished one).
	Backfill *BackfillSummary `json:"backfill,omitempty"`
}

// BackfillSummary is where a running backfill stands, in a pipeline's row.
type BackfillSummary struct {
	// ID names the backfill.
	ID string `json:"id"`
	// Total, Done, Skipped, Failed, InFlight and Remaining count its
	// slots (see BackfillProgress).
	Total     int `json:"total"`
	Done      int `json:"done"`
	Skipped   int `json:"skipped"`
	Failed    int `json:"failed"`
	InFlight  int `json:"in_flight"`
	Remaining int `json:"remaining"`
	// Current is the oldest slot in flight; nil when none is.
	Current *time.Time `json:"current,omitempty"`
}

// summary is p in a pipeline's row.
func (p BackfillProgress) summary() *BackfillSummary {
	s := &BackfillSummary{ID: p.ID, Total: p.Total, Done: p.Done, Skipped: p.Skipped, Failed: p.Failed, InFlight: len(p.InFlight), Remaining: p.Remaining()}
	if len(p.InFlight) > 0 {
		t := p.InFlight[0].Slot
		s.Current = &t
	}
	return s
}

// Overview is the fleet at one moment: every pipeline and the live
// workers, read together (the dashboard's front page).
type Overview struct {
	// Pipelines are those a live worker runs or that are paused, sorted by
	// id.
	Pipelines []PipelineInfo `json:"pipelines"`
	// Workers are the live workers, sorted by id.
	Workers []WorkerInfo `json:"workers"`
}

// Pipelines returns every pipeline a live worker runs or that is paused,
// sorted by id: the data of "fleet pipelines".
func (in *Inspector) Pipelines(ctx context.Context) ([]PipelineInfo, error) {
	o, err := in.Overview(ctx)
	return o.Pipelines, err
}

// Overview reads the pipelines (as Pipelines) and the live workers. The
// leases and the run history are each read with one round trip for every
// pipeline.
func (in *Inspector) Overview(ctx context.Context) (Overview, error) {
	ws, ids, by, paused, err := in.fleetPipelines(ctx)
	if err != nil {
		return Overview{}, err
	}
	leases, err := in.leaseInfos(ctx, ids, ws)
	if err != nil {
		return Overview{}, err
	}
	histories, err := in.c.RunHistories(ctx, ids, 0)
	if err != nil {
		return Overview{}, err
	}
	failures, err := in.c.FailureStates(ctx, ids)
	if err != nil {
		return Overview{}, err
	}
	backfills, err := in.runningBackfills(ctx)
	if err != nil {
		return Overview{}, err
	}
	schedules := schedulesOf(ws)
	now := in.now()
	rows := make([]PipelineInfo, len(ids))
	for i, id := range ids {
		rows[i] = in.row(id, schedules[id], by[id], leases[i], paused, now)
		rows[i].fromHistory(histories[i])
		rows[i].plan(histories[i], failures[i], now)
		if p, ok := backfills[id]; ok {
			rows[i].Backfill = p.summary()
		}
	}
	return Overview{Pipelines: rows, Workers: ws}, nil
}

// runningBackfills reads the running backfills, by pipeline: the index,
// then each backfill it names. A backfill that is not running any more, or
// whose key holds data agora did not write, is left out.
func (in *Inspector) runningBackfills(ctx context.Context) (map[string]BackfillProgress, error) {
	opCtx, cancel := in.c.opContext(ctx, opInspect)
	index, err := in.c.client.HGetAll(opCtx, in.c.keys.backfills()).Result()
	cancel()
	if isWrongType(err) {
		in.c.warnForeign(in.c.keys.backfills(), "not a hash: no backfill can be read from it")
		return nil, nil
	}
	if err != nil {
		return nil, in.c.failure("read the running backfills", err)
	}
	out := make(map[string]BackfillProgress, len(index))
	for id := range index {
		p, err := in.c.readBackfill(ctx, id)
		if err == nil && p.State == BackfillRunning {
			out[id] = p
		} else if err != nil && !errors.Is(err, ErrNoBackfill) && !errors.Is(err, ErrForeignData) {
			return nil, err
		}
	}
	return out, nil
}

// fleetPipelines reads the live workers and the pause flags, and returns
// the pipelines to show, sorted: every pipeline a live worker runs, and
// every paused one (a pause outlives the workers).
func (in *Inspector) fleetPipelines(ctx context.Context) (ws []WorkerInfo, ids []string, by map[string][]string, paused map[string]PauseInfo, err error) {
	if ws, err = in.Workers(ctx); err != nil {
		return nil, nil, nil, nil, err
	}
	ids, by = knownPipelines(ws)
	if paused, err = in.c.PausedPipelines(ctx); err != nil {
		return nil, nil, nil, nil, err
	}
	for id := range paused {
		if _, ok := by[id]; !ok {
			ids = append(ids, id) // paused, with no live worker
		}
	}
	sort.Strings(ids)
	return ws, ids, by, paused, nil
}

// schedulesOf maps each pipeline the workers run to its schedule.
func schedulesOf(ws []WorkerInfo) map[string]string {
	schedules := map[string]string{}
	for _, w := range ws {
		for id, s := range w.Schedules {
			schedules[id] = s
		}
	}
	return schedules
}

// plan sets NextRun from the newest runs and the fleet's failure state:
// empty while paused or stopped, since no scheduled attempt is made.
func (r *PipelineInfo) plan(runs []history.Record, st runtime.FailureState, now time.Time) {
	r.NextRun = nextRun(r.Schedule, r.NextFire, runs, now)
	r.fromFailures(st)
	if r.Paused || r.FailedStop {
		r.NextRun = nil
	}
}

// fromHistory fills the fields read from the pipeline's run history,
// newest run first.
func (r *PipelineInfo) fromHistory(runs []history.Record) {
	for i, run := range runs {
		if i == 0 {
			r.LastOutcome, r.LastError = run.Outcome, run.Error
		}
		if run.Outcome == history.OutcomeSucceeded && r.LastSuccess == nil {
			t := run.End.UTC()
			r.LastSuccess = &t
		}
		if run.Outcome == history.OutcomeStale {
			r.StaleRefusals++
		}
	}
}

// nextFire is a cron schedule's next slot after now. Every, Continuous and
// Once pipelines have none that the fleet can tell: an Every interval runs
// from the end of the previous run.
func nextFire(schedule string, now time.Time) (time.Time, bool) {
	s, err := runtime.ParseSchedule(schedule)
	if err != nil || s.Kind() != runtime.ScheduleCron {
		return time.Time{}, false
	}
	next := s.Next(now)
	return next.UTC(), !next.IsZero()
}

// nextRun is a cron schedule's next slot, or an interval's next run after
// the newest run's end (now when it is overdue or never ran).
func nextRun(schedule string, fire *time.Time, runs []history.Record, now time.Time) *time.Time {
	if fire != nil {
		return fire
	}
	s, err := runtime.ParseSchedule(schedule)
	if err != nil || s.Kind() != runtime.ScheduleEvery {
		return nil
	}
	next := now.UTC()
	if len(runs) > 0 {
		if n := s.Next(runs[0].End); n.After(next) {
			next = n.UTC()
		}
	}
	return &next
}

// fromFailures fills the fleet's failure state in, and moves NextRun to
// where the backoff puts it, as the pool plans it: the end of the backoff
// (an interval's next run, the retry of a cron slot), or for cron the
// first slot at or after it when the next slot comes before it.
func (r *PipelineInfo) fromFailures(st runtime.FailureState) {
	r.ConsecutiveErrors, r.FailedStop = st.Count, st.Stopped
	if st.Count > 0 && st.LastError != "" && r.LastError == "" {
		r.LastError = st.LastError
	}
	if st.Until.IsZero() {
		return
	}
	until := st.Until.UTC()
	r.BackoffUntil = &until
	next := until
	if r.NextFire != nil && !r.NextFire.After(until) {
		if s, err := runtime.ParseSchedule(r.Schedule); err == nil {
			if n := s.Next(until.Add(-time.Nanosecond)); !n.IsZero() {
				next = n.UTC()
			}
		}
	}
	r.NextRun = &next
}

// setPause marks r paused by p.
func (r *PipelineInfo) setPause(p PauseInfo) {
	at := p.At.UTC()
	r.Paused, r.PausedBy, r.PausedAt, r.PausedReason = true, p.By, &at, p.Reason
	if !p.Until.IsZero() {
		until := p.Until.UTC()
		r.PausedUntil = &until
	}
}
