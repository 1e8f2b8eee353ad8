package cli

import (
	"log"
	"log/slog"
)

// useDefaultLogger makes logger slog's default (and so the log package's
// output) until the returned function is called, as runtime.Main does for
// a worker: the coordinator, the Redis client and the SQL sinks log
// through slog.Default(), and without this "agora run" would print their
// lines in the log package's format beside the pool's. The function puts
// back the previous default and the log package's output and flags.
func useDefaultLogger(logger *slog.Logger) (restore func()) {
	previous, out, flags := slog.Default(), log.Writer(), log.Flags()
	slog.SetDefault(logger)
	return func() {
		slog.SetDefault(previous)
		log.SetOutput(out)
		log.SetFlags(flags)
	}
}
