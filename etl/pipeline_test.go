package etl_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/clocktest"
	"github.com/agora-etl/agora/runtime/history"
)

func TestPipelineMovesEveryRecordInBatches(t *testing.T) {
	ev := &events{}
	src := &ackSource{n: 7, ev: ev}
	a, b := &memSink{name: "a", ev: ev}, &memSink{name: "b", ev: ev}
	p := etl.New(src, []etl.Sink{a, b}, etl.WithBatchSize(3))
	ctx, counts := runtime.ContextWithRecordCounts(context.Background())
	if err := p.Run(ctx); err != nil {
		t.Fatal(err)
	}
	for _, s := range []*memSink{a, b} {
		got := s.records()
		if len(got) != 7 {
			t.Fatalf("sink %s got %d records, want 7", s.name, len(got))
		}
		for i, r := range got {
			if r["id"] != i {
				t.Fatalf("sink %s record %d = %v", s.name, i, r)
			}
		}
		if s.closed != 1 {
			t.Fatalf("sink %s closed %d times", s.name, s.closed)
		}
	}
	if src.closed != 1 || !slices.Equal(src.acked, []int{0, 1, 2}) {
		t.Fatalf("source closed %d, acked %v", src.closed, src.acked)
	}
	want := []string{
		"read 3", "write a 3", "write b 3", "flush a", "flush b", "ack 0",
		"read 3", "write a 3", "write b 3", "flush a", "flush b", "ack 1",
		"read 1", "write a 1", "write b 1", "flush a", "flush b", "ack 2",
		"close a", "close b",
	}
	if got := ev.list(); !slices.Equal(got, want) {
		t.Fatalf("events:\n%v\nwant\n%v", got, want)
	}
	if c := counts(); c != (history.RecordCounts{In: 7, Out: 7}) {
		t.Fatalf("counts = %+v", c)
	}
}

func TestPipelineWithoutAckFlushesOnceAtTheEnd(t *testing.T) {
	ev := &events{}
	src := &ackSource{n: 5, ev: ev, noAck: true}
	a := &memSink{name: "a", ev: ev}
	if err := etl.New(src, []etl.Sink{a}, etl.WithBatchSize(2)).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := []string{"read 2", "write a 2", "read 2", "write a 2", "read 1", "write a 1", "flush a", "close a"}
	if got := ev.list(); !slices.Equal(got, want) {
		t.Fatalf("events %v, want %v", got, want)
	}
}

func TestPipelineDeadLettersRejectedRecords(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 8, time.UTC)
	clock := clocktest.NewFake(at)
	ev := &events{}
	src := &ackSource{n: 6, ev: ev}
	picky := &memSink{name: "picky", ev: ev, reject: rejectOdd}
	all := &memSink{name: "all", ev: ev}
	dlq := &memSink{name: "dlq", ev: ev}
	p := etl.New(src, []etl.Sink{all, picky}, etl.WithDLQ(dlq), etl.WithBatchSize(4), etl.WithClock(clock))
	lease := runtime.Lease{PipelineID: "orders", WorkerID: "w1", RunNumber: 1700000000, FencingToken: 42}
	ctx, counts := runtime.ContextWithRecordCounts(runtime.ContextWithLease(context.Background(), lease))
	if err := p.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(all.records()); n != 6 {
		t.Fatalf("the accepting sink got %d records, want 6", n)
	}
	letters := dlq.records()
	if len(letters) != 3 {
		t.Fatalf("dlq got %d letters, want 3: %v", len(letters), letters)
	}
	for i, l := range letters {
		id := 2*i + 1
		want := etl.Record{
			etl.DeadLetterRecord:       etl.Record{"id": id},
			etl.DeadLetterError:        "id " + string(rune('0'+id)) + " is odd",
			etl.DeadLetterSink:         "picky",
			etl.DeadLetterSinkIndex:    1,
			etl.DeadLetterPipelineID:   "orders",
			etl.DeadLetterRunNumber:    int64(1700000000),
			etl.DeadLetterFencingToken: int64(42),
			etl.DeadLetterWorkerID:     "w1",
			etl.DeadLetterTime:         "2026-03-04T05:06:07.000000008Z",
		}
		if !recordsEqual(l, want) {
			t.Fatalf("letter %d = %v\nwant %v", i, l, want)
		}
	}
	if !slices.Equal(src.acked, []int{0, 1}) {
		t.Fatalf("acked %v", src.acked)
	}
	// The dead letters are written and flushed before the batch is acknowledged.
	want := []string{
		"read 4", "write all 4", "write picky 4", "write dlq 2", "flush all", "flush picky", "flush dlq", "ack 0",
		"read 2", "write all 2", "write picky 2", "write dlq 1", "flush all", "flush picky", "flush dlq", "ack 1",
		"close all", "close picky", "close dlq",
	}
	if got := ev.list(); !slices.Equal(got, want) {
		t.Fatalf("events:\n%v\nwant\n%v", got, want)
	}
	if c := counts(); c != (history.RecordCounts{In: 6, Out: 3, DeadLettered: 3}) {
		t.Fatalf("counts = %+v", c)
	}
}

func TestPipelineRecordRejectedByTwoSinksIsOneDeadRecordAndTwoLetters(t *testing.T) {
	src := &ackSource{n: 2}
	a := &memSink{name: "a", reject: rejectOdd}
	b := etl.Named("second", &memSink{reject: rejectOdd})
	dlq := &memSink{name: "dlq"}
	ctx, counts := runtime.ContextWithRecordCounts(context.Background())
	if err := etl.New(src, []etl.Sink{a, b}, etl.WithDLQ(dlq)).Run(ctx); err != nil {
		t.Fatal(err)
	}
	var sinks []string
	for _, l := range dlq.records() {
		sinks = append(sinks, l[etl.DeadLetterSink].(string))
	}
	if !slices.Equal(sinks, []string{"a", "second"}) {
		t.Fatalf("letters from %v", sinks)
	}
	if c := counts(); c != (history.RecordCounts{In: 2, Out: 1, DeadLettered: 1}) {
		t.Fatalf("counts = %+v", c)
	}
}

func TestPipelineUnnamedSinkIsNamedByPosition(t *testing.T) {
	dlq := &memSink{name: "dlq"}
	anon := etl.Sink(anonSink{})
	if err := etl.New(&ackSource{n: 1}, []etl.Sink{&memSink{name: "x"}, anon}, etl.WithDLQ(dlq)).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := dlq.records(); len(got) != 1 || got[0][etl.DeadLetterSink] != "sinks[1]" || got[0][etl.DeadLetterError] != "no" {
		t.Fatalf("letters = %v", got)
	}
}

type anonSink struct{}

func (anonSink) Write(_ context.Context, r []etl.Record) error {
	return &etl.RejectedError{Rejections: []etl.Rejection{{Index: 0, Err: errors.New("no")}}}
}

func TestPipelineFailures(t *testing.T) {
	for _, tc := range []struct {
		name    string
		sinks   func() []etl.Sink
		opts    func() []etl.Option
		wantErr error
		wantIn  string
		acked   []int
	}{
		{
			name:    "batch-level sink error",
			sinks:   func() []etl.Sink { return []etl.Sink{&memSink{name: "db", fail: errDown}} },
			wantErr: errDown, wantIn: "sink db",
		},
		{
			name:    "rejection without a DLQ",
			sinks:   func() []etl.Sink { return []etl.Sink{&memSink{name: "db", reject: rejectOdd}} },
			wantErr: etl.ErrNoDLQ, wantIn: "id 1 is odd",
		},
		{
			name:    "DLQ down",
			sinks:   func() []etl.Sink { return []etl.Sink{&memSink{name: "db", reject: rejectOdd}} },
			opts:    func() []etl.Option { return []etl.Option{etl.WithDLQ(&memSink{name: "dlq", fail: errDown})} },
			wantErr: etl.ErrDLQFailed, wantIn: "connection refused",
		},
		{
			name:  "DLQ rejects",
			sinks: func() []etl.Sink { return []etl.Sink{&memSink{name: "db", reject: rejectOdd}} },
			opts: func() []etl.Option {
				return []etl.Option{etl.WithDLQ(&memSink{name: "dlq", reject: func(etl.Record) error { return errors.New("full") }})}
			},
			wantErr: etl.ErrDLQFailed, wantIn: "full",
		},
		{
			name:  "DLQ flush fails",
			sinks: func() []etl.Sink { return []etl.Sink{&memSink{name: "db", reject: rejectOdd}} },
			opts: func() []etl.Option {
				return []etl.Option{etl.WithDLQ(&memSink{name: "dlq", failFlush: errDown})}
			},
			wantErr: etl.ErrDLQFailed, wantIn: "flush",
		},
		{
			name:  "too many dead letters",
			sinks: func() []etl.Sink { return []etl.Sink{&memSink{name: "db", reject: rejectOdd}} },
			opts: func() []etl.Option {
				return []etl.Option{etl.WithDLQ(&memSink{name: "dlq"}), etl.WithMaxDeadLetters(2), etl.WithBatchSize(2)}
			},
			// Batches {0,1} and {2,3} put 2 records in the DLQ; {4,5} is one too many.
			wantErr: etl.ErrTooManyDeadLetters, wantIn: "3 records", acked: []int{0, 1},
		},
		{
			name:    "sink flush fails",
			sinks:   func() []etl.Sink { return []etl.Sink{&memSink{name: "db", failFlush: errDown}} },
			wantErr: errDown, wantIn: "flush",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := &ackSource{n: 6}
			var opts []etl.Option
			if tc.opts != nil {
				opts = tc.opts()
			}
			sinks := tc.sinks()
			err := etl.New(src, sinks, opts...).Run(context.Background())
			if !errors.Is(err, tc.wantErr) || !strings.Contains(err.Error(), tc.wantIn) {
				t.Fatalf("err = %v, want %v mentioning %q", err, tc.wantErr, tc.wantIn)
			}
			if !slices.Equal(src.acked, tc.acked) {
				t.Fatalf("acked batches %v, want %v", src.acked, tc.acked)
			}
			if src.closed != 1 || sinks[0].(*memSink).closed != 1 {
				t.Fatal("a failed run must still close its components")
			}
		})
	}
}

func TestPipelineStopsBetweenBatchesOnShutdown(t *testing.T) {
	shutdown := make(chan struct{})
	src := &ackSource{n: 100, hook: func(batch int) {
		if batch == 1 {
			close(shutdown) // while the second batch is being read
		}
	}}
	sink := &memSink{name: "s"}
	ctx := runtime.ContextWithShutdown(context.Background(), shutdown)
	if err := etl.New(src, []etl.Sink{sink}, etl.WithBatchSize(10)).Run(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(sink.records()); n != 20 {
		t.Fatalf("sink got %d records, want the 2 batches read before the shutdown was seen", n)
	}
	if !slices.Equal(src.acked, []int{0, 1}) {
		t.Fatalf("acked %v", src.acked)
	}
}

func TestPipelineReturnsTheContextError(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	src := &ackSource{n: 100, hook: func(batch int) {
		if batch == 1 {
			cancel()
		}
	}}
	err := etl.New(src, []etl.Sink{&memSink{name: "s"}}, etl.WithBatchSize(10)).Run(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

func TestPipelineRunsOnceAndChecksItsParts(t *testing.T) {
	p := etl.New(&ackSource{n: 1}, []etl.Sink{&memSink{}})
	if err := p.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := p.Run(context.Background()); !errors.Is(err, etl.ErrAlreadyRun) {
		t.Fatalf("second run: %v", err)
	}
	err := etl.New(nil, []etl.Sink{nil}, etl.WithBatchSize(0)).Run(context.Background())
	for _, want := range []string{"nil source", "sink 0 is nil", "batch size 0"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("err = %v, want it to mention %q", err, want)
		}
	}
	if err := etl.New(&ackSource{n: 1}, nil).Run(context.Background()); err == nil || !strings.Contains(err.Error(), "no sinks") {
		t.Fatalf("no sinks: %v", err)
	}
}

func TestPipelineRejectionIndexOutOfRangeFailsTheRun(t *testing.T) {
	bad := badIndexSink{}
	err := etl.New(&ackSource{n: 2}, []etl.Sink{bad}, etl.WithDLQ(&memSink{})).Run(context.Background())
	if err == nil || !strings.Contains(err.Error(), "rejected record 5 of a batch of 2") {
		t.Fatalf("err = %v", err)
	}
}

type badIndexSink struct{}

func (badIndexSink) Write(context.Context, []etl.Record) error {
	return &etl.RejectedError{Rejections: []etl.Rejection{{Index: 5, Err: errors.New("x")}}}
}

// recordsEqual compares records whose values are comparable or records.
func recordsEqual(a, b etl.Record) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok {
			return false
		}
		if vr, ok := v.(etl.Record); ok {
			wr, ok := w.(etl.Record)
			if !ok || !recordsEqual(vr, wr) {
				return false
			}
			continue
		}
		if v != w {
			return false
		}
	}
	return true
}

// markSink records whether each Write was told a rejection fails the run.
type markSink struct {
	name  string
	marks []bool
}

func (s *markSink) Name() string { return s.name }

func (s *markSink) Write(ctx context.Context, _ []etl.Record) error {
	s.marks = append(s.marks, etl.RejectsFailRun(ctx))
	return nil
}

func TestPipelineTellsSinksWhetherARejectionFailsTheRun(t *testing.T) {
	db, dlq := &markSink{name: "db"}, &rejectAllSink{}
	db2 := &markSink{name: "db"}
	// With a DLQ, a rejection is dead-lettered: the sink writes the others.
	if err := etl.New(&ackSource{n: 1}, []etl.Sink{db, anonSink{}}, etl.WithDLQ(&markSink{name: "dlq"})).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(db.marks, []bool{false}) {
		t.Fatalf("with a DLQ: marks %v, want [false]", db.marks)
	}
	// Without one, the rejection fails the run: the sink must write nothing.
	_ = etl.New(&ackSource{n: 1}, []etl.Sink{db2}).Run(context.Background())
	if !slices.Equal(db2.marks, []bool{true}) {
		t.Fatalf("without a DLQ: marks %v, want [true]", db2.marks)
	}
	// The DLQ's own Write: a letter it refuses fails the run.
	_ = etl.New(&ackSource{n: 1}, []etl.Sink{anonSink{}}, etl.WithDLQ(dlq)).Run(context.Background())
	if !slices.Equal(dlq.marks, []bool{true}) {
		t.Fatalf("the DLQ: marks %v, want [true]", dlq.marks)
	}
}

// rejectAllSink records the mark and rejects its first record.
type rejectAllSink struct{ marks []bool }

func (s *rejectAllSink) Name() string { return "dlq" }

func (s *rejectAllSink) Write(ctx context.Context, _ []etl.Record) error {
	s.marks = append(s.marks, etl.RejectsFailRun(ctx))
	return &etl.RejectedError{Rejections: []etl.Rejection{{Index: 0, Err: errors.New("full")}}}
}
