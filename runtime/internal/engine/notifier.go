package engine

import (
	"errors"

	"github.com/agora-etl/agora/internal/redact"
	"github.com/agora-etl/agora/runtime/notify"
)

// notifyRunFailed tells the notifier about a failed run: a stale write and
// a failure. Only failed runs get here, so a run that succeeds costs
// nothing. The count of failures includes this one, which the status
// does not hold yet.
func (r *Runner) notifyRunFailed(lease Lease, runErr error) {
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
func (r *Runner) notifyStopped(runErr error, failures int) {
	n := r.env.notifier
	if n == nil {
		return
	}
	n.Notify(notify.Event{Kind: notify.PipelineStopped, PipelineID: r.id(), WorkerID: r.env.workerID,
		ConsecutiveErrors: failures, Error: redact.Text(runErr.Error()), Time: r.now()})
}
