package distributed

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"time"

	"github.com/agora-etl/agora/internal/redisurl"
	"github.com/agora-etl/agora/runtime"
)

// settingNames says how each setting is called in error messages: by its
// Options field for code, by its environment variable for LoadConfig.
type settingNames struct {
	RedisURL, LeaseTTL, HeartbeatInterval, KeyPrefix, FencingKeyTTL,
	LeaseRenewalDeadline, RedlockRedisURLs, RedlockClockDriftFactor string
}

var optionNames = settingNames{
	RedisURL:                "RedisURL",
	LeaseTTL:                "LeaseTTL",
	HeartbeatInterval:       "HeartbeatInterval",
	KeyPrefix:               "KeyPrefix",
	FencingKeyTTL:           "FencingKeyTTL",
	LeaseRenewalDeadline:    "LeaseRenewalDeadline",
	RedlockRedisURLs:        "RedlockRedisURLs",
	RedlockClockDriftFactor: "RedlockClockDriftFactor",
}

// MaxLeaseTTL is the longest LeaseTTL accepted. A lease is renewed while
// its run goes on, so the TTL only says how long a dead worker keeps its
// pipelines from the others; beyond a week that is a mistake (and far
// beyond, the durations derived from it overflow).
const MaxLeaseTTL = 7 * 24 * time.Hour

// minRedlockNodes is the smallest quorum that tolerates a failed node.
const minRedlockNodes = 3

// settings are Options with defaults applied, URLs parsed and the timings
// derived from them.
type settings struct {
	Options
	primary  redisurl.URL
	quorum   []redisurl.URL
	redactor *redisurl.Redactor

	// renewEvery is the renewal cadence: min(LeaseTTL/3, HeartbeatInterval,
	// LeaseRenewalDeadline/2), so at least two renewals fit in the deadline.
	renewEvery time.Duration
	// retryDelay is the pause between renewal attempts after a failure.
	retryDelay time.Duration
	// opTimeout bounds one acquire, release or validate round trip when the
	// caller's context has no earlier deadline.
	opTimeout time.Duration
	// onceTTL is how long a completed Once run keeps others from running it.
	onceTTL time.Duration
	// recordTTL is the worker record's expiry: 3×HeartbeatInterval.
	recordTTL time.Duration
	// recordGiveUp is how long after the send of its last confirmed record
	// refresh a worker keeps a lease: recordTTL less recordMargin, so it
	// stops first when another worker takes over from a record gone
	// silent (see takeover.go).
	recordGiveUp time.Duration
}

// resolve applies defaults to o and checks it, returning every problem.
func resolve(o Options, names settingNames) (settings, error) {
	return check(o, names, true)
}

// check is resolve with the primary URL optional: LoadConfig accepts an
// empty AGORA_DISTRIBUTED_REDIS_URL, which means "run without Redis".
func check(o Options, names settingNames, requireURL bool) (settings, error) {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidConfig}, args...)...))
	}
	s := settings{Options: o}

	if o.RedisURL == "" {
		if requireURL {
			bad("%s is empty; set it to the primary Redis, e.g. redis://localhost:6379/0", names.RedisURL)
		} else if len(o.RedlockRedisURLs) > 0 {
			bad("%s is set but %s is empty: the primary Redis keeps the registry and fencing counters in quorum mode too",
				names.RedlockRedisURLs, names.RedisURL)
		}
	} else if u, err := redisurl.Parse(o.RedisURL); err != nil {
		bad("%s: %v", names.RedisURL, err)
	} else {
		s.primary = u
	}

	switch {
	case o.LeaseTTL < 0:
		bad("%s (%s) must not be negative", names.LeaseTTL, o.LeaseTTL)
	case o.LeaseTTL == 0:
		s.LeaseTTL = DefaultLeaseTTL
	case o.LeaseTTL < time.Millisecond:
		bad("%s (%s) must be at least 1ms", names.LeaseTTL, o.LeaseTTL)
	case o.LeaseTTL > MaxLeaseTTL:
		bad("%s (%s) must be at most %s: a worker that dies holds its pipelines that long", names.LeaseTTL, o.LeaseTTL, MaxLeaseTTL)
	}
	ttlOK := o.LeaseTTL >= 0 && (o.LeaseTTL == 0 || o.LeaseTTL >= time.Millisecond) && o.LeaseTTL <= MaxLeaseTTL

	switch {
	case o.HeartbeatInterval < 0:
		bad("%s (%s) must not be negative", names.HeartbeatInterval, o.HeartbeatInterval)
	case o.HeartbeatInterval == 0:
		s.HeartbeatInterval = min(DefaultHeartbeatInterval, s.LeaseTTL/3)
	case ttlOK && o.HeartbeatInterval >= s.LeaseTTL:
		bad("%s (%s) must be shorter than %s (%s): the worker record would expire between heartbeats",
			names.HeartbeatInterval, o.HeartbeatInterval, names.LeaseTTL, s.LeaseTTL)
	}

	switch {
	case o.KeyPrefix == "":
		s.KeyPrefix = DefaultKeyPrefix
	case strings.ContainsAny(o.KeyPrefix, "{}"):
		bad("%s %q must not contain { or }: keys put the pipeline id in a {hash tag} for Redis Cluster", names.KeyPrefix, o.KeyPrefix)
	}

	switch {
	case o.FencingKeyTTL < 0:
		bad("%s (%s) must not be negative (0 keeps the keys)", names.FencingKeyTTL, o.FencingKeyTTL)
	case o.FencingKeyTTL > 0 && ttlOK && o.FencingKeyTTL < s.LeaseTTL:
		bad("%s (%s) must be 0 (keep) or at least %s (%s): a completed slot must be remembered longer than a lease lives",
			names.FencingKeyTTL, o.FencingKeyTTL, names.LeaseTTL, s.LeaseTTL)
	}

	switch {
	case o.LeaseRenewalDeadline < 0:
		bad("%s (%s) must not be negative", names.LeaseRenewalDeadline, o.LeaseRenewalDeadline)
	case o.LeaseRenewalDeadline == 0:
		s.LeaseRenewalDeadline = DefaultLeaseRenewalDeadline(s.LeaseTTL)
	case ttlOK && o.LeaseRenewalDeadline >= s.LeaseTTL:
		bad("%s (%s) must be shorter than %s (%s): a worker must give a lease up before Redis lets another worker take it",
			names.LeaseRenewalDeadline, o.LeaseRenewalDeadline, names.LeaseTTL, s.LeaseTTL)
	}

	switch f := o.RedlockClockDriftFactor; {
	case math.IsNaN(f) || f < 0 || f >= 1:
		bad("%s (%v) must be at least 0 and below 1", names.RedlockClockDriftFactor, f)
	case f == 0:
		s.RedlockClockDriftFactor = DefaultRedlockClockDriftFactor
	}

	if n := len(o.RedlockRedisURLs); n > 0 {
		if n < minRedlockNodes {
			bad("%s names %d server(s); quorum mode needs at least %d independent Redis masters (or none to turn it off)",
				names.RedlockRedisURLs, n, minRedlockNodes)
		}
		seen := map[string]int{}
		for i, raw := range o.RedlockRedisURLs {
			u, err := redisurl.Parse(raw)
			if err != nil {
				bad("%s[%d]: %v", names.RedlockRedisURLs, i, err)
				continue
			}
			if u.Topology != redisurl.Single {
				// A Cluster shard or a Sentinel-managed primary fails over to
				// a replica that may lack the latest writes: not an
				// independent vote.
				bad("%s[%d] (%s) names a Redis %s; each quorum node must be one independent master, named by a redis://, rediss:// or unix:// URL",
					names.RedlockRedisURLs, i, u.Redacted, u.Topology)
				continue
			}
			key := endpointKey(u)
			if j, dup := seen[key]; dup {
				bad("%s[%d] (%s) is the same server as %s[%d]; quorum nodes must be independent",
					names.RedlockRedisURLs, i, u.Redacted, names.RedlockRedisURLs, j)
				continue
			}
			seen[key] = i
			s.quorum = append(s.quorum, u)
		}
	}

	if len(errs) > 0 {
		return settings{}, errors.Join(errs...)
	}

	if s.Logger == nil {
		s.Logger = slog.Default()
	}
	if s.Clock == nil {
		s.Clock = runtime.SystemClock{}
	}
	s.redactor = redisurl.NewRedactor(append([]string{o.RedisURL}, o.RedlockRedisURLs...)...)
	s.renewEvery = min(s.LeaseTTL/3, s.HeartbeatInterval, s.LeaseRenewalDeadline/2)
	s.retryDelay = min(max(s.renewEvery/4, 10*time.Millisecond), 5*time.Second)
	s.opTimeout = min(max(s.LeaseRenewalDeadline/2, 50*time.Millisecond), 5*time.Second)
	s.onceTTL = 2 * s.LeaseTTL
	s.recordTTL = 3 * s.HeartbeatInterval
	s.recordGiveUp = s.recordTTL - recordMargin(s.recordTTL)
	return s, nil
}

// endpointKey names the server a URL reaches. The database is left out: two
// databases of one server fail together, so they are not independent nodes.
func endpointKey(u redisurl.URL) string {
	return u.Options.Network + "|" + strings.ToLower(u.Options.Addr)
}
