package runtime

import (
	"time"

	"github.com/agora-etl/agora/runtime/internal/engine"
)

// PipelineReading is what EachPipeline reads of one pipeline: its status
// as /status serves it, and the little a metrics exporter needs besides.
// It is reused from one pipeline to the next, so reading ten thousand
// pipelines at each scrape allocates nothing per pipeline.
type PipelineReading struct {
	// Index is the pipeline's place among the pool's registered
	// pipelines (Pipelines), the index a RunObserver is told of its runs
	// by.
	Index int
	// Pipeline is the registered pipeline; read it, do not change it.
	Pipeline *ScheduledPipeline
	// Status is the pipeline's entry in /status but for Schedule, left
	// empty (its text costs an allocation; Pipeline.Schedule is there).
	// Its time pointers point into the reading, valid until fn returns:
	// copy what is kept.
	Status PipelineStatus
	// Planned is when the next attempt is due, zero when none is (a run
	// in flight, a stopped pipeline). Unlike Status.NextRun it is kept
	// while the pipeline is paused: a backoff goes on meanwhile.
	Planned time.Time
	// Interval is the time between two runs the schedule plans: an every
	// schedule's interval, the gap between a cron schedule's slot after
	// Planned (or now) and the one after it; 0 for continuous and once.
	Interval time.Duration

	// er is the engine's reading the status is read into, its times
	// with it.
	er engine.Reading
}

// EachPipeline calls fn with the reading of every pipeline of the pool's
// Run, in registration order, under no lock of the pool's: the way a
// metrics exporter reads the counters at scrape time without a copy of
// /status. Before Run, and for a pool only run with RunNow, fn is not
// called. fn must not keep the reading, which is reused.
func (p *WorkerPool) EachPipeline(fn func(*PipelineReading)) {
	pr := p.run.Load()
	if pr == nil {
		return
	}
	var rd PipelineReading
	pr.eng.EachReading(&rd.er, func(er *engine.Reading) {
		rd.Index, rd.Pipeline = er.Index, p.pipelines[er.Index]
		rd.Status, rd.Planned, rd.Interval = statusOf(er.Status), er.Planned, er.Interval
		fn(&rd)
	})
}
