package engine

import "fmt"

// Run numbers with a special meaning (runtime.RunNumberAuto,
// runtime.RunNumberOnce).
const (
	// RunNumberAuto asks the coordinator to number the run itself.
	RunNumberAuto int64 = 0
	// RunNumberOnce marks the single run of a Once schedule.
	RunNumberOnce int64 = -1
)

// SlotRunFlag marks a run number as a slot (runtime.SlotRun): the bit set
// above a positive Unix second.
const SlotRunFlag int64 = 1 << 62

// slotRunUnix is runtime.SlotRunUnix.
func slotRunUnix(sec int64) int64 {
	if sec <= 0 || sec >= SlotRunFlag {
		panic(fmt.Sprintf("runtime: SlotRunUnix(%d): a slot is a positive Unix second", sec))
	}
	return SlotRunFlag | sec
}

// seamRun turns the pool's own run number (a slot as its Unix second, or
// RunNumberAuto or RunNumberOnce) into the run number it asks a coordinator
// for. The pool never counts runs, so every positive number of its own is a
// slot.
func seamRun(run int64) int64 {
	if run > 0 {
		return slotRunUnix(run)
	}
	return run
}
