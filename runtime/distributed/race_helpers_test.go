package distributed

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
)

// raceForOneLease has perCoordinator goroutines on each coordinator race for
// the lease of one pipeline for about 1.5 s, each winner holding it briefly
// while an atomic counter tracks how many believe they hold it. It fails the
// test on any instant with two holders, on a fencing token that is not above
// the one before it, or on too few acquisitions to prove anything, and
// returns the number of acquisitions per worker id.
func raceForOneLease(t *testing.T, coords []*RedisWorkerCoordinator, perCoordinator int) map[string]int {
	t.Helper()
	return raceForLeases(t, coords, perCoordinator, []string{"race"})["race"]
}

// raceForLeases is raceForOneLease for several pipelines at once: each
// goroutine races for every pipeline in turn, and every pipeline is checked
// on its own. It returns the acquisitions per pipeline and worker id.
func raceForLeases(t *testing.T, coords []*RedisWorkerCoordinator, perCoordinator int, pipelineIDs []string) map[string]map[string]int {
	t.Helper()
	ctx := t.Context()
	type race struct {
		holders  atomic.Int32
		mu       sync.Mutex
		tokens   []int64
		byWorker map[string]int
	}
	races := map[string]*race{}
	for _, id := range pipelineIDs {
		races[id] = &race{byWorker: map[string]int{}}
	}
	var (
		violations atomic.Int32
		wg         sync.WaitGroup
	)
	stop := time.Now().Add(1500 * time.Millisecond)
	for _, c := range coords {
		for g := range perCoordinator {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := g; time.Now().Before(stop); i++ {
					id := pipelineIDs[i%len(pipelineIDs)]
					r := races[id]
					ok, err := c.TryAcquireLease(ctx, id, runtime.RunNumberAuto)
					if err != nil {
						t.Errorf("TryAcquireLease(%s): %v", id, err)
						return
					}
					if !ok {
						// A short random pause keeps the spinning goroutines
						// from starving the holder's release of connections.
						time.Sleep(time.Duration(rand.IntN(1000)) * time.Microsecond)
						continue
					}
					if n := r.holders.Add(1); n != 1 {
						violations.Add(1)
					}
					lease, _ := c.CurrentLease(id)
					r.mu.Lock()
					// Appended while holding the lease, so the slice is in
					// acquisition order.
					r.tokens = append(r.tokens, lease.FencingToken)
					r.byWorker[lease.WorkerID]++
					r.mu.Unlock()
					time.Sleep(50 * time.Microsecond)
					r.holders.Add(-1)
					if err := c.ReleaseLease(ctx, id); err != nil {
						t.Errorf("ReleaseLease(%s): %v", id, err)
						return
					}
				}
			}()
		}
	}
	wg.Wait()
	if v := violations.Load(); v != 0 {
		t.Fatalf("%d moments with two holders", v)
	}
	// Fifty acquisitions of one pipeline show exclusivity; with several
	// raced at once each gets a share of the time.
	minAcquisitions := max(50/len(pipelineIDs), 20)
	out := map[string]map[string]int{}
	for _, id := range pipelineIDs {
		r := races[id]
		if len(r.tokens) < minAcquisitions {
			t.Fatalf("only %d acquisitions of %s in the race; the test proves little", len(r.tokens), id)
		}
		for i := 1; i < len(r.tokens); i++ {
			if r.tokens[i] <= r.tokens[i-1] {
				t.Fatalf("%s acquisition %d: token %d not above %d", id, i, r.tokens[i], r.tokens[i-1])
			}
		}
		t.Logf("%s: %d exclusive acquisitions %v", id, len(r.tokens), r.byWorker)
		out[id] = r.byWorker
	}
	return out
}
