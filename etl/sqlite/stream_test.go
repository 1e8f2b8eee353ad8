package sqlite

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/internal/redistest"
	"github.com/agora-etl/agora/runtime"
)

// letters keeps the dead letters it is given.
type letters struct {
	mu  sync.Mutex
	got []etl.Record
}

func (l *letters) Write(_ context.Context, recs []etl.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, r := range recs {
		l.got = append(l.got, etl.Record{"record": r[etl.DeadLetterRecord], "error": r[etl.DeadLetterError]})
	}
	return nil
}

// The motivating failure: a stream into a table create_table made, then a
// record with a new field. It goes to the dead-letter queue alone; its
// batch's other records are written, the batch acknowledged, and the
// stream goes on instead of failing on the same pending batch forever.
func TestStreamGoesOnPastARecordWithANewField(t *testing.T) {
	srv := redistest.Start(t)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	t.Cleanup(func() { c.Close() })
	add := func(data ...string) {
		t.Helper()
		for _, d := range data {
			if err := c.XAdd(context.Background(), &redis.XAddArgs{Stream: "events", Values: []any{"data", d}}).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	db, _ := testDB(t)
	dead := &letters{}
	run := func(token int64) error {
		src, err := etl.NewRedisStreamSource(etl.RedisStreamSourceConfig{URL: srv.URL(), Stream: "events", Group: "g", Consumer: "c",
			Block: etl.Duration(50 * time.Millisecond)})
		if err != nil {
			t.Fatal(err)
		}
		sink, err := NewSink(db, SinkConfig{Table: "events", CreateTable: true})
		if err != nil {
			t.Fatal(err)
		}
		ctx := runtime.ContextWithLease(context.Background(), runtime.Lease{PipelineID: "events", WorkerID: "w", RunNumber: 1, FencingToken: token})
		return etl.New(src, []etl.Sink{sink}, etl.WithDLQ(dead), etl.WithBatchSize(10)).Run(ctx)
	}

	add(`{"id":1,"name":"a"}`, `{"id":2,"name":"b"}`)
	if err := run(1); err != nil {
		t.Fatal(err)
	}
	add(`{"id":3,"name":"c","extra":true}`, `{"id":4,"name":"d"}`)
	if err := run(2); err != nil {
		t.Fatalf("a record with a new field failed the run: %v", err)
	}
	add(`{"id":5,"name":"e"}`)
	if err := run(3); err != nil {
		t.Fatal(err)
	}
	if got := query[int64](t, db, "SELECT id FROM events ORDER BY id"); !slices.Equal(got, []int64{1, 2, 4, 5}) {
		t.Fatalf("rows %v, want [1 2 4 5]", got)
	}
	if len(dead.got) != 1 || !strings.Contains(dead.got[0]["error"].(string), `table events has no column named "extra"`) {
		t.Fatalf("dead letters %v", dead.got)
	}
	if p, err := c.XPending(context.Background(), "events", "g").Result(); err != nil || p.Count != 0 {
		t.Fatalf("pending %+v, %v; want every entry acknowledged", p, err)
	}
}
