package runtime

import (
	"fmt"
	"time"

	"github.com/agora-etl/agora/runtime/internal/engine"
)

// Run numbers: what the int64 passed to Coordinator.TryAcquireLease (and
// carried in LeaseRequest.RunNumber) means.
//
// A run number is one of four kinds, told apart by its value alone, so the
// seam keeps its int64 and a caller's TryAcquireLease(ctx, id, 42) keeps
// compiling:
//
//   - RunNumberAuto (0): a continuous run (or a triggered one); the
//     coordinator numbers it.
//   - RunNumberOnce (-1): the single run of a Once schedule.
//   - a slot, made by SlotRun or SlotRunUnix: a cron or Every fire time.
//     Slots carry the bit slotRunFlag above a positive Unix second, so no
//     counted run can be mistaken for one. The completed-slot rule (a slot
//     that completed is refused) and the coordinators' clock rules (a slot
//     older than the coordination state, or too far ahead of its clock, is
//     refused) apply to slots only.
//   - any other positive number, below 1<<62: a counted run, numbered by
//     the caller (the reference's run_number=42). A counted run gets one
//     holder per pipeline and a fencing token above every earlier one, and
//     no slot rule: the same number may run again, and a larger one is
//     granted after the coordination state was lost.
//
// A lease reports the plain number: Lease.RunNumber is the slot's Unix
// second (with Lease.Slot true) or the counted number.

// RunKind says what a run number is.
type RunKind uint8

const (
	// RunInvalid is a number no coordinator accepts (below -1, or a slot
	// flag on a second that is not positive).
	RunInvalid RunKind = iota
	// RunContinuous is RunNumberAuto: the coordinator numbers the run.
	RunContinuous
	// RunOnce is RunNumberOnce.
	RunOnce
	// RunCounted is a positive number the caller counts itself.
	RunCounted
	// RunSlot is a scheduled slot, made by SlotRun or SlotRunUnix.
	RunSlot
)

// String names the kind as docs and logs do.
func (k RunKind) String() string {
	switch k {
	case RunContinuous:
		return "continuous"
	case RunOnce:
		return "once"
	case RunCounted:
		return "counted"
	case RunSlot:
		return "slot"
	}
	return "invalid"
}

// slotRunFlag marks a run number as a slot. Unix seconds stay far below it
// (year 292 billion), and every value with it set is above any counted run.
const slotRunFlag int64 = engine.SlotRunFlag

// MaxCountedRun is the largest counted run number.
const MaxCountedRun = slotRunFlag - 1

// SlotRun returns the run number of the slot that starts at t (its Unix
// second). It panics for a t at or before the Unix epoch, which no schedule
// fires at.
func SlotRun(t time.Time) int64 { return SlotRunUnix(t.Unix()) }

// SlotRunUnix returns the run number of the slot that starts at the Unix
// second sec. It panics unless 0 < sec < 1<<62.
func SlotRunUnix(sec int64) int64 {
	if sec <= 0 || sec >= slotRunFlag {
		panic(fmt.Sprintf("runtime: SlotRunUnix(%d): a slot is a positive Unix second", sec))
	}
	return slotRunFlag | sec
}

// CountedRun returns the run number of the n-th run counted by the caller:
// n itself, so CountedRun(42) and 42 are the same request. It panics unless
// 0 < n <= MaxCountedRun.
func CountedRun(n int64) int64 {
	if n <= 0 || n > MaxCountedRun {
		panic(fmt.Sprintf("runtime: CountedRun(%d): a counted run is in 1..%d", n, MaxCountedRun))
	}
	return n
}

// RunKindOf returns the kind of the run number run.
func RunKindOf(run int64) RunKind {
	switch {
	case run == RunNumberAuto:
		return RunContinuous
	case run == RunNumberOnce:
		return RunOnce
	case run < 0:
		return RunInvalid
	case run&slotRunFlag != 0:
		if run&^slotRunFlag == 0 {
			return RunInvalid
		}
		return RunSlot
	}
	return RunCounted
}

// RunValue returns the number a lease for run reports (Lease.RunNumber): a
// slot's Unix second, or run itself for every other kind.
func RunValue(run int64) int64 {
	if RunKindOf(run) == RunSlot {
		return run &^ slotRunFlag
	}
	return run
}
