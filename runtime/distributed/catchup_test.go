package distributed

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/clocktest"
)

// TestCatchUpAllAfterEveryReplicaWasDown runs three replicas on a real
// redis-server and one shared fake clock, stops them all for four
// one-minute slots and starts three fresh ones: with CatchUpAll the missed
// slots run, oldest first, each exactly once across the fleet.
func TestCatchUpAllAfterEveryReplicaWasDown(t *testing.T) {
	r := newReal(t)
	at := func(m int) time.Time { return time.Date(2026, 3, 1, 10, m, 0, 0, time.UTC) }
	clock := clocktest.NewFake(at(0).Add(30 * time.Second))
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	var (
		mu   sync.Mutex
		runs = map[int64]int{} // slot → runs
	)
	slots := func() []int64 {
		mu.Lock()
		defer mu.Unlock()
		var out []int64
		for s, n := range runs {
			for range n {
				out = append(out, s)
			}
		}
		sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
		return out
	}
	startFleet := func(gen int) (stop func()) {
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		for i := range 3 {
			opts := r.options(5 * time.Second)
			opts.Logger, opts.Clock = quiet, clock
			coord, err := NewRedisWorkerCoordinator(opts)
			if err != nil {
				t.Fatal(err)
			}
			pool := runtime.NewWorkerPool(runtime.WithCoordinator(coord), runtime.WithClock(clock),
				runtime.WithWorkerID(fmt.Sprintf("gen%d-replica-%d", gen, i)), runtime.WithLogger(quiet), runtime.WithSignalHandling(false)).
				Register(&runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.MustCron("* * * * *"), CatchUp: runtime.CatchUpAll,
					Factory: func(context.Context) (runtime.Pipeline, error) {
						return runtime.PipelineFunc(func(ctx context.Context) error {
							lease, _ := runtime.LeaseFromContext(ctx)
							mu.Lock()
							runs[lease.RunNumber]++
							mu.Unlock()
							return nil
						}), nil
					}})
			wg.Go(func() { _ = pool.Run(ctx); _ = coord.Close() })
			<-pool.Started()
		}
		return func() { cancel(); wg.Wait() }
	}
	waitSlots := func(n int) {
		t.Helper()
		waitUntil(t, 5*time.Second, fmt.Sprintf("%d runs", n), func() bool { return len(slots()) >= n })
		time.Sleep(50 * time.Millisecond) // room for a duplicate to show
	}

	stop := startFleet(1)
	clock.Set(at(1))
	waitSlots(1)
	clock.Set(at(2))
	waitSlots(2)
	stop() // every replica down from 10:02 to 10:06:30

	clock.Set(at(6).Add(30 * time.Second))
	stop = startFleet(2)
	defer func() { stop() }()
	waitSlots(6)
	clock.Set(at(7))
	waitSlots(7)

	want := []int64{at(1).Unix(), at(2).Unix(), at(3).Unix(), at(4).Unix(), at(5).Unix(), at(6).Unix(), at(7).Unix()}
	if got := slots(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("slots run %v, want each of %v exactly once", got, want)
	}
}
