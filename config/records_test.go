package config

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/history"
)

// ackSource hands out fixed batches and records which were acknowledged.
type ackSource struct {
	batches [][]etl.Record
	acked   int
	closed  bool
}

func (s *ackSource) Read(_ context.Context, max int) (etl.Batch, error) {
	if len(s.batches) == 0 {
		return etl.Batch{}, io.EOF
	}
	b := s.batches[0]
	s.batches = s.batches[1:]
	if len(b) > max {
		panic("batch larger than asked for")
	}
	return etl.Batch{Records: b, Ack: func(context.Context) error { s.acked++; return nil }}, nil
}

func (s *ackSource) Close() error { s.closed = true; return nil }

// failSink fails every write as a whole.
type failSink struct{}

func (failSink) Write(context.Context, []etl.Record) error { return errors.New("unreachable") }

// flushSink counts records and flushes.
type flushSink struct {
	n, flushes int
}

func (s *flushSink) Write(_ context.Context, r []etl.Record) error { s.n += len(r); return nil }
func (s *flushSink) Flush(context.Context) error                   { s.flushes++; return nil }

func recs(fields ...string) []etl.Record {
	out := make([]etl.Record, len(fields))
	for i, f := range fields {
		out[i] = etl.Record{f: i}
	}
	return out
}

func TestRecordPipelineMovesBatchesAndAcks(t *testing.T) {
	src := &ackSource{batches: [][]etl.Record{recs("a", "b"), recs("c")}}
	sink := &flushSink{}
	pl := newRecordPipeline(&Pipeline{ID: "p", BatchSize: 2, MaxDeadLetters: -1}, src, []etl.Sink{sink}, nil)
	ctx, counts := runtime.ContextWithRecordCounts(context.Background())
	if err := pl.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if sink.n != 3 || sink.flushes != 2 || src.acked != 2 || counts() != (history.RecordCounts{In: 3, Out: 3}) {
		t.Errorf("sink %+v, acked %d, counts %+v", sink, src.acked, counts())
	}
	if !src.closed {
		t.Errorf("source not closed at the end of the run")
	}
}

func TestRecordPipelineDeadLetters(t *testing.T) {
	var accepted, dead []etl.Record
	reject := &rejectSink{field: "bad", got: &accepted}
	dlq := &rejectSink{field: "\x00never", got: &dead}
	run := func(maxDead int, dlq etl.Sink) (*ackSource, error) {
		accepted, dead = nil, nil
		src := &ackSource{batches: [][]etl.Record{recs("ok", "bad", "bad", "ok")}}
		pl := newRecordPipeline(&Pipeline{ID: "p", BatchSize: 10, MaxDeadLetters: maxDead}, src, []etl.Sink{reject}, dlq)
		return src, pl.Run(context.Background())
	}
	src, err := run(-1, dlq)
	if err != nil || len(accepted) != 2 || len(dead) != 2 || src.acked != 1 {
		t.Fatalf("err %v, accepted %d, dead %d, acked %d", err, len(accepted), len(dead), src.acked)
	}
	if rec, _ := dead[0]["record"].(etl.Record); rec["bad"] != 1 || !strings.Contains(fmt.Sprint(dead[0]["error"]), "refused") {
		t.Errorf("dead letter = %v", dead[0])
	}
	// Beyond max_dead_letters the run fails and the batch is not acknowledged.
	if src, err := run(1, dlq); err == nil || src.acked != 0 {
		t.Errorf("max 1: err %v, acked %d", err, src.acked)
	}
	if _, err := run(2, dlq); err != nil {
		t.Errorf("max 2 with two dead letters: %v", err)
	}
	// No DLQ: a rejection fails the run.
	if src, err := run(-1, nil); err == nil || src.acked != 0 {
		t.Errorf("no dlq: err %v, acked %d", err, src.acked)
	}
	// A DLQ that cannot take the records fails the run, unacknowledged.
	if src, err := run(-1, failSink{}); err == nil || !strings.Contains(err.Error(), "unreachable") || src.acked != 0 {
		t.Errorf("dlq down: err %v, acked %d", err, src.acked)
	}
}

func TestRecordPipelineSinkFailureFailsTheRun(t *testing.T) {
	src := &ackSource{batches: [][]etl.Record{recs("a")}}
	err := newRecordPipeline(&Pipeline{ID: "p", BatchSize: 1, MaxDeadLetters: -1}, src, []etl.Sink{failSink{}}, nil).Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "unreachable") || src.acked != 0 {
		t.Errorf("err %v, acked %d", err, src.acked)
	}
}

func TestRecordPipelineStopsAtShutdown(t *testing.T) {
	src := &ackSource{batches: [][]etl.Record{recs("a"), recs("b")}}
	sink := &flushSink{}
	stop := make(chan struct{})
	close(stop)
	ctx := runtime.ContextWithShutdown(context.Background(), stop)
	if err := newRecordPipeline(&Pipeline{ID: "p", BatchSize: 1, MaxDeadLetters: -1}, src, []etl.Sink{sink}, nil).Run(ctx); err != nil || sink.n != 0 {
		t.Errorf("err %v, written %d after shutdown", err, sink.n)
	}
}
