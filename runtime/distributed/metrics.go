package distributed

import (
	"context"

	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/internal/buckets"
	"github.com/agora-etl/agora/runtime/distributed/internal/leasebackend"
)

var _ prometheus.Collector = (*RedisWorkerCoordinator)(nil)

// requestBuckets span 0.2 ms to about 4 s, in seconds, rounded so le
// labels print as short decimals (0.0006, not 0.0006000000000000001).
var requestBuckets = buckets.Exponential(0.0002, 3, 10)

var (
	descCoordinatorUp = prometheus.NewDesc("agora_coordinator_up",
		"1 while the last Redis operation worked (the primary, and with Redlock a quorum) and Redis takes the worker's heartbeat and acquires, else 0.", nil, nil)
	descStateLost = prometheus.NewDesc("agora_coordinator_state_lost_slots_total",
		"Slots refused because the coordination state was lost after they began (Redis restarted empty or from a file, failed over, or was flushed): they may have run.", nil, nil)
	descRefused = prometheus.NewDesc("agora_coordinator_refused_total",
		"Redis operations that Redis answered with an error reply refusing them (OOM under maxmemory/noeviction, READONLY, NOPERM, MISCONF, ...): Redis is reachable but will not take the worker's writes.", nil, nil)
	descClockOffset = prometheus.NewDesc("agora_clock_offset_seconds",
		"This worker's clock minus the Redis server's (TIME), as last measured; slots are decided by the server's clock (see docs/distributed.md, Assumptions).", nil, nil)
	descFutureSlots = prometheus.NewDesc("agora_coordinator_future_slots_total",
		"Slots refused because they start more than the lease-ahead bound after the Redis server's time: this worker's clock is ahead.", nil, nil)
	descForeignData = prometheus.NewDesc("agora_coordinator_foreign_data_total",
		"Lease requests refused because the pipeline's lease or token key holds data agora did not write (another type, or a value that does not parse); nothing was granted.", []string{"pipeline"}, nil)
	descRedlockNodeUp = prometheus.NewDesc("agora_redlock_node_up",
		"1 while a Redlock quorum node answers, else 0; node is its host:port (never credentials).", []string{"node"}, nil)
)

// coordMetrics times every Redis request of one coordinator.
type coordMetrics struct {
	requests *prometheus.HistogramVec
}

func newCoordMetrics() *coordMetrics {
	return &coordMetrics{requests: prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "agora_redis_request_duration_seconds",
		Help:    "Round trips to Redis by what the coordinator was doing: connect, acquire, renew, release, complete, heartbeat, validate, control, preference, inspect, health, stop (other: untagged); quorum_<op> on Redlock quorum nodes.",
		Buckets: requestBuckets,
	}, []string{"op"})}
}

// Describe sends the coordinator's metric descriptors (see Collect).
func (c *RedisWorkerCoordinator) Describe(ch chan<- *prometheus.Desc) {
	ch <- descCoordinatorUp
	ch <- descStateLost
	ch <- descRefused
	ch <- descClockOffset
	ch <- descFutureSlots
	ch <- descForeignData
	ch <- descRedlockNodeUp
	c.metrics.requests.Describe(ch)
}

// Collect sends agora_coordinator_up (0 while Redis is unreachable or refuses
// the worker's writes), agora_coordinator_state_lost_slots_total,
// agora_coordinator_refused_total, agora_clock_offset_seconds (once
// measured), agora_coordinator_future_slots_total,
// agora_coordinator_foreign_data_total per pipeline, agora_redlock_node_up per quorum node
// and the agora_redis_request_duration_seconds histogram. A pool whose
// coordinator this is registers it with its own registry, so /metrics shows
// them.
func (c *RedisWorkerCoordinator) Collect(ch chan<- prometheus.Metric) {
	up := 0.0
	if c.health.reachable.Load() && c.health.refused.Load() == nil {
		up = 1
	}
	ch <- prometheus.MustNewConstMetric(descCoordinatorUp, prometheus.GaugeValue, up)
	ch <- prometheus.MustNewConstMetric(descStateLost, prometheus.CounterValue, float64(c.stats.stateLost.Load()))
	ch <- prometheus.MustNewConstMetric(descRefused, prometheus.CounterValue, float64(c.stats.refused.Load()))
	if offset, ok := c.ClockOffset(); ok {
		ch <- prometheus.MustNewConstMetric(descClockOffset, prometheus.GaugeValue, offset.Seconds())
	}
	ch <- prometheus.MustNewConstMetric(descFutureSlots, prometheus.CounterValue, float64(c.stats.futureSlots.Load()))
	for id, n := range c.foreignDataCounts() {
		ch <- prometheus.MustNewConstMetric(descForeignData, prometheus.CounterValue, float64(n), id)
	}
	if q, ok := c.backend.(*quorumBackend); ok {
		for _, n := range q.redlock.Nodes() {
			v := 0.0
			if n.Reachable() || !n.Contacted() {
				// Not asked yet is not down: a node is up until it fails.
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(descRedlockNodeUp, prometheus.GaugeValue, v, nodeLabel(n.URL().Options))
		}
	}
	c.metrics.requests.Collect(ch)
}

// nodeLabel names a node by its address only: the URL may carry a password.
func nodeLabel(o *redis.Options) string {
	if o.Network == "unix" {
		return "unix:" + o.Addr
	}
	return o.Addr
}

// instrument adds the request timer to the coordinator's clients.
func (c *RedisWorkerCoordinator) instrument() {
	c.client.AddHook(requestHook{m: c.metrics})
	if q, ok := c.backend.(*quorumBackend); ok {
		for _, n := range q.redlock.Nodes() {
			n.Client().AddHook(requestHook{m: c.metrics, quorum: true})
		}
	}
}

// requestHook is a go-redis hook timing each command or pipeline under the
// operation its context was tagged with (withOp).
type requestHook struct {
	m      *coordMetrics
	quorum bool // the client is a Redlock quorum node
}

func (h requestHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h requestHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		start := time.Now()
		err := next(ctx, cmd)
		h.observe(requestOp(ctx, cmd), time.Since(start))
		return err
	}
}

func (h requestHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		start := time.Now()
		err := next(ctx, cmds)
		var first redis.Cmder
		if len(cmds) > 0 {
			first = cmds[0]
		}
		h.observe(requestOp(ctx, first), time.Since(start))
		return err
	}
}

// observe times one request.
func (h requestHook) observe(op redisOp, d time.Duration) {
	if op >= numOps {
		op = opOther
	}
	label := opNames[op]
	if h.quorum {
		label = quorumOpNames[op]
	}
	h.m.requests.WithLabelValues(label).Observe(d.Seconds())
}

// quorumOpNames are the op labels of requests to quorum nodes.
var quorumOpNames = func() (names [numOps]string) {
	for op := range numOps {
		names[op] = "quorum_" + op.String()
	}
	return names
}()

var (
	scriptOpsOnce sync.Once
	scriptOps     map[string]redisOp
)

// requestOp is the operation of a request: its context's tag, else, for a
// request sent from an untagged context, the operation its script belongs
// to, else opOther.
func requestOp(ctx context.Context, cmd redis.Cmder) redisOp {
	if op := opOf(ctx); op != opOther || cmd == nil {
		return op
	}
	name := cmd.Name()
	if name != "evalsha" && name != "eval" {
		return opOther
	}
	args := cmd.Args()
	if len(args) < 2 {
		return opOther
	}
	body, _ := args[1].(string)
	scriptOpsOnce.Do(func() {
		scriptOps = map[string]redisOp{}
		for _, s := range []struct {
			script *redis.Script
			op     redisOp
		}{
			{leasebackend.AcquireScript, opAcquire}, {leasebackend.RenewScript, opRenew}, {leasebackend.HeartbeatScript, opHeartbeat},
			{leasebackend.QuorumAcquireScript, opAcquire}, {leasebackend.QuorumRenewScript, opRenew}, {leasebackend.QuorumReleaseScript, opRelease},
		} {
			scriptOps[leasebackend.Source(s.script)] = s.op
			scriptOps[s.script.Hash()] = s.op
		}
	})
	return scriptOps[body]
}
