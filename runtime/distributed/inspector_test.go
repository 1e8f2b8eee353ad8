package distributed

import (
	"context"
	"errors"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime/clocktest"
)

// inspectAt is the fake "now" of the Inspector tests.
var inspectAt = time.Date(2026, 3, 1, 12, 0, 30, 0, time.UTC)

// inspected starts a worker per id of workers on r, each running
// pipelines and publishing schedules, on a fake clock at inspectAt, and
// returns them with an Inspector on the same clock.
func (r *real) inspected(workers []string, pipelines []string, schedules map[string]string) ([]*RedisWorkerCoordinator, *Inspector) {
	r.t.Helper()
	var cs []*RedisWorkerCoordinator
	for _, id := range workers {
		opts := r.options(time.Minute)
		opts.Clock = clocktest.NewFake(inspectAt)
		c, err := NewRedisWorkerCoordinator(opts)
		if err != nil {
			r.t.Fatal(err)
		}
		r.t.Cleanup(func() { _ = c.Close() })
		c.SetSchedules(schedules)
		if err := c.Start(context.Background(), id, pipelines); err != nil {
			r.t.Fatal(err)
		}
		cs = append(cs, c)
	}
	in, err := NewInspector(context.Background(), Options{RedisURL: r.srv.URL(), Clock: clocktest.NewFake(inspectAt)})
	if err != nil {
		r.t.Fatal(err)
	}
	r.t.Cleanup(func() { _ = in.Close() })
	return cs, in
}

func TestInspectorWorkersListsTheLiveOnesSorted(t *testing.T) {
	r := newReal(t)
	_, in := r.inspected([]string{"w2", "w1"}, []string{"a", "b"}, map[string]string{"a": "every=1m0s"})
	ws, err := in.Workers(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 2 || ws[0].ID != "w1" || ws[1].ID != "w2" || !ws[0].StartedAt.Equal(inspectAt) ||
		strings.Join(ws[0].Pipelines, ",") != "a,b" || ws[0].Schedules["a"] != "every=1m0s" {
		t.Fatalf("Workers = %+v", ws)
	}
}

func TestInspectorLeasesSaysWhoHoldsWhatAndWhetherTheyLive(t *testing.T) {
	r := newReal(t)
	cs, in := r.inspected([]string{"w1", "w2"}, []string{"a", "b"}, nil)
	ctx := context.Background()
	lease := mustAcquire(t, cs[0], "a", 100)
	mustAcquire(t, cs[1], "b", 100)
	// w2's record goes (the worker died): its lease stays until it expires.
	if err := r.client(0).Del(ctx, cs[1].keys.worker("w2")).Err(); err != nil {
		t.Fatal(err)
	}

	ls, err := in.Leases(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 2 || ls[0].PipelineID != "a" || !ls[0].Held || ls[0].Holder != "w1" || !ls[0].HolderAlive ||
		ls[0].FencingToken != lease.FencingToken || ls[0].RunNumber != 100 || ls[0].ExpiresIn <= 0 || ls[0].ExpiresIn > time.Minute {
		t.Fatalf("Leases()[0] = %+v, want a held by live w1 with token %d", ls[0], lease.FencingToken)
	}
	if ls[1].PipelineID != "b" || !ls[1].Held || ls[1].Holder != "w2" || ls[1].HolderAlive {
		t.Fatalf("Leases()[1] = %+v, want b held by w2, not alive", ls[1])
	}
	if only, err := in.Leases(ctx, "a"); err != nil || len(only) != 1 || only[0].PipelineID != "a" {
		t.Fatalf(`Leases("a") = %+v, %v`, only, err)
	}
	_, err = in.Leases(ctx, "a", "nope")
	if !errors.Is(err, ErrUnknownPipeline) || !strings.Contains(err.Error(), `"nope"`) || !strings.Contains(err.Error(), "known: a, b") {
		t.Fatalf(`Leases("a", "nope") error = %v, want ErrUnknownPipeline naming a, b`, err)
	}
}

func TestOpenInspectorReadsTheEnvironmentAndTheURLOverride(t *testing.T) {
	r := newReal(t)
	r.started(r.options(time.Minute), "w1")
	ctx := context.Background()
	t.Setenv(envNames.RedisURL, "")
	if _, err := OpenInspector(ctx, ""); !errors.Is(err, ErrNotConfigured) || !strings.Contains(err.Error(), envNames.RedisURL) {
		t.Fatalf("OpenInspector without a URL: %v, want ErrNotConfigured naming %s", err, envNames.RedisURL)
	}
	for _, tc := range []struct{ env, arg string }{{r.srv.URL(), ""}, {"redis://127.0.0.1:1/0", r.srv.URL()}} {
		t.Setenv(envNames.RedisURL, tc.env)
		in, err := OpenInspector(ctx, tc.arg)
		if err != nil {
			t.Fatalf("env %q, arg %q: %v", tc.env, tc.arg, err)
		}
		ws, err := in.Workers(ctx)
		if err != nil || len(ws) != 1 || ws[0].ID != "w1" {
			t.Fatalf("env %q, arg %q: Workers = %+v, %v", tc.env, tc.arg, ws, err)
		}
		if err := in.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := in.Workers(ctx); !errors.Is(err, ErrClosed) {
			t.Fatalf("Workers after Close: %v, want ErrClosed", err)
		}
	}

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	if _, err := OpenInspector(ctx, "redis://:s3cret@"+addr+"/0"); err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("unreachable Redis: %v, want an error without the password", err)
	}
}

func TestInspectorPollIntervalIsTheControlPoll(t *testing.T) {
	if (&Inspector{}).PollInterval() != ControlPollInterval {
		t.Fatal("PollInterval is not ControlPollInterval")
	}
}
