package distributed

import (
	"fmt"
	"strings"
)

// EnvHelp lists the AGORA_DISTRIBUTED_* variables LoadConfig reads, one
// indented entry each, for a program's -help: package worker prints it in
// every worker binary's.
func EnvHelp() string {
	var b strings.Builder
	for _, v := range []struct{ name, what string }{
		{envNames.RedisURL, "Redis URL shared by the replicas (redis://, rediss://, unix://); unset: this replica coordinates with no other"},
		{envNames.LeaseTTL, "lease lifetime in seconds (default 300)"},
		{envNames.HeartbeatInterval, "worker heartbeat and lease renewal interval in seconds (default 30)"},
		{envNames.KeyPrefix, `Redis key prefix (default "agora:distributed:")`},
		{EnvPrefix + "_FALLBACK_TO_LOCAL", "true: run on unfenced local leases while Redis is down (default false: fail safe)"},
		{envNames.FencingKeyTTL, "expiry of fencing-token and completed-slot keys in seconds (default: never)"},
		{envNames.LeaseRenewalDeadline, "give a lease up locally when not renewed for this many seconds"},
		{envNames.RedlockRedisURLs, "Redlock quorum: JSON array or comma-separated list of at least 3 Redis URLs"},
		{envNames.RedlockClockDriftFactor, "Redlock clock drift factor (default 0.01)"},
		{EnvPrefix + "_RUN_HISTORY", "run history kept per pipeline: RUNS[,MAX_AGE] (default 100,168h) or off"},
	} {
		fmt.Fprintf(&b, "  %s\n      %s\n", v.name, v.what)
	}
	return b.String()
}
