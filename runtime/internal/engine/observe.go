package engine

import "time"

// observeLateness and observeDuration tell the pool's observer, if any,
// of r's run.
func (env *runEnv) observeLateness(r *Runner, d time.Duration) {
	if o := env.observer; o != nil {
		o.RunStarted(int(r.index), d)
	}
}

func (env *runEnv) observeDuration(r *Runner, d time.Duration) {
	if o := env.observer; o != nil {
		o.RunEnded(int(r.index), d)
	}
}
