package distributed

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
)

func TestLeaseHolderNamesTheOtherWorkerAndExpiry(t *testing.T) {
	u := newUnit(t)
	a := u.started(u.options(), "worker-a")
	b := u.started(u.options(), "worker-b")
	if _, held, err := b.LeaseHolder(context.Background(), "p"); held || err != nil {
		t.Fatalf("LeaseHolder before any lease = %v, %v", held, err)
	}
	lease := mustAcquire(t, a, "p", 1741600000)
	u.advance(5 * time.Second) // before the first renewal, at TTL/3
	got, held, err := b.LeaseHolder(context.Background(), "p")
	if err != nil || !held {
		t.Fatalf("LeaseHolder = %v, %v", held, err)
	}
	if got.WorkerID != "worker-a" || got.FencingToken != lease.FencingToken || got.RunNumber != 1741600000 || got.PipelineID != "p" {
		t.Fatalf("LeaseHolder = %+v, want worker-a's lease %+v", got, lease)
	}
	if want := u.clock.Now().Add(25 * time.Second); !got.ExpiresAt.Equal(want) {
		t.Fatalf("ExpiresAt = %v, want %v (30 s TTL, 5 s gone)", got.ExpiresAt, want)
	}
	if err := a.ReleaseLease(context.Background(), "p"); err != nil {
		t.Fatal(err)
	}
	if _, held, err := b.LeaseHolder(context.Background(), "p"); held || err != nil {
		t.Fatalf("LeaseHolder after release = %v, %v", held, err)
	}
}

func TestLeaseHolderInQuorumMode(t *testing.T) {
	r := newQuorumRig(t, 3)
	a := r.started(r.options(30*time.Second), "worker-a")
	b := r.started(r.options(30*time.Second), "worker-b")
	lease := mustAcquire(t, a, "p", runtime.RunNumberAuto)
	before := time.Now()
	got, held, err := b.LeaseHolder(context.Background(), "p")
	if err != nil || !held {
		t.Fatalf("LeaseHolder = %v, %v", held, err)
	}
	if got.WorkerID != "worker-a" || got.FencingToken != lease.FencingToken {
		t.Fatalf("LeaseHolder = %+v, want worker-a's lease %+v", got, lease)
	}
	if !got.ExpiresAt.After(before) || got.ExpiresAt.After(before.Add(30*time.Second+time.Second)) {
		t.Fatalf("ExpiresAt = %v, want within the TTL after %v", got.ExpiresAt, before)
	}
}

// TestPoolLogsTheDeadHolder is the survivor of a replica killed while
// holding a lease: the lease is in Redis under the dead replica's name, and
// the pool's log says who holds it and when it expires.
func TestPoolLogsTheDeadHolder(t *testing.T) {
	r := newReal(t)
	// What a replica killed mid-run leaves behind: its lease, which nobody
	// renews or releases.
	key := keys{prefix: DefaultKeyPrefix}.lease("p")
	if err := r.client(0).RPush(ctx, key, "1741600000000042 1741600000000042 replica-dead#9f2c01aa").Err(); err != nil {
		t.Fatal(err)
	}
	if err := r.client(0).PExpire(ctx, key, time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	// And its registry record, until it expires (then the lease is taken
	// over: takeover.go).
	record := keys{prefix: DefaultKeyPrefix}.worker("replica-dead")
	if err := r.client(0).HSet(ctx, record, "id", "replica-dead").Err(); err != nil {
		t.Fatal(err)
	}
	if err := r.client(0).PExpire(ctx, record, time.Minute).Err(); err != nil {
		t.Fatal(err)
	}

	logs := &logBuffer{}
	opts := r.options(time.Minute)
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	coord, err := NewRedisWorkerCoordinator(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = coord.Close() })
	pool := runtime.NewWorkerPool(runtime.WithCoordinator(coord), runtime.WithWorkerID("replica-alive"), runtime.WithSignalHandling(false),
		runtime.WithLogger(slog.New(slog.NewTextHandler(logs, nil))))
	pool.Register(&runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.Continuous(), Factory: func(context.Context) (runtime.Pipeline, error) {
		return runtime.PipelineFunc(func(context.Context) error { return nil }), nil
	}})
	runCtx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- pool.Run(runCtx) }()
	deadline := time.After(10 * time.Second)
	for !strings.Contains(logs.String(), "lease held by another worker") {
		select {
		case <-deadline:
			t.Fatalf("no log about the held lease:\n%s", logs)
		case <-time.After(5 * time.Millisecond):
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	line := logs.String()
	for _, want := range []string{"holder=replica-dead ", "holder_fencing_token=1741600000000042", "holder_lease_expires=", "holder_lease_expires_in=", "taken over when its lease or its worker record expires"} {
		if !strings.Contains(line, want) {
			t.Errorf("log lacks %q:\n%s", want, line)
		}
	}
}

// Rule: a dead holder's lease is taken over when its worker record expires
// if that comes before the lease's own expiry (takeover.go), so LeaseHolder's
// ExpiresAt, and the pool's holder_lease_expires_in, is the sooner of the two.
func TestLeaseHolderExpiresWhenTheHolderRecordDoesIfThatIsSooner(t *testing.T) {
	for _, tc := range []struct {
		name            string
		record          time.Duration // 0: no record
		want            time.Duration
		recordWritten   bool
		recordNoExpires bool
	}{
		{name: "record expires first", record: 20 * time.Second, want: 20 * time.Second, recordWritten: true},
		{name: "lease expires first", record: 3 * time.Minute, want: time.Minute, recordWritten: true},
		{name: "record gone", want: 0},
		{name: "record without expiry", want: time.Minute, recordWritten: true, recordNoExpires: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := newUnit(t)
			b := u.started(u.options(), "worker-b")
			k := keys{prefix: DefaultKeyPrefix}
			u.mr.RPush(k.lease("p"), "1741600000000042 1741600000000042 replica-dead#9f2c01aa")
			u.mr.SetTTL(k.lease("p"), time.Minute)
			if tc.recordWritten {
				u.mr.HSet(k.worker("replica-dead"), "id", "replica-dead")
				if !tc.recordNoExpires {
					u.mr.SetTTL(k.worker("replica-dead"), tc.record)
				}
			}
			got, held, err := b.LeaseHolder(context.Background(), "p")
			if err != nil || !held {
				t.Fatalf("LeaseHolder = %v, %v", held, err)
			}
			if want := u.clock.Now().Add(tc.want); !got.ExpiresAt.Equal(want) {
				t.Fatalf("ExpiresAt in %v, want in %v", got.ExpiresAt.Sub(u.clock.Now()), tc.want)
			}
		})
	}
}
