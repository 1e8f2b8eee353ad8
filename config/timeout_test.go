package config

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/history"
)

// hangConfig configures a source that blocks until its run is cancelled.
type hangConfig struct{}

type hangSource struct{}

func (hangSource) Read(ctx context.Context, _ int) (etl.Batch, error) {
	<-ctx.Done()
	return etl.Batch{}, context.Cause(ctx)
}

// TestPipelineTimeoutCancelsTheRun runs, for real, a pipeline whose source
// never returns, with a timeout of a few milliseconds: the run fails with
// runtime.ErrRunTimeout, and the summary shows the timeout.
func TestPipelineTimeoutCancelsTheRun(t *testing.T) {
	var out testOutputs
	reg := testRegistry(&out)
	etl.RegisterSource(reg, "hang", "blocks until cancelled", func(context.Context, hangConfig) (etl.Source, error) { return hangSource{}, nil })
	doc := `format = "agora/v1"
[pipelines.slow]
timeout = "20ms"
max_consecutive_errors = 1
source = { type = "hang" }
sinks = [{ type = "stdout" }]
schedule = { mode = "once" }
`
	f, err := Parse("c.toml", []byte(doc), WithRegistry(reg), WithLookupEnv(noEnv))
	if err != nil {
		t.Fatal(err)
	}
	if s := f.Summary(); !strings.Contains(s, "max_dead_letters unlimited, timeout 20ms\n") {
		t.Errorf("summary does not show the timeout:\n%s", s)
	}
	sp := f.ScheduledPipelines()[0]
	if sp.Timeout != 20*time.Millisecond {
		t.Fatalf("ScheduledPipeline.Timeout = %s", sp.Timeout)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = sp.Start(ctx)
	if !errors.Is(err, runtime.ErrRunTimeout) || !errors.Is(err, runtime.ErrTooManyErrors) {
		t.Fatalf("Start = %v, want the run failed with ErrRunTimeout", err)
	}
}

// TestTransformsRunBetweenSourceAndSinks decodes transforms tables and
// runs them: the filtered record is not written, the map's field is.
func TestTransformsRunBetweenSourceAndSinks(t *testing.T) {
	var out testOutputs
	doc := `format = "agora/v1"
[pipelines.orders]
source = { type = "iterable", records = [{ amount = 2 }, { amount = -1 }] }
sinks = [{ type = "stdout" }]
schedule = { mode = "once" }
[[pipelines.orders.transforms]]
type = "filter"
expr = "record.amount > 0"
[[pipelines.orders.transforms]]
type = "map"
fields = { total = "double(record.amount) * 1.5" }
`
	f, err := Parse("c.toml", []byte(doc), WithRegistry(testRegistry(&out)), WithLookupEnv(noEnv))
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.Pipelines[0].Factory()(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, counts := runtime.ContextWithRecordCounts(context.Background())
	if err := p.Run(ctx); err != nil {
		t.Fatal(err)
	}
	out.mu.Lock()
	got := out.stdout.String()
	out.mu.Unlock()
	if !strings.Contains(got, `"total":3`) || strings.Contains(got, "-1") {
		t.Fatalf("written %q", got)
	}
	if c := counts(); c != (history.RecordCounts{In: 2, Out: 1, Filtered: 1}) {
		t.Fatalf("counts %+v", c)
	}
}
