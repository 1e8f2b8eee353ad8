package cli_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

const kafkaPipeline = `format = "agora/v1"

[pipelines.copy.source]
type = "kafka"
brokers = [%q]
topic = "orders"
group = "agora"
block = "300ms"

[pipelines.copy.schedule]
mode = "continuous"

[[pipelines.copy.sinks]]
type = "file"
path = "orders.jsonl"

[[pipelines.copy.sinks]]
type = "kafka"
brokers = [%q]
topic = "orders-copy"
key = "id"
`

// TestRunMovesKafkaRecordsOnce runs the agora command against an
// in-process Kafka on 127.0.0.1: a run copies the topic to a file and to
// another topic, and commits, so the next run copies only what came since.
func TestRunMovesKafkaRecordsOnce(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "orders", "orders-copy"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	broker := c.ListenAddrs()[0]
	cl, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.DefaultProduceTopic("orders"))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	produce := func(from, to int) {
		t.Helper()
		var recs []*kgo.Record
		for i := from; i < to; i++ {
			recs = append(recs, &kgo.Record{Value: fmt.Appendf(nil, `{"id":%d}`, i)})
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}
	dir := t.TempDir()
	path := writeConfig(t, dir, "kafka.toml", fmt.Sprintf(kafkaPipeline, broker, broker))
	lines := func() []string {
		b, err := os.ReadFile(filepath.Join(dir, "orders.jsonl"))
		if err != nil {
			t.Fatal(err)
		}
		return strings.Fields(string(b))
	}

	produce(0, 5)
	start := time.Now()
	if code, _, stderr := runAgora(t, dir, []string{"AGORA_DISTRIBUTED_REDIS_URL="}, "run", "--config", path); code != 0 {
		t.Fatalf("agora run: exit %d\n%s", code, stderr)
	}
	if got := lines(); len(got) != 5 {
		t.Fatalf("orders.jsonl after the first run: %v", got)
	}
	produce(5, 8)
	// The first process left the group on exit: the second gets the
	// partitions at once, not after a session timeout.
	if code, _, stderr := runAgora(t, dir, []string{"AGORA_DISTRIBUTED_REDIS_URL="}, "run", "--config", path); code != 0 {
		t.Fatalf("agora run: exit %d\n%s", code, stderr)
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Errorf("two runs took %v", d)
	}
	got := lines()
	if len(got) != 8 {
		t.Fatalf("orders.jsonl after the second run: %v, want 8 records, each once", got)
	}
	seen := map[string]bool{}
	for _, l := range got {
		seen[l] = true
	}
	for i := range 8 {
		if !seen[fmt.Sprintf(`{"id":%d}`, i)] {
			t.Fatalf("record %d missing: %v", i, got)
		}
	}

	// The copy topic got every record, keyed by id.
	rd, err := kgo.NewClient(kgo.SeedBrokers(broker), kgo.ConsumeTopics("orders-copy"), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var copied []*kgo.Record
	for len(copied) < 8 && ctx.Err() == nil {
		copied = append(copied, rd.PollFetches(ctx).Records()...)
	}
	if len(copied) != 8 {
		t.Fatalf("orders-copy holds %d records, want 8", len(copied))
	}
	for _, r := range copied {
		if want := fmt.Sprintf(`{"id":%s}`, r.Key); string(r.Value) != want {
			t.Fatalf("orders-copy record key %q value %s", r.Key, r.Value)
		}
	}
}

func TestCheckDiagnosesKafkaTables(t *testing.T) {
	dir := t.TempDir()
	path := writeConfig(t, dir, "bad.toml", `format = "agora/v1"

[pipelines.p.source]
type = "kafak"
brokers = ["127.0.0.1:9092"]

[pipelines.p.schedule]
mode = "continuous"

[[pipelines.p.sinks]]
type = "kafka"
brokers = ["127.0.0.1:9092"]
topik = "out"
`)
	code, stdout, stderr := runAgora(t, dir, nil, "check", path)
	if code != 1 {
		t.Fatalf("exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, want := range []string{
		`bad.toml:4:8: pipelines.p.source.type: unknown source type "kafak" (did you mean "kafka"?)`,
		`bad.toml:13:1: pipelines.p.sinks[0]: unknown key "topik" (did you mean "topic"?)`,
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
}
