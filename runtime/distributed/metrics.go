package distributed

import (
	"context"

	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"
)

var _ prometheus.Collector = (*RedisWorkerCoordinator)(nil)

// requestBuckets span 0.2 ms to about 4 s, in seconds.
var requestBuckets = prometheus.ExponentialBuckets(0.0002, 3, 10)

var (
	descCoordinatorUp = prometheus.NewDesc("agora_coordinator_up",
		"1 while the last Redis operation worked (the primary, and with Redlock a quorum), else 0.", nil, nil)
	descStateLost = prometheus.NewDesc("agora_coordinator_state_lost_slots_total",
		"Slots refused because the coordination state was lost after they began (Redis restarted empty or from a file, failed over, or was flushed): they may have run.", nil, nil)
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
		Help:    "Round trips to Redis by operation: a script's name (acquire, renew, heartbeat, quorum_*) or the command (a pipeline of several: pipeline).",
		Buckets: requestBuckets,
	}, []string{"op"})}
}

// Describe sends the coordinator's metric descriptors (see Collect).
func (c *RedisWorkerCoordinator) Describe(ch chan<- *prometheus.Desc) {
	ch <- descCoordinatorUp
	ch <- descStateLost
	ch <- descRedlockNodeUp
	c.metrics.requests.Describe(ch)
}

// Collect sends agora_coordinator_up, agora_coordinator_state_lost_slots_total,
// agora_redlock_node_up per quorum node
// and the agora_redis_request_duration_seconds histogram. A pool whose
// coordinator this is registers it with its own registry, so /metrics shows
// them.
func (c *RedisWorkerCoordinator) Collect(ch chan<- prometheus.Metric) {
	up := 0.0
	if c.health.reachable.Load() {
		up = 1
	}
	ch <- prometheus.MustNewConstMetric(descCoordinatorUp, prometheus.GaugeValue, up)
	ch <- prometheus.MustNewConstMetric(descStateLost, prometheus.CounterValue, float64(c.stats.stateLost.Load()))
	if q, ok := c.backend.(*quorumBackend); ok {
		for _, n := range q.nodes {
			v := 0.0
			if n.reachable.Load() || !n.contacted.Load() {
				// Not asked yet is not down: a node is up until it fails.
				v = 1
			}
			ch <- prometheus.MustNewConstMetric(descRedlockNodeUp, prometheus.GaugeValue, v, nodeLabel(n.url.opts))
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
	h := requestHook{m: c.metrics}
	c.client.AddHook(h)
	if q, ok := c.backend.(*quorumBackend); ok {
		for _, n := range q.nodes {
			n.client.AddHook(h)
		}
	}
}

// requestHook is a go-redis hook timing each command or pipeline.
type requestHook struct{ m *coordMetrics }

func (h requestHook) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h requestHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		start := time.Now()
		err := next(ctx, cmd)
		h.m.requests.WithLabelValues(opName(cmd)).Observe(time.Since(start).Seconds())
		return err
	}
}

func (h requestHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		start := time.Now()
		err := next(ctx, cmds)
		op := "pipeline"
		if len(cmds) > 0 {
			op = opName(cmds[0])
			for _, c := range cmds[1:] {
				if opName(c) != op {
					op = "pipeline"
					break
				}
			}
		}
		h.m.requests.WithLabelValues(op).Observe(time.Since(start).Seconds())
		return err
	}
}

var (
	scriptNamesOnce sync.Once
	scriptNames     map[string]string
)

// opName is the op label of cmd: a known script by name, any other command
// by its lower-case name, so the label's values stay few.
func opName(cmd redis.Cmder) string {
	name := cmd.Name()
	if name != "evalsha" && name != "eval" {
		return name
	}
	scriptNamesOnce.Do(func() {
		scriptNames = map[string]string{}
		for name, s := range map[string]*redis.Script{
			"acquire": acquireScript, "renew": renewScript, "heartbeat": heartbeatScript,
			"quorum_acquire": quorumAcquireScript, "quorum_renew": quorumRenewScript, "quorum_release": quorumReleaseScript,
		} {
			scriptNames[s.Hash()] = name
		}
	})
	args := cmd.Args()
	if len(args) < 2 {
		return name
	}
	body, _ := args[1].(string)
	if name == "evalsha" {
		if n, ok := scriptNames[body]; ok {
			return n
		}
		return "script"
	}
	for _, s := range []struct{ name, src string }{
		{"acquire", acquireSource}, {"renew", renewSource}, {"heartbeat", heartbeatSource},
		{"quorum_acquire", quorumAcquireSource}, {"quorum_renew", quorumRenewSource}, {"quorum_release", quorumReleaseSource},
	} {
		if body == s.src {
			return s.name
		}
	}
	return "script"
}
