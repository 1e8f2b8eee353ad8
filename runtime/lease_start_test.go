package runtime_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
)

// forgetfulCoord grants leases but answers CurrentLease "not held" on the
// call numbered forgetAt (1-based), as a coordinator does when the lease
// was lost right after it was granted.
type forgetfulCoord struct {
	*fakeCoord
	forgetAt int32
	calls    atomic.Int32
}

func (c *forgetfulCoord) CurrentLease(id string) (runtime.Lease, bool) {
	if c.calls.Add(1) == c.forgetAt {
		return runtime.Lease{}, false
	}
	return c.fakeCoord.CurrentLease(id)
}

// TestNoRunWhenTheLeaseIsLostBeforeTheRunStarts loses the lease in each of
// the two moments before a run has a context the loss could cancel: right
// after the grant, and while the run is being set up. Either way the
// pipeline does not run (and the attempt is not a failure).
func TestNoRunWhenTheLeaseIsLostBeforeTheRunStarts(t *testing.T) {
	for _, tc := range []struct {
		name     string
		forgetAt int32
		log      string
	}{
		{"right after the grant", 1, "lease lost right after it was granted; not running"},
		{"while the run is set up", 2, "lease lost before the run started; not running"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			coord := &forgetfulCoord{fakeCoord: newFakeCoord(), forgetAt: tc.forgetAt}
			var built atomic.Int32
			sp := &runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.Once(), Factory: func(ctx context.Context) (runtime.Pipeline, error) {
				built.Add(1)
				return nopFactory(ctx)
			}}
			logs := &syncBuffer{}
			pool := runtime.NewWorkerPool(runtime.WithLogger(testLogger(logs)), runtime.WithSignalHandling(false), runtime.WithCoordinator(coord)).Register(sp)
			ctx, cancel := context.WithCancel(context.Background())
			done := runAsync(pool, ctx)
			waitClosed(t, pool.Started(), "the pool to start")
			// The Once pipeline runs after the next lease retry; the first
			// attempt, whose lease was lost, must not have built it.
			deadline := time.Now().Add(5 * time.Second)
			for built.Load() == 0 && !strings.Contains(logs.String(), tc.log) {
				if time.Now().After(deadline) {
					t.Fatalf("no attempt logged %q:\n%s", tc.log, logs)
				}
				time.Sleep(time.Millisecond)
			}
			if n := built.Load(); n != 0 {
				t.Fatalf("the factory ran %d time(s) without a lease", n)
			}
			cancel()
			if err := waitErr(t, done); err != nil {
				t.Fatal(err)
			}
			if st := pool.Status().Pipelines[0]; st.Failures != 0 {
				t.Fatalf("a lost lease counted as %d failure(s)", st.Failures)
			}
		})
	}
}
