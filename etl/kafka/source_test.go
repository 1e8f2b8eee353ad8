package kafka

import (
	"context"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/runtime"
)

func TestSourceReadsEveryRecordOnceAcknowledged(t *testing.T) {
	_, brokers := newCluster(t, 3, "orders")
	produce(t, brokers, "orders", 0, 25)

	sink := &memSink{}
	src := testSource(t, brokers, "orders", "g", "", 200*time.Millisecond)
	if err := etl.New(src, []etl.Sink{sink}, etl.WithBatchSize(4)).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := sink.ns(t)
	if ok, dups := sameSet(got, 25); !ok || dups != 0 {
		t.Fatalf("read %v, want 0..24 once each", got)
	}
	// The group committed everything: a fresh client of it reads nothing.
	CloseIdle()
	if recs := readAll(t, testSource(t, brokers, "orders", "g", "", 200*time.Millisecond), 100); len(recs) != 0 {
		t.Fatalf("after the commit the group read %d records again", len(recs))
	}
}

// TestSourceKilledBetweenWriteAndCommit: the sink wrote a batch, then the
// source's client was closed hard before the batch was acknowledged; a new
// source in the group reads those records again and nothing is lost.
func TestSourceKilledBetweenWriteAndCommit(t *testing.T) {
	_, brokers := newCluster(t, 2, "events")
	produce(t, brokers, "events", 0, 20)

	var written []etl.Record
	first := testSource(t, brokers, "events", "g", "", 200*time.Millisecond)
	// Two batches acknowledged, the third written and never committed.
	for i := range 3 {
		b, err := first.Read(context.Background(), 5)
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Records) == 0 {
			t.Fatalf("batch %d empty", i)
		}
		written = append(written, b.Records...)
		if i < 2 {
			if err := b.Ack(context.Background()); err != nil {
				t.Fatal(err)
			}
		}
	}
	lost := len(written)
	if err := first.Close(); err != nil { // hard: the client leaves, committing nothing
		t.Fatal(err)
	}

	second := testSource(t, brokers, "events", "g", "", 200*time.Millisecond)
	again := readAll(t, second, 5)
	second.Close()
	all := numbers(t, append(written, again...))
	ok, dups := sameSet(all, 20)
	if !ok {
		t.Fatalf("records lost: first source %v, second %v", numbers(t, written), numbers(t, again))
	}
	// What the first source had acknowledged is not read again; the
	// unacknowledged batch is.
	if len(again) < 20-lost+1 || dups == 0 {
		t.Fatalf("the unacknowledged batch was not re-read: first %v, second %v", numbers(t, written), numbers(t, again))
	}
	if len(again) > 20-10 {
		t.Fatalf("acknowledged batches were read again: second source read %v", numbers(t, again))
	}
}

// TestPipelineRunFailedAfterTheWriteRereads: a run whose second sink fails
// after the first wrote the batch commits nothing; the next run writes the
// batch again.
func TestPipelineRunFailedAfterTheWriteRereads(t *testing.T) {
	_, brokers := newCluster(t, 1, "t")
	produce(t, brokers, "t", 0, 6)
	good, broken := &memSink{}, &memSink{fail: errors.New("disk full")}
	err := etl.New(testSource(t, brokers, "t", "g", "", 200*time.Millisecond), []etl.Sink{good, broken}, etl.WithBatchSize(6)).Run(context.Background())
	if err == nil || !errors.Is(err, broken.fail) {
		t.Fatalf("Run = %v, want the sink's error", err)
	}
	if got := good.ns(t); !slices.Equal(got, []int{0, 1, 2, 3, 4, 5}) {
		t.Fatalf("first run wrote %v", got)
	}
	retry := &memSink{}
	if err := etl.New(testSource(t, brokers, "t", "g", "", 200*time.Millisecond), []etl.Sink{retry}).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := retry.ns(t); !slices.Equal(got, []int{0, 1, 2, 3, 4, 5}) {
		t.Fatalf("second run wrote %v, want the unacknowledged batch again", got)
	}
}

// TestCancelledRunRereads: the run's context is cancelled while its sink
// writes (the worker is stopped hard); the batch is not committed.
func TestCancelledRunRereads(t *testing.T) {
	_, brokers := newCluster(t, 1, "t")
	produce(t, brokers, "t", 0, 3)
	ctx, cancel := context.WithCancel(context.Background())
	killer := &cancellingSink{cancel: cancel}
	if err := etl.New(testSource(t, brokers, "t", "g", "", 200*time.Millisecond), []etl.Sink{killer}).Run(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v, want context.Canceled", err)
	}
	retry := &memSink{}
	if err := etl.New(testSource(t, brokers, "t", "g", "", 200*time.Millisecond), []etl.Sink{retry}).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := retry.ns(t); !slices.Equal(got, []int{0, 1, 2}) {
		t.Fatalf("after the cancelled run the group read %v, want 0 1 2", got)
	}
}

// cancellingSink writes nothing and cancels the run's context.
type cancellingSink struct{ cancel context.CancelFunc }

func (s *cancellingSink) Write(ctx context.Context, _ []etl.Record) error {
	s.cancel()
	return ctx.Err()
}

// TestSourceDeliversRecordsProducedWhileWaiting: a read waits up to block
// and returns as soon as records arrive.
func TestSourceDeliversRecordsProducedWhileWaiting(t *testing.T) {
	_, brokers := newCluster(t, 1, "live")
	src := testSource(t, brokers, "live", "g", "", 10*time.Second)
	defer src.Close()
	go func() {
		time.Sleep(200 * time.Millisecond)
		produce(t, brokers, "live", 0, 3)
	}()
	start := time.Now()
	var got []etl.Record
	for len(got) < 3 {
		b, err := src.Read(context.Background(), 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Records) == 0 {
			t.Fatalf("a read came back empty after %v", time.Since(start))
		}
		if err := b.Ack(context.Background()); err != nil {
			t.Fatal(err)
		}
		got = append(got, b.Records...)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("records produced after 200ms arrived after %v", d)
	}
}

// TestContinuousRunsShareTheGroupMembership: consecutive runs of the same
// configuration (a continuous schedule) take the client the last one left,
// so the group is joined once, and each run gets what was produced since.
func TestContinuousRunsShareTheGroupMembership(t *testing.T) {
	c, brokers := newCluster(t, 2, "c")
	var mu sync.Mutex
	joins := 0
	c.ControlKey(int16(kmsg.JoinGroup), func(kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		mu.Lock()
		joins++
		mu.Unlock()
		return nil, nil, false
	})
	for run := range 3 {
		produce(t, brokers, "c", run*5, run*5+5)
		sink := &memSink{}
		if err := etl.New(testSource(t, brokers, "c", "g", "", 200*time.Millisecond), []etl.Sink{sink}).Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		got := sink.ns(t)
		slices.Sort(got)
		want := []int{run * 5, run*5 + 1, run*5 + 2, run*5 + 3, run*5 + 4}
		if !slices.Equal(got, want) {
			t.Fatalf("run %d read %v, want %v", run, got, want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	// A join is at least one JoinGroup request (a new member may need two:
	// the broker hands out its member id on the first).
	if joins == 0 || joins > 2 {
		t.Fatalf("%d JoinGroup requests over three runs, want the one join of the first run", joins)
	}
}

func TestIdleClientIsClosedAfterAWhile(t *testing.T) {
	_, brokers := newCluster(t, 1, "t")
	idle.mu.Lock()
	idle.after = 50 * time.Millisecond
	idle.mu.Unlock()
	t.Cleanup(func() { idle.mu.Lock(); idle.after = 0; idle.mu.Unlock() })
	s := testSource(t, brokers, "t", "g", "", 50*time.Millisecond)
	readAll(t, s, 10)
	s.Close()
	deadline := time.Now().Add(5 * time.Second)
	for {
		idle.mu.Lock()
		n := len(idle.clients[s.key])
		idle.mu.Unlock()
		if n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the idle client was not closed")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if takeIdle(s.key) != nil {
		t.Fatal("a closed client was handed out")
	}
}

func TestStartEarliestAndLatest(t *testing.T) {
	_, brokers := newCluster(t, 1, "t")
	produce(t, brokers, "t", 0, 3)

	earliest := testSource(t, brokers, "t", "from-start", StartEarliest, 200*time.Millisecond)
	if got := numbers(t, readAll(t, earliest, 10)); !slices.Equal(got, []int{0, 1, 2}) {
		t.Fatalf("earliest read %v", got)
	}
	earliest.Close()

	latest := testSource(t, brokers, "t", "from-end", StartLatest, 200*time.Millisecond)
	defer latest.Close()
	if got := readAll(t, latest, 10); len(got) != 0 {
		t.Fatalf("latest read %v from before it joined", numbers(t, got))
	}
	produce(t, brokers, "t", 3, 5)
	if got := numbers(t, readAll(t, latest, 10)); !slices.Equal(got, []int{3, 4}) {
		t.Fatalf("latest read %v, want 3 4", got)
	}
}

// TestCommittedOffsetsWinOverStart: a group that committed resumes there
// whatever start says.
func TestCommittedOffsetsWinOverStart(t *testing.T) {
	_, brokers := newCluster(t, 1, "t")
	produce(t, brokers, "t", 0, 4)
	s := testSource(t, brokers, "t", "g", StartEarliest, 200*time.Millisecond)
	b, err := s.Read(context.Background(), 2)
	if err != nil || len(b.Records) != 2 {
		t.Fatalf("Read = %d records, %v", len(b.Records), err)
	}
	if err := b.Ack(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.broken = true // do not keep the client: the next source joins anew
	s.Close()
	again := testSource(t, brokers, "t", "g", StartLatest, 200*time.Millisecond)
	defer again.Close()
	if got := numbers(t, readAll(t, again, 10)); !slices.Equal(got, []int{2, 3}) {
		t.Fatalf("resumed at %v, want 2 3", got)
	}
}

func TestSourceReadsSeveralTopicsWithKeysAndIDs(t *testing.T) {
	_, brokers := newCluster(t, 1, "a", "b")
	produce(t, brokers, "a", 0, 2)
	produce(t, brokers, "b", 2, 4)
	s, err := NewSource(SourceConfig{Brokers: brokers, Topic: "a", Topics: []string{"b", "a"}, Group: "g",
		Block: etl.Duration(200 * time.Millisecond), KeyField: "_key", IDField: "_id"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Name() != "kafka(a,b)" || s.Type() != "kafka" {
		t.Errorf("Name, Type = %q, %q", s.Name(), s.Type())
	}
	recs := readAll(t, s, 10)
	byKey := map[string]string{}
	for _, r := range recs {
		byKey[r["_key"].(string)] = r["_id"].(string)
	}
	want := map[string]string{"k0": "a/0/0", "k1": "a/0/1", "k2": "b/0/0", "k3": "b/0/1"}
	if len(byKey) != 4 || byKey["k0"] != want["k0"] || byKey["k1"] != want["k1"] || byKey["k2"] != want["k2"] || byKey["k3"] != want["k3"] {
		t.Fatalf("keys → ids %v, want %v", byKey, want)
	}
}

// TestShutdownEndsTheWait: a graceful shutdown cuts a read's wait short.
func TestShutdownEndsTheWait(t *testing.T) {
	_, brokers := newCluster(t, 1, "t")
	s := testSource(t, brokers, "t", "g", "", time.Minute)
	defer s.Close()
	shutdown := make(chan struct{})
	ctx := runtime.ContextWithShutdown(context.Background(), shutdown)
	time.AfterFunc(200*time.Millisecond, func() { close(shutdown) })
	start := time.Now()
	b, err := s.Read(ctx, 10)
	if err != nil || len(b.Records) != 0 {
		t.Fatalf("Read = %d records, %v", len(b.Records), err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("the read waited %v after the shutdown", d)
	}
}

// TestShortBlockStartsAfterTheJoin: the first read of a new client waits
// for the group join and the offset lookup before its block time starts,
// so a block shorter than the join still reads what is there.
func TestShortBlockStartsAfterTheJoin(t *testing.T) {
	_, brokers := newCluster(t, 4, "in")
	produce(t, brokers, "in", 0, 1000)
	// Each run ends at the first 1ms without a record; the first one reads
	// at least what the first fetch brought, and continuous runs read the
	// rest, once.
	sink := &memSink{}
	for run := 0; len(sink.ns(t)) < 1000 && run < 100; run++ {
		before := len(sink.ns(t))
		src := testSource(t, brokers, "in", "g", "", time.Millisecond)
		if err := etl.New(src, []etl.Sink{sink}, etl.WithBatchSize(500)).Run(context.Background()); err != nil {
			t.Fatal(err)
		}
		if run == 0 && len(sink.ns(t)) == before {
			t.Fatal("the first run with a 1ms block read nothing: its block ended before the join")
		}
	}
	if ok, dups := sameSet(sink.ns(t), 1000); !ok || dups != 0 {
		t.Fatalf("continuous runs with a 1ms block read %d records, want 1000 once each", len(sink.ns(t)))
	}
	// A group that gets no partition (the topic has one, another member
	// holds it) does not wait for a fetch that never comes.
	_, brokers = newCluster(t, 1, "one")
	holder := testSource(t, brokers, "one", "shared", "", 100*time.Millisecond)
	defer holder.Close()
	readAll(t, holder, 10)
	idle := testSource(t, brokers, "one", "shared", "", 100*time.Millisecond)
	defer idle.Close()
	start := time.Now()
	readAll(t, idle, 10)
	if d := time.Since(start); d > JoinTimeout/2 {
		t.Fatalf("a member without partitions waited %v", d)
	}
}
