package etl_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/agora-etl/agora/etl"
)

// When the dead-letter queue fails, the batch is not acknowledged and the
// run fails; the file sink, which had taken the batch but not flushed it,
// discards it, so the retry writes every line once (docs/etl.md, "What a
// retry writes again").
func TestAFailedDLQRetryWritesTheFileSinkOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.jsonl")
	run := func(dlq etl.Sink) (*ackSource, error) {
		file, err := etl.NewFileSink(etl.FileSinkConfig{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		picky := &memSink{name: "picky", reject: rejectOdd}
		src := &ackSource{n: 4}
		return src, etl.New(src, []etl.Sink{file, picky}, etl.WithDLQ(dlq)).Run(context.Background())
	}
	src, err := run(&memSink{name: "dlq", fail: errDown})
	if !errors.Is(err, etl.ErrDLQFailed) || len(src.acked) != 0 {
		t.Fatalf("run with the dead-letter queue down = %v, acked %v; want ErrDLQFailed, nothing acknowledged", err, src.acked)
	}
	if got, _ := os.ReadFile(path); len(got) != 0 {
		t.Fatalf("the failed run left %q in the file", got)
	}
	dlq := &memSink{name: "dlq"}
	if _, err := run(dlq); err != nil {
		t.Fatalf("retry: %v", err)
	}
	got, _ := os.ReadFile(path)
	if want := "{\"id\":0}\n{\"id\":1}\n{\"id\":2}\n{\"id\":3}\n"; string(got) != want {
		t.Fatalf("file after the retry = %q, want each record once: %q", got, want)
	}
	if len(dlq.records()) != 2 {
		t.Fatalf("%d dead letters, want 2", len(dlq.records()))
	}
}
