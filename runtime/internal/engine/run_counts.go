package engine

import (
	"errors"

	"github.com/agora-etl/agora/runtime/history"
)

// counted adds a finished run to the runner's counts: how it ended and the
// records it moved.
func (r *Runner) counted(runErr, cancelCause error, records history.RecordCounts) {
	panicked := runErr != nil && r.env.errs.isPanic(runErr)
	stale := runErr != nil && errors.Is(runErr, ErrStaleWrite)
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case runErr == nil:
		r.st.ok++
	case errors.Is(runErr, ErrSlotCompleted):
		// Refused because the slot ran elsewhere: counted as a completed
		// slot skipped (publish), not as a failed run.
	case panicked:
		r.rareLocked().panicked++
	case cancelCause != nil:
		r.rareLocked().cancelled++
	default:
		r.rareLocked().errored++
	}
	if stale {
		r.rareLocked().staleRefused++
	}
	if !records.IsZero() {
		rs := r.rareLocked()
		rs.records = rs.records.Add(records)
	}
}
