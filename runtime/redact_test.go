package runtime_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
)

var errDriver = errors.New("driver: refused")

// TestRunErrorsAreRedactedInLogsAndStatus: a pipeline's own error that
// quotes a URL with its password shows the URL redacted in the "run
// failed" line and in /status last_error, and keeps its chain.
func TestRunErrorsAreRedactedInLogsAndStatus(t *testing.T) {
	for _, pw := range []string{`Pa'ss1`, `Pa"ss4`, `p@ss/w0rd`, `my pass word`} {
		runErr := fmt.Errorf("connect %q and %q: %w", "postgres://agora:"+pw+"@db:5432/shop",
			"postgres://agora@db/shop?sslpassword=KeyPass2&db_password=Tok"+pw+"&access_token=Tok3n", errDriver)
		logs := &syncBuffer{}
		failed := make(chan struct{})
		pool := runtime.NewWorkerPool(runtime.WithLogger(slog.New(slog.NewTextHandler(logs, nil))), runtime.WithSignalHandling(false))
		pool.Register(&runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.Once(), Factory: func(context.Context) (runtime.Pipeline, error) {
			return runtime.PipelineFunc(func(context.Context) error {
				defer close(failed)
				return runErr
			}), nil
		}})
		ctx, cancel := context.WithCancel(context.Background())
		done := runAsync(pool, ctx)
		waitClosed(t, failed, "the run")
		var last string
		for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
			if last = pool.Status().Pipelines[0].LastError; last != "" {
				break
			}
		}
		cancel()
		err := waitErr(t, done)
		for what, out := range map[string]string{"last_error": last, "log": logs.String(), "Run's error": fmt.Sprint(err)} {
			for _, secret := range []string{pw, strings.ReplaceAll(pw, `"`, `\"`), "KeyPass2", "Tok3n"} {
				if strings.Contains(out, secret) {
					t.Errorf("password %q: %s shows %q:\n%s", pw, what, secret, out)
				}
			}
		}
		if !strings.Contains(last, "postgres://agora:xxxxx@db:5432/shop") || !strings.Contains(last, "driver: refused") {
			t.Errorf("last_error = %q", last)
		}
		if !strings.Contains(logs.String(), "run failed") {
			t.Errorf("no run failed line:\n%s", logs)
		}
	}
}
