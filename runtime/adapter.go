package runtime

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"time"

	"github.com/agora-etl/agora/runtime/history"
	"github.com/agora-etl/agora/runtime/internal/engine"
)

// The boundary between runtime's public types and the engine's own
// (runtime/internal/engine, which cannot import runtime). runtime turns a
// ScheduledPipeline into an engine.Spec and its Coordinator and
// Capabilities into the engine's seam once per Run, RunNow or Start.
// Capabilities whose methods use only basic types pass straight through,
// since Go interfaces are structural; the others get a thin wrapper that
// converts Lease, LeaseRequest, LeaseReply and FailureState, which have
// the engine's field lists, so the conversions cost nothing.

// engineConfig is the engine's configuration of one Run or RunNow.
func engineConfig(cfg poolConfig, coord Coordinator, caps Capabilities, logger *slog.Logger, parent context.Context) engine.Config {
	_, precise := cfg.clock.(SystemClock)
	ec := engine.Config{
		Clock:           engineClock{cfg.clock},
		Precise:         precise,
		Coordinator:     engineCoordinator{coord},
		Capabilities:    capabilitiesOf(caps),
		Logger:          logger,
		Notifier:        cfg.notifier,
		WorkerID:        cfg.workerID,
		TracerProvider:  cfg.tracerProvider,
		Parent:          parent,
		Errors:          engine.Errors{Panic: newPanicError, PanicStack: panicStack, Failing: failingState},
		TriggerRetry:    TriggerRetryInterval,
		TriggerPatience: triggerPatience,
	}
	if cfg.metrics != nil {
		ec.Observer = cfg.metrics
	}
	return ec
}

// specsOf is what the engine runs of pipelines, in one array. The
// settings few pipelines use are made only for those that use one; the
// others share one zero Settings.
func specsOf(pipelines []*ScheduledPipeline) []engine.Spec {
	specs := make([]engine.Spec, len(pipelines))
	none := &engine.Settings{}
	for i, sp := range pipelines {
		specs[i] = engine.Spec{Factory: engineFactory(sp.Factory), Schedule: sp.Schedule.engine(), PipelineID: sp.PipelineID, Settings: none}
		st := engine.Settings{
			ErrorBackoff:         sp.ErrorBackoff,
			MaxConsecutiveErrors: sp.MaxConsecutiveErrors,
			CatchUp:              engine.CatchUpPolicy(sp.CatchUp),
			RerunInterrupted:     sp.RerunInterrupted,
			Grace:                sp.Grace,
			Timeout:              sp.Timeout,
			Deadline:             sp.Deadline,
			After:                sp.After,
			AfterTimeout:         sp.AfterTimeout,
			TracerProvider:       sp.TracerProvider,
		}
		if !reflect.ValueOf(st).IsZero() {
			specs[i].Settings = &st
		}
	}
	return specs
}

// engineFactory is a Factory as the engine calls it. A func is one
// pointer, so it becomes an engine.Factory without an allocation.
type engineFactory Factory

func (f engineFactory) Build(ctx context.Context) (engine.Pipeline, error) { return f(ctx) }

// engine is s as the engine reads it.
func (s Schedule) engine() engine.Schedule {
	return engine.NewSchedule(engine.ScheduleKind(s.kind), s.every, s.expr, s.spec)
}

// failingState is what the engine reads of a *FailingError in err.
func failingState(err error) (engine.FailureState, bool) {
	var fe *FailingError
	if !errors.As(err, &fe) {
		return engine.FailureState{}, false
	}
	return engine.FailureState(fe.State), true
}

// engineClock is a Clock whose timers are the engine's Timer.
type engineClock struct{ Clock }

func (c engineClock) NewTimer(d time.Duration) engine.Timer { return c.Clock.NewTimer(d) }

// engineCoordinator is a Coordinator whose leases are the engine's.
type engineCoordinator struct{ Coordinator }

func (c engineCoordinator) CurrentLease(pipelineID string) (engine.Lease, bool) {
	l, ok := c.Coordinator.CurrentLease(pipelineID)
	return engine.Lease(l), ok
}

// capabilitiesOf is caps in the engine's types; a nil capability stays nil.
func capabilitiesOf(caps Capabilities) engine.Capabilities {
	ec := engine.Capabilities{
		CompletionReader:     caps.CompletionReader,
		RunRecorder:          caps.RunRecorder,
		DeadlineReporter:     caps.DeadlineReporter,
		SlotCompletionReader: caps.SlotCompletionReader,
		LeaseAheader:         caps.LeaseAheader,
	}
	if caps.FleetController != nil {
		ec.FleetController = caps.FleetController
	}
	if caps.LocalLeaser != nil {
		ec.LocalLeaser = engineLocalLeaser{caps.LocalLeaser}
	}
	if caps.BatchLeaser != nil {
		ec.BatchLeaser = engineBatchLeaser{caps.BatchLeaser}
	}
	if caps.LeaseDeferrer != nil {
		ec.LeaseDeferrer = engineLeaseDeferrer{caps.LeaseDeferrer}
	}
	if caps.LeaseHolderReporter != nil {
		ec.LeaseHolderReporter = engineLeaseHolderReporter{caps.LeaseHolderReporter}
	}
	if caps.FailureSharer != nil {
		ec.FailureSharer = engineFailureReader{caps.FailureSharer}
	}
	return ec
}

type engineLocalLeaser struct{ LocalLeaser }

func (l engineLocalLeaser) LocalLeases(pipelineID string) engine.LocalLeases {
	return engineLocalLeases{l.LocalLeaser.LocalLeases(pipelineID)}
}

type engineLocalLeases struct{ LocalLeases }

func (l engineLocalLeases) Acquire(runNumber int64, now time.Time) (engine.Lease, bool, error) {
	lease, ok, err := l.LocalLeases.Acquire(runNumber, now)
	return engine.Lease(lease), ok, err
}

type engineBatchLeaser struct{ BatchLeaser }

func (b engineBatchLeaser) TryAcquireLeases(ctx context.Context, reqs []engine.LeaseRequest) []engine.LeaseReply {
	asked := make([]LeaseRequest, len(reqs))
	for i, r := range reqs {
		asked[i] = LeaseRequest(r)
	}
	replies := b.BatchLeaser.TryAcquireLeases(ctx, asked)
	out := make([]engine.LeaseReply, len(replies))
	for i, r := range replies {
		out[i] = engine.LeaseReply(r)
	}
	return out
}

type engineLeaseDeferrer struct{ LeaseDeferrer }

func (d engineLeaseDeferrer) DeferLease(req engine.LeaseRequest) time.Duration {
	return d.LeaseDeferrer.DeferLease(LeaseRequest(req))
}

type engineLeaseHolderReporter struct{ LeaseHolderReporter }

func (h engineLeaseHolderReporter) LeaseHolder(ctx context.Context, pipelineID string) (engine.Lease, bool, error) {
	l, ok, err := h.LeaseHolderReporter.LeaseHolder(ctx, pipelineID)
	return engine.Lease(l), ok, err
}

// engineBackfiller is a Backfiller as the engine calls it: the schedule
// of each pipeline it claims for is the pool's.
type engineBackfiller struct {
	Backfiller
	schedules map[string]Schedule
}

// backfillerOf is b for the pool of pipelines; nil when b is.
func backfillerOf(b Backfiller, pipelines []*ScheduledPipeline) engine.Backfiller {
	if b == nil {
		return nil
	}
	schedules := make(map[string]Schedule, len(pipelines))
	for _, sp := range pipelines {
		schedules[sp.PipelineID] = sp.Schedule
	}
	return engineBackfiller{b, schedules}
}

func (b engineBackfiller) ClaimBackfill(ctx context.Context, pipelineID string) (engine.BackfillSlot, bool, error) {
	slot, ok, err := b.Backfiller.ClaimBackfill(ctx, pipelineID, b.schedules[pipelineID])
	return engine.BackfillSlot{Lease: engine.Lease(slot.Lease), Params: slot.Params, WaitUpstream: slot.WaitUpstream}, ok, err
}

func (b engineBackfiller) FinishBackfill(ctx context.Context, lease engine.Lease, rec *history.Record) error {
	return b.Backfiller.FinishBackfill(ctx, Lease(lease), rec)
}

type engineFailureReader struct{ FailureSharer }

func (f engineFailureReader) Failures(pipelineID string) (engine.FailureState, bool) {
	st, ok := f.FailureSharer.Failures(pipelineID)
	return engine.FailureState(st), ok
}

// statusOf is st in runtime's type; its pointers are st's.
func statusOf(st engine.Status) PipelineStatus {
	return PipelineStatus{
		PipelineID:         st.PipelineID,
		Schedule:           st.Schedule,
		State:              PipelineState(st.State),
		Runs:               st.Runs,
		Failures:           st.Failures,
		Skipped:            st.Skipped,
		MissedSlots:        st.MissedSlots,
		LeaseErrors:        st.LeaseErrors,
		ConsecutiveErrors:  st.ConsecutiveErrors,
		RunningSince:       st.RunningSince,
		LastRunStart:       st.LastRunStart,
		LastRunEnd:         st.LastRunEnd,
		LastError:          st.LastError,
		NextRun:            st.NextRun,
		RunNumber:          st.RunNumber,
		LeaseToken:         st.LeaseToken,
		Paused:             st.Paused,
		SkippedPaused:      st.SkippedPaused,
		Records:            st.Records,
		BackoffUntil:       st.BackoffUntil,
		LastRun:            (*LastRunStatus)(st.LastRun),
		DeadlinesMissed:    st.DeadlinesMissed,
		LastMissedSlot:     st.LastMissedSlot,
		SkippedUpstream:    st.SkippedUpstream,
		LastSkipReason:     st.LastSkipReason,
		AwaitingUpstream:   st.AwaitingUpstream,
		Outcomes:           RunOutcomes(st.Outcomes),
		LeaseLost:          st.LeaseLost,
		StaleWritesRefused: st.StaleWritesRefused,
		LastFencingToken:   st.LastFencingToken,
		LastSuccess:        st.LastSuccess,
		BackfillDone:       st.BackfillDone,
		BackfillSkipped:    st.BackfillSkipped,
		BackfillFailed:     st.BackfillFailed,
		BackfillRunning:    st.BackfillRunning,
	}
}
