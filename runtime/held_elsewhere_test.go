package runtime_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/clocktest"
)

// holderCoord refuses every lease and reports who holds it.
type holderCoord struct {
	*fakeCoord
	holder runtime.Lease
	err    error
}

func (c *holderCoord) Capabilities() runtime.Capabilities {
	caps := c.fakeCoord.Capabilities()
	caps.LeaseHolderReporter = c
	return caps
}

func (c *holderCoord) LeaseHolder(_ context.Context, id string) (runtime.Lease, bool, error) {
	if c.err != nil {
		return runtime.Lease{}, false, c.err
	}
	h := c.holder
	h.PipelineID = id
	return h, true, nil
}

// heldLines returns the info lines about a lease held elsewhere.
func heldLines(t *testing.T, logs string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(logs), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("bad log line %q: %v", line, err)
		}
		if m["level"] == "INFO" && strings.HasPrefix(m["msg"].(string), "lease held by another worker") {
			out = append(out, m)
		}
	}
	return out
}

// TestHeldLeaseIsLoggedWithHolderOncePerMinute is the replica whose peer
// died holding the lease: it says who holds it and until when, once a
// minute, not once per refused attempt.
func TestHeldLeaseIsLoggedWithHolderOncePerMinute(t *testing.T) {
	clock := clocktest.NewFake(t0)
	expires := t0.Add(4*time.Minute + 30*time.Second)
	coord := &holderCoord{fakeCoord: newFakeCoord(), holder: runtime.Lease{WorkerID: "replica-b", RunNumber: 17, FencingToken: 1741600000000042, ExpiresAt: expires}}
	coord.decide = func(string, int64) (bool, error) { return false, nil }
	logs := &syncBuffer{}
	d := &poolDriver{clock: clock, logs: logs, opts: []runtime.PoolOption{runtime.WithCoordinator(coord)}}
	d.start(t, &runtime.ScheduledPipeline{PipelineID: "consumer", Schedule: runtime.Continuous(), Factory: nopFactory})
	advanceTo(t, clock, d, t0.Add(150*time.Second))
	st := d.status(t, "consumer")
	if st.Skipped < 100 {
		t.Fatalf("skipped = %d, want one per retry interval", st.Skipped)
	}
	lines := heldLines(t, logs.String())
	if len(lines) != 3 { // at 0 s, 60 s and 120 s
		t.Fatalf("%d info lines about the held lease in 150 s, want 3:\n%s", len(lines), logs)
	}
	for i, m := range lines {
		if m["holder"] != "replica-b" || m["holder_fencing_token"] != float64(1741600000000042) || m["pipeline_id"] != "consumer" {
			t.Errorf("line %d does not name the holder: %v", i, m)
		}
		if got, _ := time.Parse(time.RFC3339Nano, m["holder_lease_expires"].(string)); !got.Equal(expires) {
			t.Errorf("line %d: holder_lease_expires = %v, want %v", i, m["holder_lease_expires"], expires)
		}
		if _, ok := m["holder_lease_expires_in"]; !ok {
			t.Errorf("line %d lacks holder_lease_expires_in: %v", i, m)
		}
		if !strings.Contains(m["msg"].(string), "taken over when its lease or its worker record expires") {
			t.Errorf("line %d does not say when the runs come back: %v", i, m["msg"])
		}
	}
	if err := d.stop(t); err != nil {
		t.Fatal(err)
	}
}

// TestHeldLeaseWithoutAReporterStillSaysWhy keeps the once-a-minute line for
// coordinators that cannot name the holder, and says when asking failed.
func TestHeldLeaseWithoutAReporterStillSaysWhy(t *testing.T) {
	for name, wrap := range map[string]func(*fakeCoord) runtime.Coordinator{
		"no reporter": func(c *fakeCoord) runtime.Coordinator { return c },
		"reporter failed": func(c *fakeCoord) runtime.Coordinator {
			return &holderCoord{fakeCoord: c, err: errors.New("redis down")}
		},
	} {
		t.Run(name, func(t *testing.T) {
			clock := clocktest.NewFake(t0)
			fake := newFakeCoord()
			fake.decide = func(string, int64) (bool, error) { return false, nil }
			coord := wrap(fake)
			logs := &syncBuffer{}
			d := &poolDriver{clock: clock, logs: logs, opts: []runtime.PoolOption{runtime.WithCoordinator(coord)}}
			d.start(t, &runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.Continuous(), Factory: nopFactory})
			advanceTo(t, clock, d, t0.Add(30*time.Second))
			lines := heldLines(t, logs.String())
			if len(lines) != 1 {
				t.Fatalf("%d info lines in 30 s, want 1:\n%s", len(lines), logs)
			}
			_, hasHolder := lines[0]["holder"]
			if name == "no reporter" && hasHolder {
				t.Errorf("names a holder it cannot know: %v", lines[0])
			}
			if name == "reporter failed" && (lines[0]["holder"] != "unknown" || lines[0]["holder_error"] != "redis down") {
				t.Errorf("does not say asking failed: %v", lines[0])
			}
			if err := d.stop(t); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// slotHolderCoord refuses every lease and reports a peer holding the slot
// asked for, or, once stuck is set, an older slot it never finished.
type slotHolderCoord struct {
	*fakeCoord
	asked atomic.Int64
	stuck atomic.Bool
}

func (c *slotHolderCoord) Capabilities() runtime.Capabilities {
	caps := c.fakeCoord.Capabilities()
	caps.LeaseHolderReporter = c
	return caps
}

func (c *slotHolderCoord) LeaseHolder(_ context.Context, id string) (runtime.Lease, bool, error) {
	n := c.asked.Load()
	if c.stuck.Load() {
		n = 1
	}
	return runtime.Lease{PipelineID: id, WorkerID: "replica-b", RunNumber: n, FencingToken: 7, ExpiresAt: t0.Add(time.Hour)}, true, nil
}

// TestHeldLeaseForTheSameSlotIsNotAnInfoLinePerSlot: a replica whose peer
// took the slot it asked for (every slot, in a healthy fleet of two or
// more) logs it at debug level; a peer holding an older slot is still said
// at info level.
func TestHeldLeaseForTheSameSlotIsNotAnInfoLinePerSlot(t *testing.T) {
	clock := clocktest.NewFake(t0)
	coord := &slotHolderCoord{fakeCoord: newFakeCoord()}
	coord.decide = func(_ string, n int64) (bool, error) { coord.asked.Store(n); return false, nil }
	logs := &syncBuffer{}
	d := &poolDriver{clock: clock, logs: logs, opts: []runtime.PoolOption{runtime.WithCoordinator(coord)}}
	d.start(t, &runtime.ScheduledPipeline{PipelineID: "hourly", Schedule: runtime.Every(2 * time.Minute), Factory: nopFactory})
	advanceTo(t, clock, d, t0.Add(10*time.Minute))
	if st := d.status(t, "hourly"); st.Skipped < 5 {
		t.Fatalf("skipped = %d, want one per slot", st.Skipped)
	}
	if lines := heldLines(t, logs.String()); len(lines) != 0 {
		t.Fatalf("%d info lines for slots a peer took:\n%s", len(lines), logs)
	}
	coord.stuck.Store(true)
	advanceTo(t, clock, d, t0.Add(13*time.Minute))
	if lines := heldLines(t, logs.String()); len(lines) != 1 || lines[0]["holder_run_number"] != float64(1) {
		t.Fatalf("a peer stuck on an older slot: want one info line naming it, got:\n%s", logs)
	}
	if err := d.stop(t); err != nil {
		t.Fatal(err)
	}
}
