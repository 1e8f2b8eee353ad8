package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// timeoutConfig is the repro: a filter far slower than the run's
// timeout over two records, and a file sink.
const timeoutConfig = `format = "agora/v1"

[pipelines.slow]
timeout = "1s"
source = { type = "iterable", records = [{ id = 1, xs = [0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19] }, { id = 2, xs = [0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19] }] }
schedule = { mode = "once" }

[[pipelines.slow.transforms]]
type = "filter"
expr = "record.xs.all(a, record.xs.all(b, record.xs.all(c, record.xs.all(d, record.xs.all(e, a + b + c + d + e >= 0)))))"

[[pipelines.slow.sinks]]
type = "file"
path = "out.jsonl"
`

// A run past its timeout writes nothing more: the file sink gets no line,
// whether the filter is stopped by the deadline or finishes late. Through
// agora run and agora worker.
func TestARunPastItsTimeoutWritesNothing(t *testing.T) {
	for _, cmd := range []string{"run", "worker"} {
		t.Run(cmd, func(t *testing.T) {
			dir := t.TempDir()
			path := writeConfig(t, dir, "p.toml", timeoutConfig)
			env := []string{"AGORA_DISTRIBUTED_REDIS_URL="}
			var stderr string
			if cmd == "run" {
				var code int
				code, _, stderr = runAgora(t, dir, env, "run", "--config", path)
				if code == 0 {
					t.Fatalf("agora run: exit 0, want the run to fail\n%s", stderr)
				}
			} else {
				p := startAgora(t, dir, env, "worker", "--config", path, "-health-port", "0")
				p.waitOutput(t, p.stderr, "run failed", 2*time.Minute)
				p.signal(t, syscall.SIGINT)
				p.wait(t, 2*time.Minute)
				stderr = p.stderr.String()
			}
			got, err := os.ReadFile(filepath.Join(dir, "out.jsonl"))
			if err != nil && !os.IsNotExist(err) {
				t.Fatal(err)
			}
			if len(got) != 0 {
				t.Fatalf("out.jsonl = %q after the timeout, want nothing\n%s", got, stderr)
			}
			if !strings.Contains(stderr, "timed out") && !strings.Contains(stderr, "cost") {
				t.Fatalf("the failure does not say why:\n%s", stderr)
			}
		})
	}
}
