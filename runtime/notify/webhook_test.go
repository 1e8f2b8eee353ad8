package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// server records the events POSTed to it; status answers each request
// (by its number, from 1).
type server struct {
	*httptest.Server
	mu     sync.Mutex
	events []Event
	tries  atomic.Int32
}

func newServer(t *testing.T, status func(n int32) int) *server {
	s := &server{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := s.tries.Add(1)
		if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" {
			t.Errorf("request %s with Content-Type %q", r.Method, r.Header.Get("Content-Type"))
		}
		var ev Event
		if err := json.NewDecoder(r.Body).Decode(&ev); err != nil {
			t.Errorf("body: %v", err)
		}
		code := status(n)
		if code < 300 {
			s.mu.Lock()
			s.events = append(s.events, ev)
			s.mu.Unlock()
		}
		w.WriteHeader(code)
	}))
	t.Cleanup(s.Close)
	return s
}

func quick(url string, logs io.Writer) Options {
	return Options{URL: url, Backoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond, Timeout: time.Second,
		Logger: slog.New(slog.NewTextHandler(logs, nil))}
}

func closeNow(t *testing.T, w *Webhook) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := w.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

func TestWebhookPostsEventsAsJSON(t *testing.T) {
	srv := newServer(t, func(int32) int { return http.StatusNoContent })
	w, err := New(quick(srv.URL+"/hooks/secret-token", io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2025, 3, 10, 10, 0, 0, 0, time.UTC)
	w.Notify(Event{Kind: PipelineStopped, PipelineID: "orders", WorkerID: "w1", ConsecutiveErrors: 5, Error: "boom", Time: at})
	w.Notify(Event{Kind: RunFailed, PipelineID: "orders"}) // not wanted without OnFailure
	w.Notify(Event{Kind: StaleWriteRefused, PipelineID: "orders", RunNumber: 7, FencingToken: 41, Time: at})
	closeNow(t, w)
	if len(srv.events) != 2 {
		t.Fatalf("server got %d events, want the stop and the stale write: %+v", len(srv.events), srv.events)
	}
	if got := srv.events[0]; got.Kind != PipelineStopped || got.PipelineID != "orders" || got.WorkerID != "w1" ||
		got.ConsecutiveErrors != 5 || got.Error != "boom" || !got.Time.Equal(at) {
		t.Errorf("first event %+v", got)
	}
	if got := srv.events[1]; got.Kind != StaleWriteRefused || got.RunNumber != 7 || got.FencingToken != 41 {
		t.Errorf("second event %+v", got)
	}
	if st := w.Stats(); st.Sent != 2 || st.Failed != 0 || st.Dropped != 0 {
		t.Errorf("stats %+v", st)
	}
	// The JSON names are the contract receivers read.
	raw, _ := json.Marshal(Event{Kind: RunFailed, PipelineID: "p", Time: at})
	for _, key := range []string{`"event":"run_failed"`, `"pipeline_id":"p"`, `"time":"2025-03-10T10:00:00Z"`} {
		if !strings.Contains(string(raw), key) {
			t.Errorf("%s lacks %s", raw, key)
		}
	}
}

func TestWebhookRetriesAfterServerErrors(t *testing.T) {
	srv := newServer(t, func(n int32) int {
		if n <= 2 {
			return http.StatusInternalServerError
		}
		return http.StatusOK
	})
	o := quick(srv.URL, io.Discard)
	o.OnFailure = true
	w, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	w.Notify(Event{Kind: RunFailed, PipelineID: "p"})
	closeNow(t, w)
	if srv.tries.Load() != 3 || len(srv.events) != 1 {
		t.Fatalf("%d tries, %d events delivered; want 3 tries, the last delivered", srv.tries.Load(), len(srv.events))
	}
	if st := w.Stats(); st.Sent != 1 || st.Retries != 2 || st.Failed != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestWebhookCountsAndLogsFailuresWithoutTheURL(t *testing.T) {
	srv := newServer(t, func(int32) int { return http.StatusBadGateway })
	var logs bytes.Buffer
	o := quick(srv.URL+"/services/T000/B000/very-secret", &logs)
	o.Attempts = 3
	w, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	w.Notify(Event{Kind: PipelineStopped, PipelineID: "p"})
	closeNow(t, w)
	if srv.tries.Load() != 3 {
		t.Errorf("%d tries, want Attempts = 3", srv.tries.Load())
	}
	if st := w.Stats(); st.Failed != 1 || st.Sent != 0 {
		t.Errorf("stats %+v", st)
	}
	if !strings.Contains(logs.String(), "webhook failed") || !strings.Contains(logs.String(), "502") {
		t.Errorf("no failure logged: %s", logs.String())
	}
	if strings.Contains(logs.String(), "very-secret") {
		t.Errorf("the log shows the URL's path: %s", logs.String())
	}

	// A 4xx is the receiver refusing the event: no retry.
	refused := newServer(t, func(int32) int { return http.StatusBadRequest })
	w, _ = New(quick(refused.URL, io.Discard))
	w.Notify(Event{Kind: PipelineStopped})
	closeNow(t, w)
	if refused.tries.Load() != 1 || w.Stats().Failed != 1 {
		t.Errorf("400: %d tries, stats %+v; want one try, failed", refused.tries.Load(), w.Stats())
	}

	// Nobody listening: transport errors are retried, then counted, and
	// the log names only scheme and host.
	dead := httptest.NewServer(http.NotFoundHandler())
	url := dead.URL + "/hook/dead-secret"
	dead.Close()
	logs.Reset()
	o = quick(url, &logs)
	o.Attempts = 2
	w, _ = New(o)
	w.Notify(Event{Kind: PipelineStopped})
	closeNow(t, w)
	if st := w.Stats(); st.Failed != 1 || st.Retries != 1 {
		t.Errorf("dead server: stats %+v", st)
	}
	if strings.Contains(logs.String(), "dead-secret") {
		t.Errorf("the log shows the URL's path: %s", logs.String())
	}
}

func TestWebhookNeverBlocksOnAHangingServer(t *testing.T) {
	release := make(chan struct{})
	hang := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer hang.Close()
	defer close(release)
	o := quick(hang.URL, io.Discard)
	o.QueueSize, o.Timeout = 2, time.Minute
	w, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	for range 10 {
		w.Notify(Event{Kind: PipelineStopped})
	}
	if took := time.Since(start); took > time.Second {
		t.Fatalf("10 Notify calls took %v with the server hanging", took)
	}
	// One event is being sent, two wait, the rest found the queue full.
	if d := w.Stats().Dropped; d < 7 {
		t.Errorf("dropped %d, want at least 7 of 10 with a queue of 2", d)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := w.Close(ctx); err == nil {
		t.Error("Close returned nil while the server hangs; want the context's error")
	}
	if st := w.Stats(); st.Sent != 0 || st.Dropped+st.Failed != 10 {
		t.Errorf("after Close: %+v; want every event dropped or failed", st)
	}
	w.Notify(Event{Kind: PipelineStopped}) // after Close: dropped, no panic
}

func TestNewRejectsBadURLsWithoutShowingThem(t *testing.T) {
	for _, raw := range []string{"", "ftp://host/x", "hooks.example.com/x", "http://user:hunter2@/x"} {
		_, err := New(Options{URL: raw})
		if err == nil {
			t.Errorf("New(%q) accepted it", raw)
			continue
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("error shows the password: %v", err)
		}
	}
	if got := Shown("https://user:pw@hooks.example.com/services/T/B/secret?token=x"); got != "https://hooks.example.com/…" {
		t.Errorf("Shown = %q", got)
	}
}

func TestFromEnv(t *testing.T) {
	env := map[string]string{}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	if w, err := FromEnv(lookup, Options{}); w != nil || err != nil {
		t.Fatalf("unset: %v, %v; want no webhook", w, err)
	}
	env[EnvURL] = "http://127.0.0.1:1/hook"
	env[EnvOnFailure] = "maybe"
	if _, err := FromEnv(lookup, Options{}); err == nil || !strings.Contains(err.Error(), EnvOnFailure) {
		t.Fatalf("bad %s: %v", EnvOnFailure, err)
	}
	env[EnvOnFailure] = "true"
	w, err := FromEnv(lookup, Options{})
	if err != nil || w == nil || !w.o.OnFailure {
		t.Fatalf("FromEnv = %v, %v", w, err)
	}
	closeNow(t, w)
	env[EnvURL] = "not a url"
	if _, err := FromEnv(lookup, Options{}); err == nil || !strings.Contains(err.Error(), EnvURL) {
		t.Fatalf("bad URL: %v", err)
	}
}

func TestWebhookDoesNotFollowRedirects(t *testing.T) {
	for _, code := range []int{http.StatusMovedPermanently, http.StatusFound, http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
		var elsewhere atomic.Int32
		target := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			elsewhere.Add(1)
			w.WriteHeader(http.StatusNoContent)
		}))
		redirecting := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, target.URL+"/other", code)
		}))
		var logs bytes.Buffer
		o := quick(redirecting.URL+"/hook", &logs)
		o.Attempts = 3
		// A caller's client that would follow redirects is not obeyed either.
		o.Client = &http.Client{}
		w, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		w.Notify(Event{Kind: PipelineStopped, PipelineID: "p"})
		closeNow(t, w)
		redirecting.Close()
		target.Close()
		if n := elsewhere.Load(); n != 0 {
			t.Errorf("%d: the event was POSTed %d times to the redirect's target", code, n)
		}
		if st := w.Stats(); st.Failed != 1 || st.Sent != 0 || st.Retries != 0 {
			t.Errorf("%d: stats %+v, want one failed delivery without retries", code, st)
		}
		if want := http.StatusText(code); !strings.Contains(logs.String(), want) {
			t.Errorf("%d: the failure does not show the status %q: %s", code, want, logs.String())
		}
	}
}

// A missed deadline is sent by default, like a stop: it is what the
// deadline was set for, not one failed run among many.
func TestWebhookSendsMissedDeadlinesWithoutOnFailure(t *testing.T) {
	srv := newServer(t, func(int32) int { return http.StatusNoContent })
	w, err := New(quick(srv.URL, io.Discard))
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 3, 2, 15, 0, 0, time.UTC)
	msg := "slot 2026-12-03T02:00:00Z has not succeeded within 15m0s of its fire time"
	w.Notify(Event{Kind: DeadlineMissed, PipelineID: "nightly", WorkerID: "w1", RunNumber: 1796263200,
		Deadline: "15m0s", Error: msg, Time: at})
	closeNow(t, w)
	if len(srv.events) != 1 {
		t.Fatalf("server got %d events, want the missed deadline", len(srv.events))
	}
	if got := srv.events[0]; got.Kind != DeadlineMissed || got.RunNumber != 1796263200 || got.Deadline != "15m0s" ||
		got.Error != msg || !got.Time.Equal(at) {
		t.Errorf("event %+v", got)
	}
	raw, _ := json.Marshal(srv.events[0])
	for _, key := range []string{`"event":"deadline_missed"`, `"run_number":1796263200`, `"deadline":"15m0s"`} {
		if !strings.Contains(string(raw), key) {
			t.Errorf("%s lacks %s", raw, key)
		}
	}
}
