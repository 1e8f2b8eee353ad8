package runtime

import (
	"errors"

	"github.com/agora-etl/agora/internal/redact"
	"github.com/agora-etl/agora/runtime/notify"
)

// WithNotifier tells n when a pipeline stops after MaxConsecutiveErrors
// failed runs (notify.PipelineStopped), when a run's write was refused as
// stale (notify.StaleWriteRefused, for errors matching ErrStaleWrite),
// when a slot missed its ScheduledPipeline.Deadline
// (notify.DeadlineMissed), when a slot was skipped because an upstream
// (ScheduledPipeline.After) had not completed it (notify.UpstreamNotCompleted)
// and when a run fails (notify.RunFailed; a notify.Webhook sends those
// only with OnFailure). Notify is called from the run's goroutine (the
// deadline watch's, for DeadlineMissed; an executor's, for
// UpstreamNotCompleted) and must not block. The pool's metrics (runtime/metrics) serve a notifier's
// counts (notify.Webhook's Stats) at /metrics. The pool does not close n:
// hand it over with WithShutdownHook(w.Close) so queued events are sent as
// Run returns.
// Without one, worker.Main builds a notify.Webhook from AGORA_NOTIFY_URL.
func WithNotifier(n notify.Notifier) PoolOption {
	return func(c *poolConfig) { c.notifier = n }
}

// notifyRunFailed tells the notifier about a failed run: a stale write and
// a failure. Only failed runs get here, so a run that succeeds costs
// nothing. The count of failures includes this one, which the status
// does not hold yet.
func (r *runner) notifyRunFailed(lease Lease, runErr error) {
	n := r.env.notifier
	if n == nil {
		return
	}
	r.mu.Lock()
	failures := int(r.st.consecutive) + 1
	r.mu.Unlock()
	ev := notify.Event{PipelineID: r.id(), WorkerID: r.env.workerID, RunNumber: lease.RunNumber,
		FencingToken: lease.FencingToken, ConsecutiveErrors: failures,
		Error: redact.Text(runErr.Error()), Time: r.now()}
	if errors.Is(runErr, ErrStaleWrite) {
		ev.Kind = notify.StaleWriteRefused
		n.Notify(ev)
	}
	ev.Kind = notify.RunFailed
	n.Notify(ev)
}

// notifyStopped tells the notifier that the pipeline stopped after too
// many failed runs.
func (r *runner) notifyStopped(runErr error, failures int) {
	n := r.env.notifier
	if n == nil {
		return
	}
	n.Notify(notify.Event{Kind: notify.PipelineStopped, PipelineID: r.id(), WorkerID: r.env.workerID,
		ConsecutiveErrors: failures, Error: redact.Text(runErr.Error()), Time: r.now()})
}
