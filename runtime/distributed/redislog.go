package distributed

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/internal/redisurl"
)

// routeRedisClientLogs sends the go-redis client's own log lines (dial
// failures, pool notices) to slog at DEBUG instead of unstructured lines on
// stderr. While Redis is down a worker would otherwise print one such line per
// request, burying the coordinator's own "Redis unreachable" warning, which is
// logged once per outage. go-redis has one process-wide logger, so this
// applies to every go-redis client in the process; it is done once, when the
// first coordinator is built.
var routeRedisClientLogs = sync.OnceFunc(func() {
	redis.SetLogger(redisClientLogger{})
})

// redisClientLogger adapts slog.Default() to go-redis's logging interface.
type redisClientLogger struct{}

// Printf logs one go-redis message at DEBUG, with the passwords of every
// coordinator's URLs removed: go-redis quotes addresses and server replies
// in its lines, and its logger serves every client in the process.
func (redisClientLogger) Printf(ctx context.Context, format string, v ...any) {
	logger := slog.Default()
	if !logger.Enabled(ctx, slog.LevelDebug) {
		return
	}
	logger.DebugContext(ctx, "redis client", "message", clientLogSecrets.redact(fmt.Sprintf(format, v...)))
}

// clientLogSecrets holds the redactors of the coordinators built in the
// process and not yet closed, for the go-redis log lines.
var clientLogSecrets redactorSet

// redactorSet is a growing set of redactors, safe for concurrent use.
type redactorSet struct {
	mu   sync.RWMutex
	list []*redisurl.Redactor
}

// add registers r (nil or empty ones are skipped).
func (s *redactorSet) add(r *redisurl.Redactor) {
	if r.Empty() {
		return
	}
	s.mu.Lock()
	s.list = append(s.list, r)
	s.mu.Unlock()
}

// remove forgets r.
func (s *redactorSet) remove(r *redisurl.Redactor) {
	s.mu.Lock()
	s.list = slices.DeleteFunc(s.list, func(x *redisurl.Redactor) bool { return x == r })
	s.mu.Unlock()
}

// redact removes every registered secret from text.
func (s *redactorSet) redact(text string) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	for _, r := range s.list {
		text = r.Redact(text)
	}
	return text
}
