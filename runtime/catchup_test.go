package runtime_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/clocktest"
)

// completionCoord is a fakeCoord that remembers the fleet's last completed
// slot, like the distributed coordinator.
type completionCoord struct {
	*fakeCoord
	lmu  sync.Mutex
	last int64
}

func (c *completionCoord) Capabilities() runtime.Capabilities {
	caps := c.fakeCoord.Capabilities()
	caps.CompletionReader = c
	return caps
}

func (c *completionCoord) LastCompleted(context.Context, string) (int64, bool, error) {
	c.lmu.Lock()
	defer c.lmu.Unlock()
	return c.last, c.last != 0, nil
}

// at is 10:mm:ss on the test day.
func at(m, s int) time.Time { return time.Date(2025, 3, 10, 10, m, s, 0, time.UTC) }

// slotsOf returns the run numbers as times.
func slotsOf(l *leaseLog) []time.Time {
	var out []time.Time
	for _, lease := range l.list() {
		out = append(out, time.Unix(lease.RunNumber, 0).UTC())
	}
	return out
}

func sameTimes(got, want []time.Time) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		if !got[i].Equal(want[i]) {
			return false
		}
	}
	return true
}

func TestCatchUpAfterTheProcessMissedSlots(t *testing.T) {
	for _, c := range []struct {
		policy runtime.CatchUpPolicy
		want   []time.Time
	}{
		// 10:14 is 30 s late, more than the 10 s grace: skip runs nothing.
		{runtime.CatchUpSkip, nil},
		{runtime.CatchUpLatest, []time.Time{at(14, 0)}},
		{runtime.CatchUpAll, []time.Time{at(8, 0), at(9, 0), at(10, 0), at(11, 0), at(12, 0), at(13, 0), at(14, 0)}},
	} {
		t.Run(c.policy.String(), func(t *testing.T) {
			clock := clocktest.NewFake(t0) // 10:07:30
			var runs leaseLog
			d := &poolDriver{clock: clock, logs: &syncBuffer{}, opts: []runtime.PoolOption{runtime.WithCoordinator(newFakeCoord())}}
			d.start(t, &runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.MustCron("* * * * *"),
				CatchUp: c.policy, Grace: 10 * time.Second, Factory: runs.factory(nil)})
			d.settle(t)
			clock.Set(at(14, 30)) // suspended from 10:07:30 to 10:14:30
			d.settle(t)
			if got := slotsOf(&runs); !sameTimes(got, c.want) {
				t.Fatalf("ran %v, want %v", got, c.want)
			}
			// Back on schedule: 10:15 runs once.
			advanceTo(t, clock, d, at(15, 0))
			if got := slotsOf(&runs); len(got) != len(c.want)+1 || !got[len(got)-1].Equal(at(15, 0)) {
				t.Fatalf("after 10:15: %v", got)
			}
			if err := d.stop(t); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestCatchUpAllIsBoundedAtMaxCatchUpRuns(t *testing.T) {
	clock := clocktest.NewFake(at(0, 0))
	var runs leaseLog
	logs := &syncBuffer{}
	d := &poolDriver{clock: clock, logs: logs, opts: []runtime.PoolOption{runtime.WithCoordinator(newFakeCoord())}}
	d.start(t, &runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.MustCron("* * * * * *"),
		CatchUp: runtime.CatchUpAll, Factory: runs.factory(nil)})
	d.settle(t)
	clock.Set(at(5, 0)) // 300 one-second slots missed
	d.settle(t)
	got := slotsOf(&runs)
	if len(got) != runtime.MaxCatchUpRuns+1 {
		t.Fatalf("%d runs, want %d oldest missed slots and the current one", len(got), runtime.MaxCatchUpRuns)
	}
	for i := range runtime.MaxCatchUpRuns {
		if want := at(0, 1).Add(time.Duration(i) * time.Second); !got[i].Equal(want) {
			t.Fatalf("catch-up run %d for %v, want %v", i, got[i], want)
		}
	}
	if !got[runtime.MaxCatchUpRuns].Equal(at(5, 0)) {
		t.Fatalf("after the bound ran %v, want the current slot 10:05:00", got[runtime.MaxCatchUpRuns])
	}
	if !strings.Contains(logs.String(), "catch-up bound reached") {
		t.Fatal("the skipped rest is not logged")
	}
	// 199 were skipped; past 100 the count is walked no further and
	// reported as a lower bound.
	if st := d.status(t, "p"); st.MissedSlots < 100 || st.MissedSlots > 300-runtime.MaxCatchUpRuns-1 {
		t.Fatalf("missed slots %d, want between 100 and %d", st.MissedSlots, 300-runtime.MaxCatchUpRuns-1)
	}
	if err := d.stop(t); err != nil {
		t.Fatal(err)
	}
}

func TestCatchUpAtStartFromTheFleetsLastCompletedSlot(t *testing.T) {
	for _, c := range []struct {
		policy runtime.CatchUpPolicy
		want   []time.Time
	}{
		{runtime.CatchUpSkip, nil},
		{runtime.CatchUpLatest, []time.Time{at(7, 0)}},
		{runtime.CatchUpAll, []time.Time{at(4, 0), at(5, 0), at(6, 0), at(7, 0)}},
	} {
		t.Run(c.policy.String(), func(t *testing.T) {
			clock := clocktest.NewFake(t0) // 10:07:30; the fleet last completed 10:03
			coord := &completionCoord{fakeCoord: newFakeCoord(), last: at(3, 0).Unix()}
			var runs leaseLog
			d := &poolDriver{clock: clock, logs: &syncBuffer{}, opts: []runtime.PoolOption{runtime.WithCoordinator(coord)}}
			d.start(t, &runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.MustCron("* * * * *"),
				CatchUp: c.policy, Factory: runs.factory(nil)})
			d.settle(t)
			if got := slotsOf(&runs); !sameTimes(got, c.want) {
				t.Fatalf("ran at start %v, want %v", got, c.want)
			}
			advanceTo(t, clock, d, at(8, 0))
			if got := slotsOf(&runs); len(got) != len(c.want)+1 || !got[len(got)-1].Equal(at(8, 0)) {
				t.Fatalf("after 10:08: %v", got)
			}
			if err := d.stop(t); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestCatchUpAfterTheCoordinatorWasDown(t *testing.T) {
	clock := clocktest.NewFake(t0)
	coord := newFakeCoord()
	var down sync.Mutex
	unavailable := true
	coord.decide = func(string, int64) (bool, error) {
		down.Lock()
		defer down.Unlock()
		if unavailable {
			return false, errors.New("redis: connection refused")
		}
		return true, nil
	}
	var runs leaseLog
	d := &poolDriver{clock: clock, logs: &syncBuffer{}, opts: []runtime.PoolOption{runtime.WithCoordinator(coord)}}
	d.start(t, &runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.MustCron("* * * * *"),
		CatchUp: runtime.CatchUpAll, Factory: runs.factory(nil)})
	advanceTo(t, clock, d, at(10, 30)) // 10:08, 10:09, 10:10 fail to get a lease
	if n := len(runs.list()); n != 0 {
		t.Fatalf("%d runs while the coordinator was down", n)
	}
	if refused := countCalls(coord, "refuse p"); refused != 3 {
		t.Fatalf("%d lease requests while down, want one per slot (no retry loop)", refused)
	}
	down.Lock()
	unavailable = false
	down.Unlock()
	advanceTo(t, clock, d, at(11, 0))
	want := []time.Time{at(8, 0), at(9, 0), at(10, 0), at(11, 0)}
	if got := slotsOf(&runs); !sameTimes(got, want) {
		t.Fatalf("after recovery ran %v, want %v", got, want)
	}
	if err := d.stop(t); err != nil {
		t.Fatal(err)
	}
}

func TestParseCatchUpPolicy(t *testing.T) {
	for _, p := range []runtime.CatchUpPolicy{runtime.CatchUpSkip, runtime.CatchUpLatest, runtime.CatchUpAll} {
		got, err := runtime.ParseCatchUpPolicy(p.String())
		if err != nil || got != p {
			t.Fatalf("ParseCatchUpPolicy(%s) = %v, %v", p, got, err)
		}
	}
	if _, err := runtime.ParseCatchUpPolicy("some"); err == nil || !strings.Contains(err.Error(), "want skip, latest or all") {
		t.Fatalf("bad policy: %v", err)
	}
	pool := quietPool().Register(&runtime.ScheduledPipeline{PipelineID: "p", Schedule: runtime.Every(time.Second),
		Factory: nopFactory, Grace: -time.Second, CatchUp: 9})
	err := pool.Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "negative Grace") || !strings.Contains(err.Error(), "unknown CatchUp policy 9") {
		t.Fatalf("validation: %v", err)
	}
}
