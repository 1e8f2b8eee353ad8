package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agora-etl/agora/internal/redact"
)

// Defaults of Options.
const (
	DefaultAttempts   = 5
	DefaultBackoff    = time.Second
	DefaultMaxBackoff = 30 * time.Second
	DefaultTimeout    = 10 * time.Second
	DefaultQueueSize  = 100
)

// ErrInvalidURL is wrapped by New's error for a URL that is not http(s).
var ErrInvalidURL = errors.New("notify: invalid webhook URL")

// Options configure a Webhook. Zero values take the defaults.
type Options struct {
	// URL receives the POSTs; http or https.
	URL string
	// OnFailure sends a RunFailed event for every failed run, not only
	// stops, stale writes and missed deadlines (default false).
	OnFailure bool
	// Attempts bounds the tries per event (default DefaultAttempts).
	Attempts int
	// Backoff is the wait after the first failed try, doubling after each
	// further one up to MaxBackoff (defaults DefaultBackoff, DefaultMaxBackoff).
	Backoff, MaxBackoff time.Duration
	// Timeout bounds one try (default DefaultTimeout).
	Timeout time.Duration
	// QueueSize bounds the events waiting to be sent (default
	// DefaultQueueSize); an event that finds it full is dropped.
	QueueSize int
	// Client sends the requests (default a new http.Client). The webhook
	// uses a copy that never follows redirects: a 3xx is a failed delivery
	// with its status, since re-POSTing an event to wherever the receiver
	// points would send it somewhere the operator did not configure.
	Client *http.Client
	// Logger logs failures (default slog.Default()).
	Logger *slog.Logger
}

// Webhook POSTs events to a URL from one goroutine. It counts what it
// sent, gave up and dropped (Stats); a pool given it with
// runtime.WithNotifier and runtime/metrics serves them on /metrics as
// agora_notify_sent_total, agora_notify_failures_total (events given up
// after every attempt) and agora_notify_dropped_total (events dropped on a
// full queue or after Close).
type Webhook struct {
	o        Options
	shown    string // the URL as logs show it
	queue    chan Event
	stop     chan struct{} // closed by Close past its deadline: no more tries
	stopOnce sync.Once
	done     chan struct{} // closed when the sender has returned
	once     sync.Once
	mu       sync.RWMutex // guards closed against Notify sending on queue
	closed   bool

	sent, failed, dropped, retries atomic.Uint64
}

// CheckURL returns an error wrapping ErrInvalidURL unless raw is an
// http or https URL with a host. The error shows raw as Shown does.
func CheckURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%w %q: want http(s)://host/path", ErrInvalidURL, Shown(raw))
	}
	return nil
}

// New checks o and starts the webhook's sender.
func New(o Options) (*Webhook, error) {
	if err := CheckURL(o.URL); err != nil {
		return nil, err
	}
	if o.Attempts <= 0 {
		o.Attempts = DefaultAttempts
	}
	if o.Backoff <= 0 {
		o.Backoff = DefaultBackoff
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = DefaultMaxBackoff
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.QueueSize <= 0 {
		o.QueueSize = DefaultQueueSize
	}
	if o.Client == nil {
		o.Client = &http.Client{}
	}
	noRedirects := *o.Client
	noRedirects.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	o.Client = &noRedirects
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	w := &Webhook{o: o, shown: Shown(o.URL), queue: make(chan Event, o.QueueSize),
		stop: make(chan struct{}), done: make(chan struct{})}
	go w.loop()
	return w, nil
}

// Shown is raw as logs and errors show it: scheme and host, with no user
// part, path or query, since a webhook's secret is often in its path.
func Shown(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return redact.Text(raw)
	}
	return u.Scheme + "://" + u.Host + "/…"
}

// Notify queues ev unless its kind is not wanted; it never blocks. A full
// queue, or a closed webhook, drops ev and counts it.
func (w *Webhook) Notify(ev Event) {
	if ev.Kind == RunFailed && !w.o.OnFailure {
		return
	}
	w.mu.RLock()
	defer w.mu.RUnlock()
	if w.closed {
		w.dropped.Add(1)
		return
	}
	select {
	case w.queue <- ev:
	default:
		w.dropped.Add(1)
	}
}

// Close stops taking events and sends the queued ones until ctx is done;
// what is left then is dropped. It returns ctx's error when it gave up.
func (w *Webhook) Close(ctx context.Context) error {
	w.once.Do(func() {
		w.mu.Lock()
		w.closed = true
		close(w.queue)
		w.mu.Unlock()
	})
	select {
	case <-w.done:
		return nil
	case <-ctx.Done():
		w.cancelWaits()
		<-w.done
		return ctx.Err()
	}
}

func (w *Webhook) cancelWaits() { w.stopOnce.Do(func() { close(w.stop) }) }

// Stats are the webhook's counts.
type Stats struct {
	// Sent counts events the server accepted (2xx).
	Sent uint64
	// Failed counts events given up after every attempt.
	Failed uint64
	// Dropped counts events dropped on a full queue or after Close.
	Dropped uint64
	// Retries counts tries after the first.
	Retries uint64
}

// Stats returns the counts so far; runtime/metrics serves them as
// agora_notify_*, so the webhook itself links no metrics library.
func (w *Webhook) Stats() Stats {
	return Stats{Sent: w.sent.Load(), Failed: w.failed.Load(), Dropped: w.dropped.Load(), Retries: w.retries.Load()}
}

func (w *Webhook) loop() {
	defer close(w.done)
	for ev := range w.queue {
		select {
		case <-w.stop:
			w.dropped.Add(1)
			continue
		default:
		}
		w.deliver(ev)
	}
}

// deliver tries to send ev up to Attempts times.
func (w *Webhook) deliver(ev Event) {
	body, err := json.Marshal(ev)
	if err != nil {
		w.failed.Add(1)
		w.o.Logger.Error("notify: cannot encode the event", slog.String("event", string(ev.Kind)), slog.Any("error", err))
		return
	}
	wait := w.o.Backoff
	for attempt := 1; ; attempt++ {
		retry, err := w.post(body)
		if err == nil {
			w.sent.Add(1)
			return
		}
		if !retry || attempt >= w.o.Attempts {
			w.failed.Add(1)
			w.o.Logger.Warn("notify: webhook failed; event dropped", slog.String("url", w.shown),
				slog.String("event", string(ev.Kind)), slog.String("pipeline_id", ev.PipelineID),
				slog.Int("attempts", attempt), slog.String("error", err.Error()))
			return
		}
		w.retries.Add(1)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-w.stop:
			t.Stop()
			w.dropped.Add(1)
			return
		}
		wait = min(2*wait, w.o.MaxBackoff)
	}
}

// post sends one try and says whether a failure is worth retrying:
// transport errors, 5xx and 429 are; other answers, 3xx included, are not.
func (w *Webhook) post(body []byte) (retry bool, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), w.o.Timeout)
	defer cancel()
	go func() {
		select {
		case <-w.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.o.URL, bytes.NewReader(body))
	if err != nil {
		return false, errors.New("cannot build the request")
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "agora-notify")
	resp, err := w.o.Client.Do(req)
	if err != nil {
		// A *url.Error quotes the whole URL; only its cause is shown.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return true, fmt.Errorf("POST %s: %s", w.shown, redact.Text(err.Error()))
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return false, nil
	case resp.StatusCode >= 500 || resp.StatusCode == http.StatusTooManyRequests:
		return true, fmt.Errorf("POST %s: %s", w.shown, resp.Status)
	default:
		return false, fmt.Errorf("POST %s: %s", w.shown, resp.Status)
	}
}
