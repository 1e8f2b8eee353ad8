package engine

import (
	"time"

	"github.com/agora-etl/agora/runtime/history"
)

// State is runtime.PipelineState, with its values.
type State uint8

// The pipeline states.
const (
	StateIdle State = iota
	StateRunning
	StateBackoff
	StateStopped
)

// Status is runtime.PipelineStatus with the engine's types; runtime copies
// it field by field into its own (statusOf in runtime's adapter.go).
type Status struct {
	PipelineID         string
	Schedule           string
	State              State
	Runs               uint64
	Failures           uint64
	Skipped            uint64
	MissedSlots        uint64
	LeaseErrors        uint64
	ConsecutiveErrors  int
	RunningSince       *time.Time
	LastRunStart       *time.Time
	LastRunEnd         *time.Time
	LastError          string
	NextRun            *time.Time
	RunNumber          int64
	LeaseToken         int64
	Paused             bool
	SkippedPaused      uint64
	Records            history.RecordCounts
	BackoffUntil       *time.Time
	LastRun            *LastRun
	DeadlinesMissed    uint64
	LastMissedSlot     *time.Time
	SkippedUpstream    uint64
	LastSkipReason     string
	AwaitingUpstream   *time.Time
	Outcomes           Outcomes
	LeaseLost          uint64
	StaleWritesRefused uint64
	LastFencingToken   int64
	LastSuccess        *time.Time
	BackfillDone       uint64
	BackfillSkipped    uint64
	BackfillFailed     uint64
	BackfillRunning    int
}

// Outcomes is runtime.RunOutcomes with the same fields.
type Outcomes struct {
	Succeeded        uint64
	Errored          uint64
	Panicked         uint64
	Cancelled        uint64
	SkippedHeld      uint64
	SkippedCompleted uint64
}

// LastRun is runtime.LastRunStatus with the same fields.
type LastRun struct {
	RunNumber  int64
	LeaseToken int64
	Outcome    history.Outcome
	End        time.Time
}

// Reading is runtime.PipelineReading but for its Pipeline, which runtime
// fills from Index: one pipeline's status, read without allocating, and
// the little a metrics exporter needs besides.
type Reading struct {
	Index    int
	Status   Status
	Planned  time.Time
	Interval time.Duration

	times   [8]time.Time
	lastRun LastRun
}

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
