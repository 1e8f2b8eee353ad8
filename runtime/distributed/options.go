package distributed

import (
	"log/slog"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/history"
)

// Defaults of Options. A zero field means "use the default".
const (
	// DefaultLeaseTTL is how long a lease lives in Redis unless renewed.
	DefaultLeaseTTL = 300 * time.Second
	// DefaultHeartbeatInterval is how often the worker record is refreshed,
	// when it is below the lease TTL; otherwise the default is LeaseTTL/3.
	DefaultHeartbeatInterval = 30 * time.Second
	// DefaultKeyPrefix starts every key the coordinator writes.
	DefaultKeyPrefix = "agora:distributed:"
	// DefaultRedlockClockDriftFactor is the share of the TTL set aside for
	// clock rate differences between quorum nodes.
	DefaultRedlockClockDriftFactor = 0.01
)

// DefaultLeaseRenewalDeadline returns the renewal deadline used when
// Options.LeaseRenewalDeadline is zero: two thirds of ttl. The remaining
// third is the margin between a worker giving a lease up locally and Redis
// letting another worker take it.
func DefaultLeaseRenewalDeadline(ttl time.Duration) time.Duration { return ttl * 2 / 3 }

// Options configures a RedisWorkerCoordinator. Zero fields take the defaults
// documented on each field.
type Options struct {
	// RedisURL is the primary Redis: registry, fencing counters, leases.
	// redis://[user:password@]host[:port][/db], rediss:// for TLS, or
	// unix://[user:password@]/path/to/redis.sock[?db=N]; a Redis Cluster as
	// redis+cluster://[user:password@]host:port?addr=host2:port2&addr=…,
	// a primary found through Sentinels as
	// redis+sentinel://sentinel:port?addr=sentinel2:port&master_name=NAME
	// (the primary's credentials as username and password parameters);
	// rediss+cluster:// and rediss+sentinel:// for TLS. Required.
	RedisURL string
	// LeaseTTL is how long a lease lives unless renewed (default 300 s).
	LeaseTTL time.Duration
	// HeartbeatInterval is how often the worker record is refreshed (default
	// 30 s, or LeaseTTL/3 when that is shorter). It must be below LeaseTTL.
	// The record expires after 3×HeartbeatInterval without a refresh, and a
	// dead worker's leases are taken over then; a worker gives its leases up
	// locally shortly before that unless a renewal round confirmed its
	// record (see takeover.go and docs/distributed.md).
	HeartbeatInterval time.Duration
	// KeyPrefix starts every key (default "agora:distributed:"). Braces are
	// not allowed: the coordinator puts the pipeline id in a {hash tag}.
	KeyPrefix string
	// FallbackToLocal grants unfenced local leases (FencingToken 0) when Redis
	// is unreachable, trading the exactly-once guarantee for availability.
	FallbackToLocal bool
	// FencingKeyTTL expires a pipeline's fencing counter and completed-slot
	// record after this long without a run; 0 (the default) keeps them. When
	// set it must be at least LeaseTTL, and should exceed the longest gap
	// between two runs of a pipeline (see docs/distributed.md).
	FencingKeyTTL time.Duration
	// LeaseRenewalDeadline is how long renewal may keep failing, counted on
	// the monotonic clock from when the last successful renewal was sent,
	// before a lease is given up locally. Default: two thirds of LeaseTTL; it
	// must be below LeaseTTL. The takeover rule may give a lease up sooner:
	// 3×HeartbeatInterval less a 1 % + 5 ms margin after the last confirmed
	// record refresh.
	LeaseRenewalDeadline time.Duration
	// RedlockRedisURLs, when it names at least three independent masters,
	// turns on quorum leases.
	RedlockRedisURLs []string
	// RedlockClockDriftFactor is the clock drift allowance of quorum leases
	// (default 0.01).
	RedlockClockDriftFactor float64
	// RunHistory bounds the run history kept per pipeline in Redis (default
	// the last 100 runs, for 7 days; Off keeps none). See history.go and
	// docs/dashboard.md.
	RunHistory history.Policy
	// Logger receives the coordinator's logs (default slog.Default()).
	Logger *slog.Logger
	// Clock is the time source (default runtime.SystemClock).
	Clock runtime.Clock
}

// Validate reports every problem with o, one error per problem (joined),
// each wrapping ErrInvalidConfig and naming the Options field.
func (o Options) Validate() error {
	_, err := resolve(o, optionNames)
	return err
}
