package runtime

import (
	"context"
	"errors"
	"log/slog"
	"os"

	"github.com/agora-etl/agora/internal/redact"
	"github.com/agora-etl/agora/runtime/notify"
)

// WithNotifier tells n when a pipeline stops after MaxConsecutiveErrors
// failed runs (notify.PipelineStopped), when a run's write was refused as
// stale (notify.StaleWriteRefused, for errors matching ErrStaleWrite) and
// when a run fails (notify.RunFailed; a notify.Webhook sends those only
// with OnFailure). Notify is called from the run's goroutine and must not
// block. A notifier that is a prometheus.Collector (notify.Webhook) adds
// its metrics to /metrics. The pool does not close n: hand it over with
// WithShutdownHook(w.Close) so queued events are sent as Run returns.
// Without one, RunMain builds a notify.Webhook from AGORA_NOTIFY_URL.
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

// notifyFromEnv gives the pool a webhook from AGORA_NOTIFY_URL when it has
// no notifier, closed by the pool as Run returns.
func notifyFromEnv(pool *WorkerPool, logger *slog.Logger) error {
	if pool.cfg.notifier != nil {
		return nil
	}
	w, err := notify.FromEnv(nil, notify.Options{Logger: logger})
	if err != nil || w == nil {
		return err
	}
	WithNotifier(w)(&pool.cfg)
	WithShutdownHook(func(ctx context.Context) error { return w.Close(ctx) })(&pool.cfg)
	logger.Info("notifying a webhook", slog.String("url", notify.Shown(os.Getenv(notify.EnvURL))))
	return nil
}
