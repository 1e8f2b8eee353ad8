package distributed

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/redis/go-redis/v9"
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

// Printf logs one go-redis message at DEBUG.
func (redisClientLogger) Printf(ctx context.Context, format string, v ...any) {
	logger := slog.Default()
	if !logger.Enabled(ctx, slog.LevelDebug) {
		return
	}
	logger.DebugContext(ctx, "redis client", "message", fmt.Sprintf(format, v...))
}
