package postgres_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agora-etl/agora/etl/fencing"
	"github.com/agora-etl/agora/etl/postgres"
	"github.com/agora-etl/agora/runtime"
)

// A hand-written pipeline's statements under the run's fencing token. The
// token comes from the lease in the run's context, so the pipeline must run
// under a coordinator that fences (runtime/distributed): a token of 0 is
// refused with fencing.ErrUnfenced. CompletesSlot marks a cron or Every
// run's slot completed in the same transaction.
func ExampleFencedTx() {
	var pool *pgxpool.Pool // pgxpool.New(ctx, url), opened once for the worker
	load := runtime.PipelineFunc(func(ctx context.Context) error {
		lease, _ := runtime.LeaseFromContext(ctx)
		err := postgres.FencedTx(ctx, pool, "totals", lease.FencingToken, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, "UPDATE totals SET amount = amount + $1 WHERE day = $2", 42, "2026-12-02")
			return err
		}, fencing.CompletesSlot())
		if errors.Is(err, fencing.ErrStaleWriter) {
			// Nothing was written: another replica owns the pipeline now.
			return fmt.Errorf("totals: %w", err)
		}
		return err
	})
	_ = &runtime.ScheduledPipeline{
		PipelineID: "totals",
		Schedule:   runtime.MustCron("0 * * * *"),
		Factory:    func(context.Context) (runtime.Pipeline, error) { return load, nil },
	}
}
