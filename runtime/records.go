package runtime

import (
	"context"

	"github.com/agora-etl/agora/runtime/history"
	"github.com/agora-etl/agora/runtime/internal/engine"
)

// CountRecords adds c to the tally of the run ctx belongs to. The pool logs
// each run's tally when the run ends, adds it to the pipeline's totals in
// /status and to the run's trace span. Outside a pool run (and outside
// ContextWithRecordCounts) it does nothing, so a pipeline can always call
// it.
//
// A call with zero counts marks the run as one that counts its records:
// a Continuous run so marked that counted nothing read nothing, and its
// "run finished" line is logged at DEBUG rather than INFO, so an idle
// stream does not log a line per poll (etl pipelines make that call at the
// start of each run).
func CountRecords(ctx context.Context, c history.RecordCounts) {
	engine.CountRecords(ctx, c)
}

// ContextWithRecordCounts returns a copy of ctx that tallies CountRecords
// calls, and a function that reads the tally: what a pool run's context
// does, for tests of pipelines run outside a pool.
func ContextWithRecordCounts(ctx context.Context) (context.Context, func() history.RecordCounts) {
	return engine.ContextWithRecordCounts(ctx)
}
