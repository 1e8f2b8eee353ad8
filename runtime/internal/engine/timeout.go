package engine

import (
	"fmt"
	"sync"
)

// watchTimeout cancels ctx with a cause wrapping ErrRunTimeout once the
// pipeline's Timeout passes on the pool's clock. The function it returns
// stops the watch, and returns that cause when the timeout fired. Without
// a Timeout nothing is started: the common run pays nothing.
func (r *Runner) watchTimeout(ctx *runContext) func() error {
	d := r.sp.Timeout
	if d <= 0 {
		return func() error { return nil }
	}
	t := r.env.clock.NewTimer(d)
	done := make(chan struct{})
	var fired error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		select {
		case <-t.C():
			fired = fmt.Errorf("%w: still running after %s", ErrRunTimeout, d)
			ctx.cancel(fired)
		case <-done:
			t.Stop()
		}
	}()
	return func() error {
		close(done)
		wg.Wait()
		return fired
	}
}
