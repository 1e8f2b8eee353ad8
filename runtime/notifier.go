package runtime

import (
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
