package engine

import (
	"testing"
	"time"
)

type observed struct{ started, ended []time.Duration }

func (o *observed) RunStarted(_ int, d time.Duration) { o.started = append(o.started, d) }
func (o *observed) RunEnded(_ int, d time.Duration)   { o.ended = append(o.ended, d) }

func TestObserver(t *testing.T) {
	env := testEnv(systemClock{}, nil)
	r := newRunner(&Spec{PipelineID: "p"}, env)
	env.observeLateness(r, time.Second) // no observer: nothing
	o := &observed{}
	env.observer = o
	env.observeLateness(r, time.Second)
	env.observeDuration(r, time.Minute)
	if len(o.started) != 1 || o.started[0] != time.Second || len(o.ended) != 1 || o.ended[0] != time.Minute {
		t.Fatalf("observed %+v", o)
	}
}
