package distributed

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestRequestContextDeadline(t *testing.T) {
	before := time.Now()
	c := newRequestContext(context.Background(), time.Minute)
	d, ok := c.Deadline()
	if !ok || d.Before(before.Add(time.Minute)) || d.After(time.Now().Add(time.Minute)) {
		t.Fatalf("Deadline() = %v, %v; want about a minute from now", d, ok)
	}
	if err := c.Err(); err != nil {
		t.Fatalf("Err() before the deadline = %v", err)
	}

	// A caller's earlier deadline wins.
	parent, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	want, _ := parent.Deadline()
	if d, _ := newRequestContext(parent, time.Minute).Deadline(); !d.Equal(want) {
		t.Fatalf("Deadline() = %v; want the parent's %v", d, want)
	}
	// A later one does not.
	late, cancelLate := context.WithTimeout(context.Background(), time.Hour)
	defer cancelLate()
	if d, _ := newRequestContext(late, time.Minute).Deadline(); d.After(time.Now().Add(time.Minute)) {
		t.Fatalf("Deadline() = %v; want the request's own minute", d)
	}
}

func TestRequestContextErr(t *testing.T) {
	if err := newRequestContext(context.Background(), -time.Millisecond).Err(); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Err() past the deadline = %v; want DeadlineExceeded", err)
	}
	parent, cancel := context.WithCancel(context.Background())
	c := newRequestContext(parent, time.Minute)
	cancel()
	if err := c.Err(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Err() after the parent was cancelled = %v; want Canceled", err)
	}
	select {
	case <-c.Done():
	default:
		t.Fatal("Done() not closed after the parent was cancelled")
	}
}

func TestRequestContextKeepsValues(t *testing.T) {
	type key struct{}
	parent := context.WithValue(context.Background(), key{}, "v")
	if got := newRequestContext(parent, time.Minute).Value(key{}); got != "v" {
		t.Fatalf("Value() = %v; want the parent's", got)
	}
}

// TestOpContextPerBackend pins which backends get the timer-free context: a
// quorum backend waits on Done across nodes, which a requestContext never
// closes at its deadline.
func TestOpContextPerBackend(t *testing.T) {
	single, err := NewRedisWorkerCoordinator(Options{RedisURL: "redis://127.0.0.1:1"})
	if err != nil {
		t.Fatal(err)
	}
	defer single.Close()
	ctx, cancel := single.opContext(context.Background())
	cancel()
	if _, ok := ctx.(requestContext); !ok {
		t.Errorf("single-node opContext is a %T; want a requestContext", ctx)
	}

	quorum, err := NewRedisWorkerCoordinator(Options{
		RedisURL:         "redis://127.0.0.1:1",
		RedlockRedisURLs: []string{"redis://127.0.0.1:2", "redis://127.0.0.1:3", "redis://127.0.0.1:4"},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer quorum.Close()
	ctx, cancel = quorum.opContext(context.Background())
	defer cancel()
	if _, ok := ctx.(requestContext); ok {
		t.Error("quorum opContext is a requestContext; its fan-out needs Done to close at the deadline")
	}
	if _, ok := ctx.Deadline(); !ok {
		t.Error("quorum opContext has no deadline")
	}
}
