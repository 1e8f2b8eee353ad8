package distributed

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/agora-etl/agora/runtime"
)

// A slot more than the lease-ahead bound after the Redis server's time is
// refused, asked at once or ahead, on one server, a Cluster and a Redlock
// quorum (its primary decides); a slot that has begun is granted, and a
// counted run is no slot and is not held to the clock.

// checkFutureRefused asks c for a slot five seconds after the server's
// time (as a worker whose clock is 5 s ahead would), then for one that
// has begun.
func checkFutureRefused(t *testing.T, c *RedisWorkerCoordinator, pipelineID string) {
	t.Helper()
	future := time.Now().Unix() + 5
	if ok, err := c.TryAcquireLease(ctx, pipelineID, slotRun(future)); ok || err != nil {
		t.Fatalf("slot 5 s ahead of the server: %v, %v; want refused (false, nil)", ok, err)
	}
	r := c.TryAcquireLeases(ctx, []runtime.LeaseRequest{{PipelineID: pipelineID, RunNumber: slotRun(future), Ahead: true}})[0]
	if r.Acquired || !errors.Is(r.Err, runtime.ErrAskAtSlot) {
		t.Fatalf("slot 5 s ahead asked ahead: %+v; want ErrAskAtSlot", r)
	}
	if _, held := c.CurrentLease(pipelineID); held {
		t.Fatal("a refused future slot left a lease held")
	}
	if got := c.stats.futureSlots.Load(); got != 1 {
		t.Errorf("future slots counted: %d; want 1", got)
	}
	// A counted run with a large number is not a time.
	mustAcquireCounted(t, c, pipelineID, future+3600)
	if err := c.ReleaseLease(ctx, pipelineID); err != nil {
		t.Fatal(err)
	}
	mustAcquire(t, c, pipelineID, time.Now().Unix())
}

func TestClockSkewFutureSlotRefusedOnOneServer(t *testing.T) {
	r := newReal(t)
	c := r.started(r.options(10*time.Second), "ahead")
	checkFutureRefused(t, c, "p")
	if n := r.logs.count("so this worker's clock is ahead"); n != 1 {
		t.Errorf("future-slot warnings: %d; want 1\n%s", n, r.logs)
	}
}

func TestClockSkewFutureSlotRefusedOnACluster(t *testing.T) {
	r := newClusterReal(t)
	c := r.started(r.options(10*time.Second), "ahead", []string{"p"})
	checkFutureRefused(t, c, "p")
}

func TestClockSkewFutureSlotRefusedOnRedlock(t *testing.T) {
	rig := newQuorumRig(t, 3)
	c := rig.started(rig.options(10*time.Second), "ahead")
	checkFutureRefused(t, c, "p")
}

// The offset from the server's clock is measured and exported. A real
// server's clock is this machine's, so the offset is near zero and nothing
// is warned of; the warning itself is tested with the shifted-clock
// workers of cli's clock-skew fleet.
func TestClockOffsetMeasuredAgainstTheServer(t *testing.T) {
	r := newReal(t)
	opts := r.options(10 * time.Second)
	opts.Clock = runtime.SystemClock{}
	c := r.started(opts, "w")
	waitUntil(t, 10*time.Second, "the first clock measure", func() bool { _, ok := c.ClockOffset(); return ok })
	offset, _ := c.ClockOffset()
	if offset.Abs() > 200*time.Millisecond {
		t.Errorf("offset from a server on this machine: %v; want about 0", offset)
	}
	if strings.Contains(r.logs.String(), "clock differs") {
		t.Errorf("a clock within the bound was warned of:\n%s", r.logs)
	}
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	m := metricWith(gathered(t, reg), "agora_clock_offset_seconds", "", "")
	if m == nil || m.GetGauge().GetValue() != offset.Seconds() {
		t.Errorf("agora_clock_offset_seconds = %v; want the measured %v", m, offset.Seconds())
	}
}
