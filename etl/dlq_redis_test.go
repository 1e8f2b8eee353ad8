package etl_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/internal/redistest"
	"github.com/agora-etl/agora/runtime"
)

// rejectOddJSON refuses records whose (JSON-decoded) id is odd.
func rejectOddJSON(r etl.Record) error {
	if s := fmt.Sprint(r["id"]); (s[len(s)-1]-'0')%2 == 1 {
		return fmt.Errorf("id %s is odd", s)
	}
	return nil
}

func TestDLQDownLeavesTheStreamBatchPendingUntilItIsBack(t *testing.T) {
	srv := redistest.Start(t)
	dlqSrv := redistest.Start(t)
	c := redisClient(t, srv)
	addEntries(t, c, "in", 0, 10)
	lease := runtime.Lease{PipelineID: "p", RunNumber: 7, FencingToken: 3}
	ctx := runtime.ContextWithLease(context.Background(), lease)

	run := func() (*memSink, error) {
		src := newStreamSource(t, etl.RedisStreamSourceConfig{URL: srv.URL(), Stream: "in", Group: "g", Consumer: "c"})
		// No retries: the outage is the point, and retrying only slows the test.
		dlq, err := etl.NewRedisStreamSink(etl.RedisStreamSinkConfig{URL: dlqSrv.URL() + "?max_retries=-1", Stream: "dead"})
		if err != nil {
			t.Fatal(err)
		}
		db := &memSink{name: "db", reject: rejectOddJSON}
		return db, etl.New(src, []etl.Sink{db}, etl.WithDLQ(dlq), etl.WithBatchSize(4)).Run(ctx)
	}

	dlqSrv.Kill()
	if _, err := run(); !errors.Is(err, etl.ErrDLQFailed) {
		t.Fatalf("run with the DLQ down: %v", err)
	}
	// The first batch, and the second when it was read ahead.
	if n := pendingCount(t, c, "in", "g"); n != 4 && n != 8 {
		t.Fatalf("pending = %d, want the first batch of 4 unacknowledged", n)
	}

	dlqSrv.Restart()
	db, err := run()
	if err != nil {
		t.Fatal(err)
	}
	if n := pendingCount(t, c, "in", "g"); n != 0 {
		t.Fatalf("pending = %d after a good run", n)
	}
	var accepted []string
	for _, r := range db.records() {
		accepted = append(accepted, fmt.Sprint(r["id"]))
	}
	if !slices.Equal(accepted, []string{"0", "2", "4", "6", "8"}) {
		t.Fatalf("the sink accepted %v", accepted)
	}
	// The DLQ holds exactly the odd records, each with its reason and run.
	dead, err := etl.NewRedisStreamSource(etl.RedisStreamSourceConfig{URL: dlqSrv.URL(), Stream: "dead", Group: "check"})
	if err != nil {
		t.Fatal(err)
	}
	defer dead.Close()
	b, err := dead.Read(context.Background(), 100)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range b.Records {
		rec := l[etl.DeadLetterRecord].(map[string]any)
		got = append(got, fmt.Sprintf("%v|%v|%v|%v|%v|%v", rec["id"], l[etl.DeadLetterError], l[etl.DeadLetterSink],
			l[etl.DeadLetterPipelineID], l[etl.DeadLetterRunNumber], l[etl.DeadLetterFencingToken]))
	}
	want := []string{"1|id 1 is odd|db|p|7|3", "3|id 3 is odd|db|p|7|3", "5|id 5 is odd|db|p|7|3", "7|id 7 is odd|db|p|7|3", "9|id 9 is odd|db|p|7|3"}
	if !slices.Equal(got, want) {
		t.Fatalf("dead letters %v\nwant %v", got, want)
	}
}
