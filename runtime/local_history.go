package runtime

import (
	"context"

	"github.com/agora-etl/agora/internal/isnil"
	"github.com/agora-etl/agora/runtime/history"
)

// LocalOption configures a LocalCoordinator.
type LocalOption func(*LocalCoordinator)

// WithLocalRunHistory keeps the runs the coordinator records in h (nil:
// none), which makes it a RunRecorder and a RunHistoryReader. Without one
// the coordinator keeps no run history: the store is a package it is
// given, as a pool's metrics and notifier are.
func WithLocalRunHistory(h HistoryStore) LocalOption {
	return func(c *LocalCoordinator) {
		if !isnil.Value(h) {
			c.runs = h
		}
	}
}

// FinishRun gives the lease of rec.PipelineID back, completing it when
// rec.Outcome is history.OutcomeSucceeded or history.OutcomeSlotDone, and
// records rec in the run history, if the coordinator was given one.
// RunNumber and WorkerID are taken from the lease held; FencingToken is 0,
// as in every local lease. A pool running on the LocalCoordinator itself
// does the same without this call; a coordinator wrapping one reaches it
// through Capabilities.RunRecorder.
func (c *LocalCoordinator) FinishRun(_ context.Context, rec history.Record) error {
	e := c.entry(rec.PipelineID)
	e.mu.Lock()
	if e.held {
		rec.RunNumber, rec.FencingToken = e.runNumber, 0
		if w := c.workerID.Load(); w != nil {
			rec.WorkerID = *w
		}
	}
	e.mu.Unlock()
	c.releaseEntry(e, rec.Outcome == history.OutcomeSucceeded || rec.Outcome == history.OutcomeSlotDone)
	if c.runs != nil {
		c.runs.Add(rec)
	}
	return nil
}

// RunHistory returns the last runs of pipelineID this process made, newest
// first, at most limit (<= 0: all kept), as the store given with
// WithLocalRunHistory keeps them (history.Memory: none older than its
// MaxAge, at the precision of the shared Redis history). Without a store
// it returns none.
func (c *LocalCoordinator) RunHistory(_ context.Context, pipelineID string, limit int) ([]history.Record, error) {
	if c.runs == nil {
		return []history.Record{}, nil
	}
	return c.runs.Newest(pipelineID, limit, c.clock.Now()), nil
}

var _ RunHistoryReader = (*LocalCoordinator)(nil)
