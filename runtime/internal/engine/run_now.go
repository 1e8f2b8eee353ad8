package engine

import "fmt"

// runFailed is RunNow's error for a run that started and failed.
type runFailed struct{ err error }

func (e runFailed) Error() string { return e.err.Error() }

func (e runFailed) Unwrap() error { return e.err }

func (e runFailed) Is(target error) bool { return target == ErrRunFailed }

// runNow makes one attempt numbered by the coordinator and turns its
// outcome into an error naming the pipeline.
func (r *Runner) runNow() error {
	o, _, err := r.attempt(RunNumberAuto, r.now(), 0, true)
	switch o {
	case outcomeSuccess:
		return nil
	case outcomeFailure, outcomeSlotDone:
		return runFailed{fmt.Errorf("pipeline %q: %w", r.id(), err)}
	case outcomeLeaseError:
		return fmt.Errorf("pipeline %q: cannot ask the coordinator for a lease: %w", r.id(), err)
	case outcomeSlotCompleted:
		return fmt.Errorf("pipeline %q: %w", r.id(), ErrSlotCompleted)
	case outcomeBackingOff, outcomeFleetStopped:
		return fmt.Errorf("pipeline %q: not run: %w", r.id(), err)
	case outcomeStopped:
		return fmt.Errorf("pipeline %q: stopped before the run started", r.id())
	default:
		return fmt.Errorf("pipeline %q: not run: %w", r.id(), ErrLeaseHeld)
	}
}
