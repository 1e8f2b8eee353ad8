package distributed

import (
	"context"
	"testing"

	"github.com/agora-etl/agora/runtime"
)

// A lease says whether its run number is a slot: the database sinks keep a
// slot ledger for slot runs only.
func TestLeaseSlotMarksScheduledRuns(t *testing.T) {
	u := newUnit(t)
	c := u.started(u.options(), "w1")
	ctx := context.Background()
	for _, tc := range []struct {
		run  int64
		slot bool
	}{{testStart.Unix(), true}, {runtime.RunNumberAuto, false}, {runtime.RunNumberOnce, false}} {
		l := mustAcquire(t, c, "p", tc.run)
		if l.Slot != tc.slot {
			t.Errorf("run %d: lease %+v, want Slot %v", tc.run, l, tc.slot)
		}
		if !tc.slot && l.RunNumber != l.FencingToken {
			t.Errorf("run %d: run number %d, want the token %d", tc.run, l.RunNumber, l.FencingToken)
		}
		if err := c.ReleaseLease(ctx, "p"); err != nil {
			t.Fatal(err)
		}
	}
}
