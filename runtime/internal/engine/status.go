package engine

import "github.com/agora-etl/agora/runtime/history"

// lastRunOf returns the last run recorded in st; st.lastEnd is not 0.
func lastRunOf(st runStats) LastRun {
	o := history.OutcomeSucceeded
	switch st.lastOutcome {
	case outcomeFailure:
		o = history.OutcomeFailed
	case outcomeSlotDone:
		o = history.OutcomeSlotDone
	}
	return LastRun{RunNumber: st.lastRun, LeaseToken: st.lastRunTok, Outcome: o, End: timeOf(st.lastEnd)}
}
