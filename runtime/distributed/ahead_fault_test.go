package distributed

import (
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/internal/redistest"
)

// TestAheadFaultsBetweenTheEarlyGrantAndTheBoundaryRunNoSlotTwice hits
// the window lease-ahead opens, on real processes (the fleet of
// stateloss_fleet_test.go: three replicas, two pipelines every cron
// second, a 3 s lease TTL): about 200 ms before a boundary, once the
// coming slot's lease was granted ahead, the holder is SIGKILLed, or
// SIGSTOPped for 4.5 s (past the TTL, so its early grant expires before
// it can start the run), or the Redis restarts empty (the early grant is
// lost with the data while its holder still believes it holds it, and the
// new epoch is before the slot). No slot runs twice.
func TestAheadFaultsBetweenTheEarlyGrantAndTheBoundaryRunNoSlotTwice(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a fleet for about 25 seconds")
	}
	srv := redistest.Start(t)
	f := &lossFleet{t: t, srv: srv}
	names := []string{"w1", "w2", "w3"}
	procs := make([]*lossProc, len(names))
	for i, n := range names {
		procs[i] = f.start(n)
	}
	waitUntil(t, 30*time.Second, "the fleet's first runs", func() bool { return f.count() >= 4 })
	opts, err := redis.ParseURL(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	admin := redis.NewClient(opts)
	defer admin.Close()
	lease := keys{prefix: DefaultKeyPrefix}.lease("a")

	hit := map[string]int{}
	var faulted []int64
	for _, fault := range []string{"kill", "stop", "restart", "kill", "restart"} {
		// Up to five boundaries for one whose lease was granted ahead
		// when the fault is due.
		for try := 0; try < 5; try++ {
			slot := waitForFraction(800 * time.Millisecond)
			held, err := admin.LIndex(ctx, lease, 0).Result()
			var token, run int64
			var owner string
			if err == nil {
				_, _ = fmt.Sscanf(held, "%d %d %s", &token, &run, &owner)
			}
			if run != slot {
				continue // not granted ahead this time (a replica restarting)
			}
			worker, _, _ := strings.Cut(owner, "#")
			victim := -1
			for i, n := range names {
				if n == worker {
					victim = i
				}
			}
			switch {
			case fault == "restart":
				srv.Restart()
			case victim < 0:
				continue
			case fault == "kill":
				_ = procs[victim].cmd.Process.Kill()
				<-procs[victim].done
				names[victim] += "k"
				procs[victim] = f.start(names[victim])
			case fault == "stop":
				p := procs[victim].cmd.Process
				_ = p.Signal(syscall.SIGSTOP)
				time.AfterFunc(4500*time.Millisecond, func() { _ = p.Signal(syscall.SIGCONT) })
			}
			hit[fault]++
			faulted = append(faulted, slot)
			t.Logf("%s at %s before slot %d, whose lease %s holds ahead", fault,
				time.Until(time.Unix(slot, 0)).Round(time.Millisecond), slot, worker)
			break
		}
		time.Sleep(5 * time.Second)
	}
	time.Sleep(2 * time.Second)
	f.stopAll(procs)
	slots, dups := f.checkOnce()
	for _, slot := range faulted {
		var by []string
		for _, r := range f.runs {
			if r.pipeline == "a" && r.slot == slot {
				by = append(by, r.worker)
			}
		}
		t.Logf("slot %d of a ran on %v", slot, by)
	}
	t.Logf("%d runs over %d slots, faults between an early grant and its slot: %v; %d slots ran twice or more",
		f.count(), slots, hit, dups)
	if hit["kill"] == 0 || hit["stop"] == 0 || hit["restart"] == 0 {
		t.Fatalf("faults that hit an early grant: %v; want each kind at least once", hit)
	}
}

// waitForFraction sleeps until the clock is frac past a second and
// returns the next second: the slot about to begin.
func waitForFraction(frac time.Duration) int64 {
	now := time.Now()
	at := now.Truncate(time.Second).Add(frac)
	if !at.After(now) {
		at = at.Add(time.Second)
	}
	time.Sleep(time.Until(at))
	return at.Unix() + 1
}
