package runtime_test

import (
	"strings"
	"testing"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/clocktest"
)

// Rule: a triggered run's lines before its lease is granted carry no
// run_number (the coordinator has not numbered it yet), never
// run_number=0.
func TestTriggeredRunLogsNoRunNumberBeforeItHasOne(t *testing.T) {
	clock := clocktest.NewFake(t0)
	coord := newControlCoord()
	var runs leaseLog
	logs := &syncBuffer{}
	d := &poolDriver{clock: clock, logs: logs, opts: []runtime.PoolOption{runtime.WithCoordinator(coord)}}
	d.start(t, &runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.MustCron("0 * * * *"), Factory: runs.factory(nil)})
	d.settle(t)
	coord.trigger("p")
	waitFor(t, func() bool { return d.status(t, "p").Runs == 1 }, "the triggered run")
	if err := d.stop(t); err != nil {
		t.Fatal(err)
	}
	var found bool
	for _, line := range strings.Split(logs.String(), "\n") {
		if strings.Contains(line, `"msg":"run triggered"`) {
			found = true
			if strings.Contains(line, "run_number") {
				t.Errorf("the triggered run's first line has a run number before it was given one: %s", line)
			}
		}
	}
	if !found {
		t.Fatalf("no run triggered line:\n%s", logs)
	}
}
