package worker

import (
	"context"
	"log/slog"
	"os"

	"github.com/agora-etl/agora/internal/envtrace"
	"github.com/agora-etl/agora/internal/isnil"
	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/notify"
)

// traceFromEnv gives a pool without a tracer provider one that exports over
// OTLP when the environment names an OTLP endpoint: how a generated worker
// is traced without code. The pool owns the provider. otlpFromEnv is the
// exporter, or, built with -tags agora_nootlp, a stand-in that says it is
// left out.
func traceFromEnv(ctx context.Context, pool *runtime.WorkerPool, logger *slog.Logger) error {
	if !isnil.Value(pool.TracerProvider()) || !envtrace.EndpointConfigured() || envtrace.Disabled() {
		return nil
	}
	tp, err := otlpFromEnv(ctx, logger)
	if err != nil {
		return err
	}
	if isnil.Value(tp) {
		return nil
	}
	if err := pool.Configure(runtime.WithTracerProvider(tp), runtime.WithShutdownHook(tp.Shutdown)); err != nil {
		// The provider would otherwise keep its exporter's goroutines.
		_ = tp.Shutdown(ctx)
		return err
	}
	logger.Info("tracing runs over OTLP", slog.String("service_name", envtrace.ServiceName("")))
	return nil
}

// notifyFromEnv gives a pool without a notifier a webhook from
// AGORA_NOTIFY_URL, closed by the pool as Run returns.
func notifyFromEnv(pool *runtime.WorkerPool, logger *slog.Logger) error {
	if pool.Notifier() != nil {
		return nil
	}
	w, err := notify.FromEnv(nil, notify.Options{Logger: logger})
	if err != nil || w == nil {
		return err
	}
	if err := pool.Configure(runtime.WithNotifier(w), runtime.WithShutdownHook(w.Close)); err != nil {
		_ = w.Close(context.Background())
		return err
	}
	logger.Info("notifying a webhook", slog.String("url", notify.Shown(os.Getenv(notify.EnvURL))))
	return nil
}
