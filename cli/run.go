package cli

import (
	"errors"
	"fmt"
	"log/slog"

	"github.com/agora-etl/agora/internal/errsplit"
	"github.com/agora-etl/agora/internal/slogdefault"
	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/worker"
)

const runUsage = `usage: agora run --config FILE [--pipeline ID]... [--log-format text|json] [--log-level L]

Runs every pipeline of the file (or each one named with --pipeline) once,
now, in the foreground, and exits 0 only if every run succeeded. When
AGORA_DISTRIBUTED_REDIS_URL is set each run holds a fenced lease, as a
scheduled run would; a pipeline whose lease another replica holds fails.
`

func runOnce(e *env, args []string) int {
	f, err := splitFlags(args, "config", "pipeline", "log-format", "log-level")
	if err != nil {
		return usageError(e, "run", err)
	}
	if f.help {
		fmt.Fprint(e.stdout, runUsage)
		return ExitOK
	}
	if len(f.rest) > 0 {
		return usageError(e, "run", fmt.Errorf("unexpected arguments %q", f.rest))
	}
	path, err := f.one("config")
	if err != nil {
		return usageError(e, "run", err)
	}
	if path == "" {
		return usageError(e, "run", fmt.Errorf("missing --config FILE"))
	}
	format, level := "text", "info"
	if v, err := f.one("log-format"); err != nil {
		return usageError(e, "run", err)
	} else if v != "" {
		format = v
	}
	if v, err := f.one("log-level"); err != nil {
		return usageError(e, "run", err)
	} else if v != "" {
		level = v
	}
	logger, err := worker.NewLogger(e.stderr, format, level)
	if err != nil {
		return usageError(e, "run", err)
	}
	// One log format, as worker.Main's: the coordinator's lines too.
	defer slogdefault.Use(logger)()
	file, ok := loadConfig(e, path)
	if !ok {
		return ExitFailure
	}
	pool, err := file.Pool(runtime.WithLogger(logger))
	if err != nil {
		logger.Error("cannot build the worker", slog.Any("error", err))
		return ExitFailure
	}
	ctx, stop := signalContext(e.ctx)
	defer stop()
	defer closeIdleComponents()
	if err := pool.RunNow(ctx, f.values["pipeline"]...); err != nil {
		logRunNowError(logger, err)
		return ExitFailure
	}
	return ExitOK
}

// logRunNowError logs what RunNow's error says that the pool has not: a
// run that started and failed was logged as it ended ("run failed",
// runtime.ErrRunFailed), so it is only counted here, and each error is
// said once (a fenced sink without a coordinator, say).
func logRunNowError(logger *slog.Logger, err error) {
	failed := 0
	for _, e := range errsplit.Split(err) {
		if errors.Is(e, runtime.ErrRunFailed) {
			failed++
			continue
		}
		logger.Error("not run", slog.Any("error", e))
	}
	if failed > 0 {
		logger.Error("not every run succeeded; each failed run's error is logged above", slog.Int("failed_runs", failed))
	}
}
