package cli_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agora-etl/agora/internal/redistest"
)

// Two pipelines with a one-second deadline on a two-second schedule: one
// whose every run fails, one that succeeds.
const deadlineConfig = `format = "agora/v1"

[pipelines.late]
error_backoff = "1s"
deadline = "1s"

[pipelines.late.source]
type = "file"
path = "${OUT_DIR}/missing.jsonl"

[pipelines.late.schedule]
mode = "every"
seconds = 2

[[pipelines.late.sinks]]
type = "file"
path = "${OUT_DIR}/late-${REPLICA}.jsonl"

[pipelines.ontime]
deadline = "1s"

[pipelines.ontime.source]
type = "iterable"
records = [{id = 1}]

[pipelines.ontime.schedule]
mode = "every"
seconds = 2

[[pipelines.ontime.sinks]]
type = "file"
path = "${OUT_DIR}/ontime-${REPLICA}.jsonl"
`

// deadlineEvent is what the webhook receives about a missed deadline.
type deadlineEvent struct {
	Kind     string `json:"event"`
	Pipeline string `json:"pipeline_id"`
	Worker   string `json:"worker_id"`
	Slot     int64  `json:"run_number"`
}

// TestThreeReplicasReportEachMissedDeadlineOnce: three replicas of agora
// worker --config on one Redis, each with the same webhook. Every slot of
// the failing pipeline misses its deadline and is reported once for the
// fleet, not once per replica, also after a replica is SIGKILLed and
// started again; the pipeline whose runs succeed is not reported before
// the kill (after it, the killed replica's lease may keep it from running
// for a few seconds, which is a miss).
func TestThreeReplicasReportEachMissedDeadlineOnce(t *testing.T) {
	srv := redistest.Start(t)
	var mu sync.Mutex
	var events []deadlineEvent
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var e deadlineEvent
		if err := json.NewDecoder(r.Body).Decode(&e); err != nil {
			t.Errorf("webhook body: %v", err)
		}
		if e.Kind == "deadline_missed" {
			mu.Lock()
			events = append(events, e)
			mu.Unlock()
		}
	}))
	defer hook.Close()
	dir := t.TempDir()
	path := writeConfig(t, dir, "pipelines.toml", deadlineConfig)
	start := func(name string) *agoraProc {
		return startAgora(t, dir, []string{
			"AGORA_DISTRIBUTED_REDIS_URL=" + srv.URL(),
			"AGORA_DISTRIBUTED_LEASE_TTL_SECONDS=5",
			"AGORA_DISTRIBUTED_HEARTBEAT_INTERVAL=1s",
			"AGORA_NOTIFY_URL=" + hook.URL,
			"REPLICA=" + name, "OUT_DIR=" + dir,
		}, "worker", "--config", path, "-log-format", "json", "-health-port", "0")
	}
	procs := []*agoraProc{start("r1"), start("r2"), start("r3")}
	reported := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(events)
	}
	waitFor := func(n int, d time.Duration) {
		t.Helper()
		deadline := time.Now().Add(d)
		for reported() < n {
			if time.Now().After(deadline) {
				t.Fatalf("%d deadline events after %s, want %d", reported(), d, n)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	waitFor(2, 30*time.Second)
	killedAt := time.Now()
	procs[0].signal(t, syscall.SIGKILL)
	procs[0].wait(t, 10*time.Second)
	procs[0] = start("r1-again")
	waitFor(reported()+3, 30*time.Second)
	for _, p := range procs {
		p.signal(t, syscall.SIGINT)
	}
	for _, p := range procs {
		p.wait(t, 20*time.Second)
	}

	mu.Lock()
	defer mu.Unlock()
	bySlot := map[int64][]string{}
	var slots []int64
	for _, e := range events {
		if e.Pipeline != "late" {
			// The killed replica may hold the healthy pipeline's lease
			// (for its next window, asked ahead) until the lease's TTL:
			// those windows are missed for real. Before the kill none is.
			if time.Unix(e.Slot, 0).Before(killedAt.Add(-4 * time.Second)) {
				t.Errorf("pipeline %q reported before any fault, though its runs succeed: %+v", e.Pipeline, e)
			}
			continue
		}
		if len(bySlot[e.Slot]) == 0 {
			slots = append(slots, e.Slot)
		}
		bySlot[e.Slot] = append(bySlot[e.Slot], e.Worker)
	}
	sort.Slice(slots, func(i, j int) bool { return slots[i] < slots[j] })
	for _, s := range slots {
		if ws := bySlot[s]; len(ws) > 1 {
			t.Errorf("slot %d reported %d times, by %s; want once for the fleet", s, len(ws), strings.Join(ws, ", "))
		}
	}
	for i := 1; i < len(slots); i++ {
		if gap := slots[i] - slots[i-1]; gap != 2 {
			t.Errorf("slots %d and %d reported, and none of the %d s between: want every slot of the every-2s pipeline", slots[i-1], slots[i], gap)
		}
	}
	t.Logf("%d slots reported, %d events", len(slots), len(events))
}
