package engine

import (
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime/history"
)

func TestLastRunOf(t *testing.T) {
	end := time.Unix(100, 0)
	for o, want := range map[outcome]history.Outcome{
		outcomeSuccess:  history.OutcomeSucceeded,
		outcomeFailure:  history.OutcomeFailed,
		outcomeSlotDone: history.OutcomeSlotDone,
	} {
		got := lastRunOf(runStats{lastOutcome: o, lastRun: 7, lastRunTok: 3, lastEnd: end.UnixNano()})
		if got != (LastRun{RunNumber: 7, LeaseToken: 3, Outcome: want, End: end}) {
			t.Errorf("outcome %d: %+v", o, got)
		}
	}
}
