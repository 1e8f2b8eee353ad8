package leasebackend

import (
	"sync"
	"time"
)

// taskIdle is how long an idle task goroutine waits for work before ending.
const taskIdle = 5 * time.Second

// TaskPool runs the requests of quorum fan-outs on goroutines that outlive
// one request: a fresh goroutine per request would grow a fresh stack inside
// go-redis every time, which costs as much as the request's own work on the
// client. A request goes to an idle goroutine when there is one and to a new
// one otherwise, so a stalled node never holds up others.
type TaskPool struct {
	tasks chan func()
	quit  chan struct{}
	once  sync.Once
}

// NewTaskPool returns a TaskPool with no goroutines yet.
func NewTaskPool() *TaskPool {
	return &TaskPool{tasks: make(chan func()), quit: make(chan struct{})}
}

// Run runs f on an idle goroutine, or on a new one.
func (p *TaskPool) Run(f func()) {
	select {
	case p.tasks <- f:
	default:
		go p.work(f)
	}
}

func (p *TaskPool) work(f func()) {
	f()
	idle := time.NewTimer(taskIdle)
	defer idle.Stop()
	for {
		select {
		case f := <-p.tasks:
			f()
			idle.Reset(taskIdle)
		case <-idle.C:
			return
		case <-p.quit:
			return
		}
	}
}

// Close ends the idle goroutines; busy ones end after their task.
func (p *TaskPool) Close() { p.once.Do(func() { close(p.quit) }) }
