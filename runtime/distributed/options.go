package distributed

import (
	"log/slog"
	"time"

	"github.com/agora-etl/agora/runtime"
)

// Options configures a RedisWorkerCoordinator.
type Options struct {
	// RedisURL is the primary Redis: registry, fencing counters, leases.
	RedisURL string
	// LeaseTTL is how long a lease lives unless renewed (default 300 s).
	LeaseTTL time.Duration
	// HeartbeatInterval is how often the worker record is refreshed (default 30 s).
	HeartbeatInterval time.Duration
	// KeyPrefix starts every key (default "agora:distributed:").
	KeyPrefix string
	// FallbackToLocal grants unfenced local leases when Redis is unreachable.
	FallbackToLocal bool
	// FencingKeyTTL expires idle fencing counters; 0 keeps them.
	FencingKeyTTL time.Duration
	// LeaseRenewalDeadline is how long renewal may keep failing before a lease
	// is given up locally.
	LeaseRenewalDeadline time.Duration
	// RedlockRedisURLs, when it names at least three independent masters,
	// turns on quorum leases.
	RedlockRedisURLs []string
	// RedlockClockDriftFactor is the clock drift allowance of quorum leases
	// (default 0.01).
	RedlockClockDriftFactor float64
	// Logger receives the coordinator's logs (default slog.Default()).
	Logger *slog.Logger
	// Clock is the time source (default runtime.SystemClock).
	Clock runtime.Clock
}
