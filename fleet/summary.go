package fleet

import (
	"context"
	"sort"
	"time"

	"github.com/agora-etl/agora/runtime"
)

// PipelineSummary is what the fleet knows of one pipeline: its schedule and
// workers, its lease, its last runs' outcome and when it runs next. It is
// one line of "fleet pipelines" and one row of the dashboard.
type PipelineSummary struct {
	PipelineID    string     `json:"pipeline_id"`
	Schedule      string     `json:"schedule"`
	Workers       []string   `json:"workers"`
	LastCompleted *time.Time `json:"last_completed"`
	NextFire      *time.Time `json:"next_fire"`
	Paused        bool       `json:"paused"`
	PausedBy      string     `json:"paused_by,omitempty"`
	PausedAt      *time.Time `json:"paused_at,omitempty"`
	OnceCompleted bool       `json:"once_completed"`
	// LastOutcome is the outcome of the newest run in the history ("" when
	// none is kept).
	LastOutcome runtime.RunOutcome `json:"last_outcome,omitempty"`
	// LastError is that run's error text.
	LastError string `json:"last_error,omitempty"`
	// LastSuccess is when the newest successful run in the history ended.
	LastSuccess *time.Time `json:"last_success"`
	// NextRun is when the pipeline next runs, as far as the fleet can
	// tell: a cron schedule's next slot, an interval's after the last run's
	// end; nil for continuous and once pipelines and when unknown.
	NextRun *time.Time `json:"next_run"`
	// Lease is the pipeline's lease state.
	Lease LeaseState `json:"lease"`
	// StaleRefusals counts the runs in the history refused as stale.
	StaleRefusals int `json:"stale_refusals"`
}

// Overview reads every pipeline a live worker runs or that is paused, and
// the live workers: the data of "fleet pipelines" and of the dashboard.
// The run history is read with one request for every pipeline.
func Overview(ctx context.Context, b Backend, now time.Time) ([]PipelineSummary, []Worker, error) {
	ws, err := b.Workers(ctx)
	if err != nil {
		return nil, nil, err
	}
	ids, by := known(ws)
	paused, err := b.PausedPipelines(ctx)
	if err != nil {
		return nil, nil, err
	}
	for id := range paused {
		if _, ok := by[id]; !ok {
			ids = append(ids, id) // paused, with no live worker
		}
	}
	sort.Strings(ids)
	states, err := b.LeaseStates(ctx, ids)
	if err != nil {
		return nil, nil, err
	}
	histories, err := b.Runs(ctx, ids, 0)
	if err != nil {
		return nil, nil, err
	}
	schedules := map[string]string{}
	for _, w := range ws {
		for id, s := range w.Schedules {
			schedules[id] = s
		}
	}
	rows := make([]PipelineSummary, len(ids))
	for i, id := range ids {
		st := states[i]
		r := PipelineSummary{PipelineID: id, Schedule: schedules[id], Workers: by[id], OnceCompleted: st.OnceCompleted, Lease: st}
		if r.Workers == nil {
			r.Workers = []string{}
		}
		if st.LastCompleted > 0 {
			t := time.Unix(st.LastCompleted, 0).UTC()
			r.LastCompleted = &t
		}
		if p, ok := paused[id]; ok {
			at := p.At.UTC()
			r.Paused, r.PausedBy, r.PausedAt = true, p.By, &at
		}
		if next, ok := nextFire(r.Schedule, now); ok {
			r.NextFire = &next
		}
		r.fromHistory(histories[i])
		r.NextRun = nextRun(r.Schedule, r.NextFire, histories[i], now)
		rows[i] = r
	}
	return rows, ws, nil
}

// fromHistory fills the fields read from the pipeline's run history.
func (r *PipelineSummary) fromHistory(runs []runtime.RunRecord) {
	for i, run := range runs {
		if i == 0 {
			r.LastOutcome, r.LastError = run.Outcome, run.Error
		}
		if run.Outcome == runtime.OutcomeSucceeded && r.LastSuccess == nil {
			t := run.End.UTC()
			r.LastSuccess = &t
		}
		if run.Outcome == runtime.OutcomeStale {
			r.StaleRefusals++
		}
	}
}

// nextRun is a cron schedule's next slot, or an interval's next run after
// the newest run's end (now when it is overdue or never ran).
func nextRun(schedule string, fire *time.Time, runs []runtime.RunRecord, now time.Time) *time.Time {
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
