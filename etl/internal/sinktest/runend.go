package sinktest

import (
	"context"
	"errors"
	"io"
	"slices"
	"testing"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/etl/fencing"
	"github.com/agora-etl/agora/runtime"
)

// RunRunEnd runs the tests of what a sink does at the edges of a run:
// opening before the first read, a context that ended, and the retry of a
// batch whose dead-letter queue failed.
func RunRunEnd(t *testing.T, db DB) {
	t.Run("OpenChecksTheLease", func(t *testing.T) { OpenChecksTheLease(t, db) })
	t.Run("NothingWrittenAfterTheContextEnds", func(t *testing.T) { NothingWrittenAfterTheContextEnds(t, db) })
	t.Run("DLQFailureRetryPerMode", func(t *testing.T) { DLQFailureRetryPerMode(t, db) })
}

// OpenChecksTheLease: Open refuses a run without a fenced lease (unless
// unfenced writes are allowed) and reaches the database otherwise, so the
// pipeline fails such a run before it reads anything.
func OpenChecksTheLease(t *testing.T, db DB) {
	db.Exec(t, "CREATE TABLE opened (id bigint)")
	strict := db.NewSink(t, Config{Table: "opened", Columns: []string{"id"}}).(etl.Opener)
	local := runtime.ContextWithLease(context.Background(), runtime.Lease{PipelineID: "p"})
	if err := strict.Open(local); !errors.Is(err, fencing.ErrUnfenced) {
		t.Fatalf("unfenced run: Open = %v, want ErrUnfenced", err)
	}
	if err := strict.Open(Leased(5)); err != nil {
		t.Fatalf("fenced run: Open = %v", err)
	}
	loose := db.NewSink(t, Config{Table: "opened", Columns: []string{"id"}, AllowUnfenced: true}).(etl.Opener)
	if err := loose.Open(local); err != nil {
		t.Fatalf("allowed unfenced run: Open = %v", err)
	}
}

// NothingWrittenAfterTheContextEnds: a Write whose context ended (the run's
// timeout fired) writes no row.
func NothingWrittenAfterTheContextEnds(t *testing.T, db DB) {
	db.Exec(t, "CREATE TABLE late (id bigint)")
	sink := db.NewSink(t, Config{Table: "late", Columns: []string{"id"}})
	ctx, cancel := context.WithCancel(Leased(7))
	cancel()
	if err := sink.Write(ctx, []etl.Record{{"id": 1}, {"id": 2}}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Write after the context ended = %v, want context.Canceled", err)
	}
	if got := db.Ints(t, "SELECT count(*) FROM late"); got[0] != 0 {
		t.Fatalf("%d rows written after the context ended", got[0])
	}
}

// DLQFailureRetryPerMode: a batch one of whose records the table refuses
// (a constraint) while the dead-letter queue is down fails its run
// unacknowledged; the sink had already committed the rest. The retry
// writes the batch again: insert mode adds those rows a second time,
// upsert mode replaces them, as docs/etl.md's table says.
func DLQFailureRetryPerMode(t *testing.T, db DB) {
	db.Exec(t, "CREATE TABLE retry_ins (id bigint NOT NULL, qty bigint CHECK (qty >= 0))")
	db.Exec(t, "CREATE TABLE retry_up (id bigint PRIMARY KEY, qty bigint CHECK (qty >= 0))")
	batch := func() []etl.Record {
		return []etl.Record{{"id": 1, "qty": 1}, {"id": 2, "qty": -1}, {"id": 3, "qty": 3}}
	}
	run := func(dlq etl.Sink) error {
		ins := db.NewSink(t, Config{Table: "retry_ins", Columns: []string{"id", "qty"}})
		up := db.NewSink(t, Config{Table: "retry_up", Columns: []string{"id", "qty"}, Mode: "upsert", Key: []string{"id"}})
		return etl.New(&onceSource{recs: batch()}, []etl.Sink{ins, up}, etl.WithDLQ(dlq)).Run(Leased(9))
	}
	if err := run(downSink{}); !errors.Is(err, etl.ErrDLQFailed) {
		t.Fatalf("run with the dead-letter queue down = %v, want ErrDLQFailed", err)
	}
	dlq := &keepSink{}
	if err := run(dlq); err != nil {
		t.Fatalf("retry: %v", err)
	}
	if len(dlq.got) != 2 {
		t.Fatalf("%d dead letters on the retry, want 2 (record 2 in each table)", len(dlq.got))
	}
	if got := db.Ints(t, "SELECT id FROM retry_ins ORDER BY id"); !slices.Equal(got, []int64{1, 1, 3, 3}) {
		t.Fatalf("insert mode after the retry: ids %v, want [1 1 3 3] (written again)", got)
	}
	if got := db.Ints(t, "SELECT id FROM retry_up ORDER BY id"); !slices.Equal(got, []int64{1, 3}) {
		t.Fatalf("upsert mode after the retry: ids %v, want [1 3] (replaced)", got)
	}
}

// onceSource hands out its records in one acknowledged batch.
type onceSource struct {
	recs []etl.Record
	done bool
}

func (s *onceSource) Read(context.Context, int) (etl.Batch, error) {
	if s.done {
		return etl.Batch{}, io.EOF
	}
	s.done = true
	return etl.Batch{Records: s.recs, Ack: func(context.Context) error { return nil }}, nil
}

// downSink fails every write, as an unreachable dead-letter queue does.
type downSink struct{}

func (downSink) Write(context.Context, []etl.Record) error { return errors.New("connection refused") }

// keepSink keeps what it is given.
type keepSink struct{ got []etl.Record }

func (s *keepSink) Write(_ context.Context, recs []etl.Record) error {
	s.got = append(s.got, recs...)
	return nil
}
