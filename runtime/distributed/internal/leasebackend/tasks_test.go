package leasebackend

import (
	"testing"
	"time"
)

func TestTaskPoolReusesIdleGoroutines(t *testing.T) {
	p := NewTaskPool()
	defer p.Close()
	done := make(chan struct{})
	for range 100 {
		p.Run(func() { done <- struct{}{} })
		<-done
	}
	// Work arriving while every goroutine is busy still runs at once.
	block := make(chan struct{})
	started := make(chan struct{}, 3)
	for range 3 {
		p.Run(func() { started <- struct{}{}; <-block })
	}
	for range 3 {
		select {
		case <-started:
		case <-time.After(time.Second):
			t.Fatal("a task waited for a busy goroutine")
		}
	}
	close(block)
}
