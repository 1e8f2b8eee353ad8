package runtime

import (
	"context"

	"github.com/agora-etl/agora/runtime/history"
)

var _ SlotCompletionReader = (*LocalCoordinator)(nil)

// SlotCompleted reports whether slot (Unix s) of pipelineID completed in
// this process: it is the last completed slot, or an earlier one whose
// successful run (or history.OutcomeSlotDone) the run history it was given
// (WithLocalRunHistory) still holds. A slot older than the last completed
// one that the history no longer holds, or without a history, is reported
// as not completed.
func (c *LocalCoordinator) SlotCompleted(ctx context.Context, pipelineID string, slot int64) (bool, error) {
	c.mu.RLock()
	e := c.entries[pipelineID]
	c.mu.RUnlock()
	if e == nil {
		return false, nil
	}
	e.mu.Lock()
	last := e.lastCompleted
	e.mu.Unlock()
	switch {
	case last == slot:
		return true, nil
	case last < slot:
		return false, nil
	}
	runs, err := c.RunHistory(ctx, pipelineID, 0)
	if err != nil {
		return false, err
	}
	for _, rec := range runs {
		if rec.RunNumber == slot && (rec.Outcome == history.OutcomeSucceeded || rec.Outcome == history.OutcomeSlotDone) {
			return true, nil
		}
	}
	return false, nil
}
