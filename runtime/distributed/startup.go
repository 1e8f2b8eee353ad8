package distributed

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"

	"github.com/agora-etl/agora/internal/redact"
)

// ErrRedisRefused is wrapped by Start's error when Redis refuses the
// worker's credentials or database (WRONGPASS, NOAUTH, NOPERM, a database
// index the server does not have): a configuration error that retrying
// cannot fix, so the worker stops at start instead of waiting forever.
// Outages (connection refused, timeouts) are not: Start succeeds and the
// coordinator keeps trying.
var ErrRedisRefused = errors.New("distributed: Redis refused the configuration")

// refusalReplies are the error replies that mean the settings are wrong.
var refusalReplies = []struct{ text, advice string }{
	{"WRONGPASS", "the user name or password in the URL is wrong"},
	{"NOAUTH", "the server requires a password and the URL gives none"},
	{"NOPERM", "the ACL user lacks a permission agora needs (keys under the prefix; EVAL, EVALSHA, SCRIPT, INFO, GET, SET, DEL, HSET, HGET, HGETALL, HDEL, LINDEX, LREM, PTTL, SCAN, PING)"},
	{"DB index is out of range", "the database number in the URL does not exist on the server"},
	{"invalid DB index", "the database number in the URL is not valid"},
}

// refusal turns a Redis error that means bad settings into an error
// wrapping ErrRedisRefused, and returns nil for every other error.
func refusal(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, ErrEvictingRedis) {
		return fmt.Errorf("%w: %w", ErrRedisRefused, err)
	}
	msg := err.Error()
	for _, r := range refusalReplies {
		if strings.Contains(msg, r.text) {
			return fmt.Errorf("%w: %s: %w", ErrRedisRefused, r.advice, err)
		}
	}
	return nil
}

// logMode logs, once at start-up, how this replica coordinates.
func logMode(logger *slog.Logger, cfg Config, mode Mode) {
	switch {
	case mode == ModeOff:
		logger.Info("coordinator: in-process leases (distributed=off); this replica coordinates with no other")
	case cfg.RedisURL == "":
		attrs := []any{slog.String("set", envNames.RedisURL)}
		if near := lookAlikes(); len(near) > 0 {
			attrs = append(attrs, slog.Any("misspelt_settings", near))
		}
		logger.Warn("coordinator: "+envNames.RedisURL+" is not set: this replica coordinates with no other, "+
			"and if several replicas run, every one of them runs every slot", attrs...)
	case len(cfg.RedlockRedisURLs) > 0:
		logger.Info("coordinator: Redis with a Redlock quorum", slog.String("redis", redact.URL(cfg.RedisURL)),
			slog.Int("quorum_nodes", len(cfg.RedlockRedisURLs)))
	default:
		logger.Info("coordinator: Redis", slog.String("redis", redact.URL(cfg.RedisURL)))
	}
}

// lookAlikes names environment variables that look like a misspelt agora
// setting: AGORA_* outside AGORA_DISTRIBUTED_* that mention Redis, a
// lease or a heartbeat, and *_REDIS_URL variables close to the real name
// (AGORA_REDIS_URL, AGORA_DISTRIBUTE_REDIS_URL). Only names, never values.
func lookAlikes() []string {
	known := knownVariables()
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		upper := strings.ToUpper(name)
		if known[name] || strings.HasPrefix(name, EnvPrefix+"_") {
			continue // unknown AGORA_DISTRIBUTED_* names are LoadConfig's errors
		}
		agora := strings.HasPrefix(upper, "AGORA")
		if agora && (strings.Contains(upper, "REDIS") || strings.Contains(upper, "LEASE") ||
			strings.Contains(upper, "HEARTBEAT") || strings.Contains(upper, "REDLOCK") || strings.Contains(upper, "DISTRIB")) {
			out = append(out, name)
			continue
		}
		if !agora && closestVariable(upper, known) != "" {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}
