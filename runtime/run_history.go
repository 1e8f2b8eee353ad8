package runtime

import (
	"context"
	"time"

	"github.com/agora-etl/agora/internal/isnil"
	"github.com/agora-etl/agora/runtime/history"
)

// RunRecorder is the capability (Capabilities.RunRecorder) of coordinators
// that keep a run history. The pool then ends each run with FinishRun
// instead of ReleaseLease or CompleteLease: it gives the lease back
// (completing it when the outcome is history.OutcomeSucceeded) and records
// rec in the same step, so recording costs no extra round trip. The
// coordinator fills in RunNumber, FencingToken and WorkerID from the lease
// it holds.
type RunRecorder interface {
	FinishRun(ctx context.Context, rec history.Record) error
}

// RunHistoryReader is the capability (Capabilities.RunHistoryReader) of
// coordinators whose run history can be read back: the newest runs of a
// pipeline first, at most limit of them (limit <= 0: all that are kept).
type RunHistoryReader interface {
	RunHistory(ctx context.Context, pipelineID string, limit int) ([]history.Record, error)
}

// HistoryStore keeps the runs a LocalCoordinator records, so that the run
// history is a package the pool is given (WithRunHistory) rather than
// part of the coordinator: history.Memory is the one worker binaries use.
// Add is called on the run's goroutine once its lease is given back and
// must not block; Newest reads back the runs of a pipeline, newest first,
// at most limit (<= 0: all kept), leaving out what is older than the
// store keeps at now. Both are called from many goroutines at once.
type HistoryStore interface {
	Add(rec history.Record)
	Newest(pipelineID string, limit int, now time.Time) []history.Record
}

// WithRunHistory gives the pool h, the store in which the LocalCoordinator
// the pool makes when none is given with WithCoordinator keeps the runs of
// Run and RunNow. A pool given none keeps no run history (its coordinator
// then records nothing and reads back no runs); worker binaries give one,
// a history.Memory of the last 100 runs per pipeline, for 7 days. A
// coordinator given with WithCoordinator keeps its own (see
// WithLocalRunHistory and distributed.Options.RunHistory).
func WithRunHistory(h HistoryStore) PoolOption {
	return func(c *poolConfig) {
		c.runHistory = nil
		if !isnil.Value(h) {
			c.runHistory = h
		}
	}
}

// RunHistory returns the store given with WithRunHistory, or nil, so that
// an entry point can give a pool without one its default.
func (p *WorkerPool) RunHistory() HistoryStore {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cfg.runHistory
}
