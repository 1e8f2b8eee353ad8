package runtime

import (
	"sync"
	"testing"
)

// TestRunnerStopRacesStopChan asks for the ShutdownRequested channel while
// the pool stops the runner, the way a run and a shutdown meet. The channel
// must end up closed exactly once: a second close panics the worker.
func TestRunnerStopRacesStopChan(t *testing.T) {
	for range 2000 {
		r := &runner{}
		var wg sync.WaitGroup
		var ch <-chan struct{}
		wg.Go(r.stop)
		wg.Go(func() { ch = r.stopChan() })
		wg.Wait()
		select {
		case <-ch:
		default:
			t.Fatal("ShutdownRequested channel still open after stop")
		}
		r.stop() // a second stop changes nothing
	}
}
