package etl_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/agora-etl/agora/etl"
)

// completingSink is a memSink that records Complete.
type completingSink struct {
	*memSink
	failComplete error
}

func (s *completingSink) Complete(ctx context.Context) error {
	s.ev.add("complete %s", s.name)
	return s.failComplete
}

// A successful run tells every Completer, the dead-letter queue included,
// after its last batch was flushed and acknowledged, through Named too.
func TestPipelineCompletesSinksAfterTheLastBatch(t *testing.T) {
	ev := &events{}
	src := &ackSource{n: 3, ev: ev}
	a := &completingSink{memSink: &memSink{name: "a", ev: ev}}
	plain := &memSink{name: "plain", ev: ev}
	dlq := &completingSink{memSink: &memSink{name: "dlq", ev: ev}}
	p := etl.New(src, []etl.Sink{etl.Named("named-a", a), plain}, etl.WithBatchSize(2), etl.WithDLQ(dlq))
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"read 2", "write a 2", "write plain 2", "flush a", "flush plain", "flush dlq", "ack 0",
		"read 1", "write a 1", "write plain 1", "flush a", "flush plain", "flush dlq", "ack 1",
		"complete a", "complete dlq",
		"close a", "close plain", "close dlq",
	}
	if got := ev.list(); !slices.Equal(got, want) {
		t.Fatalf("events:\n%v\nwant\n%v", got, want)
	}
}

// A run that fails completes nothing; a failed Complete fails the run.
func TestPipelineCompletesOnlyASuccessfulRun(t *testing.T) {
	ev := &events{}
	a := &completingSink{memSink: &memSink{name: "a", ev: ev, fail: errDown}}
	if err := etl.New(&ackSource{n: 3, ev: ev}, []etl.Sink{a}).Run(context.Background()); !errors.Is(err, errDown) {
		t.Fatalf("err = %v, want the write error", err)
	}
	if slices.Contains(ev.list(), "complete a") {
		t.Fatalf("a failed run completed its sink: %v", ev.list())
	}
	refused := errors.New("slot done")
	b := &completingSink{memSink: &memSink{name: "b", ev: ev}, failComplete: refused}
	if err := etl.New(&ackSource{n: 3, ev: ev}, []etl.Sink{b}).Run(context.Background()); !errors.Is(err, refused) {
		t.Fatalf("err = %v, want the Complete error", err)
	}
}
