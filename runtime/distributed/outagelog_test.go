package distributed

import (
	"testing"
	"time"
)

func TestOutageLogLogsTheFirstOutageThenOnePerMinute(t *testing.T) {
	var o outageLog
	t0 := time.Unix(1000, 0)
	if logIt, n := o.down(t0); !logIt || n != 0 {
		t.Fatalf("first outage: log=%v unlogged=%d", logIt, n)
	}
	if !o.up() {
		t.Fatal("the end of a logged outage not logged")
	}
	// Flapping within the minute: silent, ends included.
	for i := 1; i <= 5; i++ {
		if logIt, _ := o.down(t0.Add(time.Duration(i) * time.Second)); logIt {
			t.Fatalf("outage %d within a minute logged", i)
		}
		if o.up() {
			t.Fatalf("end of unlogged outage %d logged", i)
		}
	}
	logIt, n := o.down(t0.Add(outageLogEvery))
	if !logIt || n != 5 {
		t.Fatalf("outage a minute later: log=%v unlogged=%d, want true, 5", logIt, n)
	}
	if !o.up() || o.up() {
		t.Fatal("the end of the logged outage must be logged once")
	}
}

func TestFlappingRedisLogsOneWarningPerMinute(t *testing.T) {
	u := newUnit(t)
	a := u.started(u.options(), "a")
	for range 10 {
		u.mr.SetError("ERR shard down")
		_, _ = a.TryAcquireLease(ctx, "p", slotRun(1))
		u.mr.SetError("")
		if err := a.Healthy(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if n := u.logs.count("distributed: Redis unreachable"); n != 1 {
		t.Errorf("%d warnings for 10 outages within a minute, want 1", n)
	}
	if n := u.logs.count("distributed: Redis reachable again"); n != 1 {
		t.Errorf("%d recovery lines, want 1 (for the logged outage)", n)
	}
	u.advance(outageLogEvery)
	u.mr.SetError("ERR shard down")
	_, _ = a.TryAcquireLease(ctx, "p", slotRun(1))
	if n := u.logs.count("unlogged_outages=9"); n != 1 {
		t.Errorf("the warning a minute later does not count the 9 unlogged outages:\n%s", u.logs)
	}
}
