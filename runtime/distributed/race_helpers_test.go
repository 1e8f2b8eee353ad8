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
	ctx := t.Context()
	var (
		holders    atomic.Int32
		violations atomic.Int32
		mu         sync.Mutex
		tokens     []int64
		byWorker   = map[string]int{}
		wg         sync.WaitGroup
	)
	stop := time.Now().Add(1500 * time.Millisecond)
	for _, c := range coords {
		for range perCoordinator {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for time.Now().Before(stop) {
					ok, err := c.TryAcquireLease(ctx, "race", runtime.RunNumberAuto)
					if err != nil {
						t.Errorf("TryAcquireLease: %v", err)
						return
					}
					if !ok {
						// A short random pause keeps the spinning goroutines
						// from starving the holder's release of connections.
						time.Sleep(time.Duration(rand.IntN(1000)) * time.Microsecond)
						continue
					}
					if n := holders.Add(1); n != 1 {
						violations.Add(1)
					}
					lease, _ := c.CurrentLease("race")
					mu.Lock()
					// Appended while holding the lease, so the slice is in
					// acquisition order.
					tokens = append(tokens, lease.FencingToken)
					byWorker[lease.WorkerID]++
					mu.Unlock()
					time.Sleep(50 * time.Microsecond)
					holders.Add(-1)
					if err := c.ReleaseLease(ctx, "race"); err != nil {
						t.Errorf("ReleaseLease: %v", err)
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
	if len(tokens) < 50 {
		t.Fatalf("only %d acquisitions in the race; the test proves little", len(tokens))
	}
	for i := 1; i < len(tokens); i++ {
		if tokens[i] <= tokens[i-1] {
			t.Fatalf("acquisition %d: token %d not above %d", i, tokens[i], tokens[i-1])
		}
	}
	t.Logf("%d exclusive acquisitions %v", len(tokens), byWorker)
	return byWorker
}
