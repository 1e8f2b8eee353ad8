package engine

// What runtime's tests read of the engine through runtime's export_test.go
// (WorkerPool.Quiet, ScheduledPipeline.Quiet, WorkerPool.Executors): they
// live here, not in a _test file, because runtime's tests cannot see the
// engine's.

// Quiet reports whether no run is in flight after the dispatcher has
// handled everything pushed so far, and the deadline watch too; ok is
// false once the dispatcher stopped. Backfill slots run beside the
// dispatcher and are not counted: a test waits for them itself.
func (p *Pool) Quiet() (quiet, ok bool) {
	quiet, ok = p.d.quiet()
	if quiet && p.deadlines != nil && !p.deadlines.sync() {
		return false, false
	}
	return quiet, ok
}

// Quiet is Pool.Quiet for the pool r runs in, without the deadline watch;
// ok is false when r has no dispatcher.
func (r *Runner) Quiet() (quiet, ok bool) {
	if r.env.d == nil {
		return false, false
	}
	return r.env.d.quiet()
}

// Executors returns how many executor goroutines the pool has and how many
// are inside an attempt.
func (p *Pool) Executors() (total, busy int64) {
	return p.d.executors.Load(), p.d.busy.Load()
}

func (d *dispatcher) quiet() (quiet, ok bool) {
	if d.running.Load() != 0 {
		return false, true
	}
	before := d.dispatched.Load()
	if !d.sync() {
		return false, false
	}
	// A run dispatched and finished while the loop handled the sync may
	// have moved the clock; only a pass that started nothing is quiet.
	return d.running.Load() == 0 && d.dispatched.Load() == before, true
}
