package runtime_test

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/clocktest"
)

// TestPoolWithoutMetricsAnswers404: a pool given no metrics serves the
// probes and /status, and answers /metrics with 404 Not Found, as
// docs/runtime.md says.
func TestPoolWithoutMetricsAnswers404(t *testing.T) {
	sp := &runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.Every(time.Minute),
		Factory: func(context.Context) (runtime.Pipeline, error) {
			return runtime.PipelineFunc(func(context.Context) error { return nil }), nil
		}}
	d := &poolDriver{clock: clocktest.NewFake(t0), logs: &syncBuffer{},
		opts: []runtime.PoolOption{runtime.WithHealthAddr("127.0.0.1:0"), runtime.WithMetrics(nil)}}
	d.start(t, sp)
	defer func() { _ = d.stop(t) }()
	if d.pool.Metrics() != nil {
		t.Fatal("WithMetrics(nil) left metrics on the pool")
	}
	for path, want := range map[string]int{"/metrics": http.StatusNotFound, "/healthz": http.StatusOK, "/status": http.StatusOK} {
		resp, err := http.Get("http://" + d.pool.HealthAddr() + path)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s = %d, want %d", path, resp.StatusCode, want)
		}
	}
}

// recordingObserver keeps what a RunObserver is told.
type recordingObserver struct {
	mu      sync.Mutex
	n       int
	started map[int][]time.Duration
	ended   map[int]int
}

func (o *recordingObserver) ObservePipelines(n int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.n, o.started, o.ended = n, map[int][]time.Duration{}, map[int]int{}
}

func (o *recordingObserver) RunStarted(i int, late time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.started[i] = append(o.started[i], late)
}

func (o *recordingObserver) RunEnded(i int, _ time.Duration) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.ended[i]++
}

func (o *recordingObserver) ServeHTTP(http.ResponseWriter, *http.Request) {}

func (o *recordingObserver) Bind(*runtime.WorkerPool) {}

// TestRunObserverAndEachPipeline: the observer learns the number of
// pipelines before any run and each run by the pipeline's index; a run
// the schedule planned is told of its lateness, a run asked for now is
// not; EachPipeline reads the same indexes with the status /status serves.
func TestRunObserverAndEachPipeline(t *testing.T) {
	clock := clocktest.NewFake(t0) // 10:07:30
	pipe := func(id string, s runtime.Schedule, err error) *runtime.ScheduledPipeline {
		return &runtime.ScheduledPipeline{PipelineID: id, Schedule: s, ErrorBackoff: time.Hour,
			Factory: func(context.Context) (runtime.Pipeline, error) {
				return runtime.PipelineFunc(func(context.Context) error { return err }), nil
			}}
	}
	obs := &recordingObserver{}
	d := &poolDriver{clock: clock, logs: &syncBuffer{}, opts: []runtime.PoolOption{runtime.WithMetrics(obs)}}
	d.start(t, pipe("every", runtime.Every(time.Hour), nil), pipe("cron", runtime.MustCron("* * * * *"), errors.New("boom")))
	defer func() { _ = d.stop(t) }()
	advanceTo(t, clock, d, t0.Add(30*time.Second)) // 10:08: cron's first slot
	obs.mu.Lock()
	if obs.n != 2 || len(obs.started[0]) != 1 || len(obs.started[1]) != 1 || obs.ended[0] != 1 || obs.ended[1] != 1 {
		t.Errorf("observer told n=%d, started %v, ended %v; want 2 pipelines, one run each", obs.n, obs.started, obs.ended)
	}
	obs.mu.Unlock()

	seen := map[int]string{}
	d.pool.EachPipeline(func(rd *runtime.PipelineReading) {
		seen[rd.Index] = rd.Status.PipelineID
		st := rd.Status
		switch st.PipelineID {
		case "every":
			if st.Outcomes.Succeeded != 1 || st.LastSuccess == nil || rd.Interval != time.Hour {
				t.Errorf("every: succeeded %d, last success %v, interval %v", st.Outcomes.Succeeded, st.LastSuccess, rd.Interval)
			}
		case "cron":
			if st.Outcomes.Errored != 1 || st.State != runtime.StateBackoff || rd.Planned.IsZero() || rd.Interval != time.Minute {
				t.Errorf("cron: errored %d, state %v, planned %v, interval %v", st.Outcomes.Errored, st.State, rd.Planned, rd.Interval)
			}
		}
		if want := d.status(t, st.PipelineID); want.Runs != st.Runs || want.LastError != st.LastError {
			t.Errorf("%s: EachPipeline reads runs %d %q, /status %d %q", st.PipelineID, st.Runs, st.LastError, want.Runs, want.LastError)
		}
	})
	if seen[0] != "every" || seen[1] != "cron" || len(seen) != 2 {
		t.Errorf("EachPipeline read %v, want every and cron by registration order", seen)
	}
}

// TestEachPipelineAllocatesPerScrape: reading a hundred pipelines
// allocates what reading one does.
func TestEachPipelineAllocatesPerScrape(t *testing.T) {
	allocs := func(n int) float64 {
		var sps []*runtime.ScheduledPipeline
		for i := range n {
			sps = append(sps, &runtime.ScheduledPipeline{PipelineID: "p" + strconv.Itoa(i), Schedule: runtime.Every(time.Hour),
				Factory: func(context.Context) (runtime.Pipeline, error) {
					return runtime.PipelineFunc(func(context.Context) error { return nil }), nil
				}})
		}
		d := &poolDriver{clock: clocktest.NewFake(t0), logs: &syncBuffer{}}
		d.start(t, sps...)
		defer func() { _ = d.stop(t) }()
		d.settle(t)
		return testing.AllocsPerRun(20, func() { d.pool.EachPipeline(func(*runtime.PipelineReading) {}) })
	}
	if one, hundred := allocs(1), allocs(100); hundred > one {
		t.Errorf("EachPipeline allocates %v times over 100 pipelines, %v over one", hundred, one)
	}
}
