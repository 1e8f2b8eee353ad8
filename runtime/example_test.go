package runtime_test

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/agora-etl/agora/runtime"
)

// A pool with one pipeline on a Once schedule: Run returns as soon as the
// pipeline's one run has succeeded. The health server is off unless asked
// for (WithHealthPort), and signal handling is off here because the
// program, not the pool, owns the process.
func ExampleNewWorkerPool() {
	pool := runtime.NewWorkerPool(
		runtime.WithSignalHandling(false),
		runtime.WithLogger(slog.New(slog.DiscardHandler)),
	)
	pool.Register(&runtime.ScheduledPipeline{
		PipelineID: "hello",
		Schedule:   runtime.Once(),
		Factory: func(ctx context.Context) (runtime.Pipeline, error) {
			return runtime.PipelineFunc(func(ctx context.Context) error {
				fmt.Println("hello from the pipeline's run")
				return nil
			}), nil
		},
	})
	if err := pool.Run(context.Background()); err != nil {
		fmt.Println("run:", err)
		return
	}
	for _, p := range pool.Status().Pipelines {
		fmt.Printf("%s %s: %d run(s), %d failed, state %s\n", p.PipelineID, p.Schedule, p.Runs, p.Failures, p.State)
	}
	// Output:
	// hello from the pipeline's run
	// hello once: 1 run(s), 0 failed, state stopped
}
