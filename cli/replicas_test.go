package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/agora-etl/agora/internal/redistest"
)

const replicaConfig = `format = "agora/v1"

[pipelines.ticks.source]
type = "iterable"
records = [{replica = "${REPLICA}"}]

[pipelines.ticks.schedule]
mode = "cron"
expr = "* * * * * *"

[[pipelines.ticks.sinks]]
type = "file"
path = "${OUT_DIR}/${REPLICA}.jsonl"
`

// runLine is a replica's "run finished" log line.
type runLine struct {
	Msg      string `json:"msg"`
	Pipeline string `json:"pipeline_id"`
	Number   int64  `json:"run_number"`
	Token    int64  `json:"fencing_token"`
}

func TestThreeReplicasRunEachCronSlotOnce(t *testing.T) {
	srv := redistest.Start(t)
	dir := t.TempDir()
	path := writeConfig(t, dir, "pipelines.toml", replicaConfig)
	names := []string{"r1", "r2", "r3"}
	var procs []*agoraProc
	for _, name := range names {
		procs = append(procs, startAgora(t, dir, []string{
			"AGORA_DISTRIBUTED_REDIS_URL=" + srv.URL(),
			"AGORA_DISTRIBUTED_LEASE_TTL_SECONDS=10",
			"AGORA_DISTRIBUTED_HEARTBEAT_INTERVAL=1s",
			"REPLICA=" + name, "OUT_DIR=" + dir,
		}, "worker", "--config", path, "-log-format", "json"))
	}

	// Let a few slots pass on every replica, then stop them all.
	deadline := time.Now().Add(30 * time.Second)
	for len(slotsRun(t, procs)) < 4 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	for _, p := range procs {
		p.signal(t, syscall.SIGINT)
	}
	for i, p := range procs {
		if code := p.wait(t, 20*time.Second); code != 0 {
			t.Fatalf("replica %s exit %d\n%s", names[i], code, p.stderr)
		}
	}

	runs := slotsRun(t, procs)
	if len(runs) < 4 {
		t.Fatalf("only %d slots ran in 30 s", len(runs))
	}
	bySlot := map[int64]int{}
	for _, r := range runs {
		bySlot[r.Number]++
		if r.Token <= 0 {
			t.Fatalf("run %+v has no fencing token", r)
		}
	}
	for slot, n := range bySlot {
		if n != 1 {
			t.Fatalf("slot %d ran %d times across the replicas", slot, n)
		}
	}
	sort.Slice(runs, func(i, j int) bool { return runs[i].Number < runs[j].Number })
	for i := 1; i < len(runs); i++ {
		if runs[i].Token <= runs[i-1].Token {
			t.Fatalf("fencing tokens not increasing with the slots: %+v then %+v", runs[i-1], runs[i])
		}
	}
	// What the sinks hold matches what the logs say ran.
	total := 0
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(dir, name+".jsonl"))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		for _, l := range lines(string(data)) {
			var rec map[string]string
			if err := json.Unmarshal([]byte(l), &rec); err != nil || rec["replica"] != name {
				t.Fatalf("%s.jsonl line %q: want {\"replica\":%q}", name, l, name)
			}
			total++
		}
	}
	if total != len(runs) {
		t.Fatalf("sinks hold %d records, logs show %d runs", total, len(runs))
	}
}

// slotsRun parses the finished runs out of every replica's log.
func slotsRun(t *testing.T, procs []*agoraProc) []runLine {
	t.Helper()
	var out []runLine
	for _, p := range procs {
		for _, l := range lines(p.stderr.String()) {
			var r runLine
			if json.Unmarshal([]byte(l), &r) == nil && r.Msg == "run finished" && r.Pipeline == "ticks" {
				out = append(out, r)
			}
		}
	}
	return out
}
