package distributed

import (
	"context"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agora-etl/agora/runtime"
)

// Clock skew: what a replica whose clock disagrees with the Redis server's
// can and cannot do
//
// Every slot rule reads the Redis clock (TIME inside the scripts): a slot
// is refused when it starts more than runtime.MaxLeaseAhead after the
// server's time, whichever way it is asked (ahead of its boundary or at
// it; one server, Cluster, or the Redlock primary). A replica whose clock
// is ahead therefore asks for slots that have not begun and is refused
// (counted in agora_coordinator_future_slots_total, logged once per
// pipeline): it can neither run a slot early nor, by completing one, make
// the others skip the slots before it. A replica whose clock is behind
// asks late: the slot is usually taken or completed by then, and is
// refused as such. Either way the slots are run by the replicas whose
// clocks agree with the server's.
//
// So that an operator sees it, the coordinator measures its clock against
// the server's TIME (at start, then every clockCheckInterval), exports the
// offset as agora_clock_offset_seconds, and logs once at WARN when it
// exceeds ClockOffsetWarning.

// ClockOffsetWarning is how far this worker's clock may be from the Redis
// server's before the coordinator warns (once) that it is skewed.
const ClockOffsetWarning = time.Second

// clockCheckInterval is how often the offset is measured again: one TIME
// command, a negligible load.
const clockCheckInterval = 30 * time.Second

// clockSkew is what the coordinator knows of its clock's offset.
type clockSkew struct {
	offsetNs atomic.Int64 // this clock minus the server's, at the last measure
	measured atomic.Bool
	warned   atomic.Bool
	last     time.Time // of the last measure, by this clock; heartbeatLoop only

	mu     sync.Mutex
	future map[string]bool // pipelines whose future slot was logged
}

// measureClock reads the server's TIME and records this clock's offset
// from it, the reply's round trip halved on each side. A coordinator whose
// clock is not the system's (a test's fake clock) has no offset to speak of,
// and measures nothing.
func (c *RedisWorkerCoordinator) measureClock(ctx context.Context) {
	if _, system := c.clock.(runtime.SystemClock); !system {
		return
	}
	ctx, cancel := c.opContext(ctx, opHeartbeat)
	defer cancel()
	sent := c.clock.Now()
	server, err := c.client.Time(ctx).Result()
	if err != nil {
		return // the heartbeat reports Redis errors
	}
	got := c.clock.Now()
	c.skew.last = got
	mid := sent.Add(got.Sub(sent) / 2)
	offset := mid.Sub(server)
	c.skew.offsetNs.Store(int64(offset))
	c.skew.measured.Store(true)
	if offset.Abs() > ClockOffsetWarning && c.skew.warned.CompareAndSwap(false, true) {
		c.log.Warn("distributed: this worker's clock differs from the Redis server's by more than the bound; slots are decided by the server's clock, so a clock ahead is refused the slots that have not begun there, and one behind asks late",
			"offset", offset.Round(time.Millisecond).String(),
			"offset_seconds", math.Round(offset.Seconds()*1000)/1000,
			"bound", ClockOffsetWarning.String())
	}
}

// clockDue reports whether the offset should be measured again.
func (c *RedisWorkerCoordinator) clockDue() bool {
	return c.skew.last.IsZero() || c.clock.Now().Sub(c.skew.last) >= clockCheckInterval
}

// ClockOffset returns this worker's clock minus the Redis server's, as
// last measured, and false before the first measure.
func (c *RedisWorkerCoordinator) ClockOffset() (time.Duration, bool) {
	return time.Duration(c.skew.offsetNs.Load()), c.skew.measured.Load()
}

// noteFutureSlot counts a slot refused for starting ahead of the server's
// clock, and logs it once per pipeline.
func (c *RedisWorkerCoordinator) noteFutureSlot(pipelineID string, slot int64) {
	c.stats.futureSlots.Add(1)
	c.skew.mu.Lock()
	if c.skew.future == nil {
		c.skew.future = map[string]bool{}
	}
	seen := c.skew.future[pipelineID]
	c.skew.future[pipelineID] = true
	c.skew.mu.Unlock()
	if seen {
		return
	}
	offset, _ := c.ClockOffset()
	c.log.Warn("distributed: slot refused: it starts after the Redis server's time (beyond the lease-ahead bound), so this worker's clock is ahead; the slot is left to the replicas whose clocks agree with the server",
		"pipeline", pipelineID, "slot", time.Unix(slot, 0).UTC().Format(time.RFC3339), "run", slot,
		"clock_offset", offset.Round(time.Millisecond).String())
}
