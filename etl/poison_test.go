package etl_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/etl/transform"
	"github.com/agora-etl/agora/internal/redistest"
	"github.com/agora-etl/agora/runtime"
)

// addRatioEntries adds n entries {"id": i, "a": i, "b": 1} to stream,
// except the entry with id poison, whose b is 0.
func addRatioEntries(t *testing.T, c *redis.Client, stream string, n, poison int) {
	t.Helper()
	pipe := c.Pipeline()
	for i := range n {
		b := 1
		if i == poison {
			b = 0
		}
		pipe.XAdd(context.Background(), &redis.XAddArgs{Stream: stream, Values: []any{"data", fmt.Sprintf(`{"id":%d,"a":%d,"b":%d}`, i, i, b)}})
	}
	if _, err := pipe.Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// readJSONLines decodes every line of a JSON-lines file.
func readJSONLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("%s: line %q: %v", path, sc.Text(), err)
		}
		out = append(out, m)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func ratioMap(t *testing.T) etl.Transform {
	t.Helper()
	m, err := transform.Map(map[string]string{"ratio": "double(record.a) / double(record.b)"})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The repro: a map whose result for one record is +Inf, which JSON
// cannot carry. The file sink rejects that record alone, its dead letter
// (the source's record, the output's +Inf as text) lands in the file
// dead-letter queue, and the stream drains in one run.
func TestPoisonStreamRecordIsDeadLetteredAndTheStreamDrains(t *testing.T) {
	srv := redistest.Start(t)
	c := redisClient(t, srv)
	addRatioEntries(t, c, "in", 1000, 600)
	dir := t.TempDir()
	out, dlqPath := filepath.Join(dir, "out.jsonl"), filepath.Join(dir, "dlq", "dead.jsonl")
	sink, err := etl.NewFileSink(etl.FileSinkConfig{Path: out})
	if err != nil {
		t.Fatal(err)
	}
	dlq, err := etl.NewFileSink(etl.FileSinkConfig{Path: dlqPath})
	if err != nil {
		t.Fatal(err)
	}
	src := newStreamSource(t, etl.RedisStreamSourceConfig{URL: srv.URL(), Stream: "in", Group: "g"})
	ctx, tally := runtime.ContextWithRecordCounts(context.Background())
	p := etl.New(src, []etl.Sink{sink}, etl.WithDLQ(dlq), etl.WithBatchSize(100), etl.WithTransforms(ratioMap(t)))
	if err := p.Run(ctx); err != nil {
		t.Fatalf("run: %v", err)
	}
	lines := readJSONLines(t, out)
	seen := map[float64]int{}
	for _, l := range lines {
		seen[l["id"].(float64)]++
	}
	if len(lines) != 999 || len(seen) != 999 || seen[600] != 0 {
		t.Fatalf("%d lines for %d ids (id 600 %d times), want 999 distinct ids without 600", len(lines), len(seen), seen[600])
	}
	dead := readJSONLines(t, dlqPath)
	if len(dead) != 1 {
		t.Fatalf("dead letters %v, want one", dead)
	}
	dl := dead[0]
	rec, _ := dl[etl.DeadLetterRecord].(map[string]any)
	output, _ := dl[etl.DeadLetterOutput].(map[string]any)
	if rec["id"] != 600.0 || rec["b"] != 0.0 || rec["ratio"] != nil {
		t.Fatalf("dead letter record %v, want the source's record of id 600", rec)
	}
	if output["ratio"] != "+Inf" {
		t.Fatalf("dead letter output %v, want ratio +Inf as text", output)
	}
	if e, _ := dl[etl.DeadLetterError].(string); !strings.Contains(e, `field "ratio": +Inf has no JSON form`) {
		t.Fatalf("dead letter error %q, want it to name the field and the value", e)
	}
	if dl[etl.DeadLetterPosition] == nil || dl[etl.DeadLetterSink] != "file("+out+")" {
		t.Fatalf("dead letter %v: want the entry id and the sink", dl)
	}
	if n := pendingCount(t, c, "in", "g"); n != 0 {
		t.Fatalf("%d entries pending after the run, want none", n)
	}
	if counts := tally(); counts.In != 1000 || counts.Out != 999 || counts.DeadLettered != 1 {
		t.Fatalf("counts %+v, want in 1000 = out 999 + dead-lettered 1", counts)
	}
}

// Without a dead-letter queue the poison record fails the run, and the
// error names it by its entry id, so the pipeline's status (its last
// error) says which record blocks the stream.
func TestPoisonStreamRecordWithoutDLQNamesItsEntry(t *testing.T) {
	srv := redistest.Start(t)
	c := redisClient(t, srv)
	addRatioEntries(t, c, "in", 250, 120)
	var poisonID string
	entries, err := c.XRange(context.Background(), "in", "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	poisonID = entries[120].ID
	sink, err := etl.NewFileSink(etl.FileSinkConfig{Path: filepath.Join(t.TempDir(), "out.jsonl")})
	if err != nil {
		t.Fatal(err)
	}
	src := newStreamSource(t, etl.RedisStreamSourceConfig{URL: srv.URL(), Stream: "in", Group: "g"})
	err = etl.New(src, []etl.Sink{sink}, etl.WithBatchSize(100), etl.WithTransforms(ratioMap(t))).Run(context.Background())
	if !errors.Is(err, etl.ErrNoDLQ) || !errors.Is(err, etl.ErrUnencodable) ||
		!strings.Contains(err.Error(), "record 21 of a batch of 100 (redis_stream(in) at "+poisonID+")") {
		t.Fatalf("run: %v, want ErrNoDLQ naming record 21 of the batch and entry %s", err, poisonID)
	}
	if n := pendingCount(t, c, "in", "g"); n == 0 {
		t.Fatal("the failed batch was acknowledged")
	}
}
