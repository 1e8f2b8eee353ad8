package config

import (
	"context"
	"math"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/notify"
)

// Notify is the [worker.notify] table: the webhook told when a pipeline
// stops after max_consecutive_errors, when a stale write is refused and,
// with on_failure, when any run fails (see runtime/notify). Without the
// table a worker still notifies when AGORA_NOTIFY_URL is set.
type Notify struct {
	// URL receives the POSTed JSON events; "" means no table.
	URL string
	// OnFailure also sends an event for every failed run (default false).
	OnFailure bool
	// Attempts bounds the tries per event (0: notify.DefaultAttempts).
	Attempts int
	// Timeout bounds one try (0: notify.DefaultTimeout).
	Timeout time.Duration
}

var notifyKeys = []string{"url", "on_failure", "attempts", "timeout"}

func (d *decoder) notify(m map[string]any, at path) Notify {
	d.knownKeys(m, at, notifyKeys)
	var n Notify
	if u, ok := d.str(m, at, "url"); ok {
		if err := notify.CheckURL(u); err != nil {
			d.atValue(at.child("url"), "%s: %v", at.child("url"), err)
		}
		n.URL = u
	} else if _, has := m["url"]; !has {
		d.atKey(at, "%s: url is missing: the webhook to POST events to", at)
	}
	if b, ok := d.boolean(m, at, "on_failure"); ok {
		n.OnFailure = b
	}
	if a, ok := d.integer(m, at, "attempts", 1, math.MaxInt32); ok {
		n.Attempts = a
	}
	if t, ok := d.duration(m, at, "timeout", false); ok {
		n.Timeout = t
	}
	return n
}

// notifyOptions returns the pool options of [worker.notify]: the webhook
// and the shutdown hook that sends what is queued as the pool stops.
func (f *File) notifyOptions() ([]runtime.PoolOption, error) {
	n := f.Worker.Notify
	if n.URL == "" {
		return nil, nil
	}
	w, err := notify.New(notify.Options{URL: n.URL, OnFailure: n.OnFailure, Attempts: n.Attempts, Timeout: n.Timeout})
	if err != nil {
		return nil, err
	}
	return []runtime.PoolOption{runtime.WithNotifier(w),
		runtime.WithShutdownHook(func(ctx context.Context) error { return w.Close(ctx) })}, nil
}
