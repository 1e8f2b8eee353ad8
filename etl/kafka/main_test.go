package kafka

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/agora-etl/agora/etl"
)

// newCluster starts franz-go's in-process Kafka on 127.0.0.1 with topics
// of partitions partitions each (without topics, it creates a topic of
// partitions partitions when a client first names it), and returns it with
// its broker addresses.
func newCluster(t testing.TB, partitions int32, topics ...string) (*kfake.Cluster, []string) {
	t.Helper()
	opts := []kfake.Opt{kfake.NumBrokers(1), kfake.SeedTopics(partitions, topics...)}
	if len(topics) == 0 {
		opts = []kfake.Opt{kfake.NumBrokers(1), kfake.AllowAutoTopicCreation(), kfake.DefaultNumPartitions(int(partitions))}
	}
	c, err := kfake.NewCluster(opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	t.Cleanup(CloseIdle) // before the cluster closes
	return c, c.ListenAddrs()
}

// produce writes records {"n": from} ... {"n": to-1} to topic, keyed by n.
func produce(t testing.TB, brokers []string, topic string, from, to int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.DefaultProduceTopic(topic))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	for n := from; n < to; n++ {
		recs = append(recs, &kgo.Record{Key: fmt.Appendf(nil, "k%d", n), Value: fmt.Appendf(nil, `{"n":%d}`, n)})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
		t.Error(err) // Error, not Fatal: some tests produce from a goroutine
	}
}

// consumeAll reads topic from the start without a group until it has n
// records, and returns them.
func consumeAll(t testing.TB, brokers []string, topic string, n int) []*kgo.Record {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	var out []*kgo.Record
	for len(out) < n {
		fs := cl.PollFetches(ctx)
		if err := ctx.Err(); err != nil {
			t.Fatalf("got %d of %d records of %s: %v", len(out), n, topic, err)
		}
		out = append(out, fs.Records()...)
	}
	return out
}

// testSource returns a source on the cluster that waits block for records.
func testSource(t testing.TB, brokers []string, topic, group, start string, block time.Duration) *Source {
	t.Helper()
	s, err := NewSource(SourceConfig{Brokers: brokers, Topic: topic, Group: group, Start: start, Block: etl.Duration(block)})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// memSink keeps what it is written; fail, when set, fails every Write after
// keeping its records (a sink that wrote, then the run died).
type memSink struct {
	mu   sync.Mutex
	got  []etl.Record
	fail error
}

func (s *memSink) Write(_ context.Context, records []etl.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, records...)
	return s.fail
}

// ns returns the "n" of every record kept, in order.
func (s *memSink) ns(t testing.TB) []int {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	return numbers(t, s.got)
}

func numbers(t testing.TB, recs []etl.Record) []int {
	t.Helper()
	out := make([]int, len(recs))
	for i, r := range recs {
		n, ok := r["n"].(json.Number)
		if !ok {
			t.Fatalf("record %d: n = %#v, want a json.Number", i, r["n"])
		}
		v, err := n.Int64()
		if err != nil {
			t.Fatal(err)
		}
		out[i] = int(v)
	}
	return out
}

// readAll reads s until an empty batch, acknowledging every batch, and
// returns the records.
func readAll(t testing.TB, s *Source, max int) []etl.Record {
	t.Helper()
	var out []etl.Record
	for {
		b, err := s.Read(context.Background(), max)
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Records) == 0 {
			return out
		}
		if err := b.Ack(context.Background()); err != nil {
			t.Fatal(err)
		}
		out = append(out, b.Records...)
	}
}

// sameSet reports whether got holds every n in [0, want) and nothing else,
// each at least once; dups counts the repeats.
func sameSet(got []int, want int) (ok bool, dups int) {
	seen := map[int]int{}
	for _, n := range got {
		seen[n]++
	}
	for n := range want {
		if seen[n] == 0 {
			return false, 0
		}
		dups += seen[n] - 1
	}
	return len(seen) == want, dups
}
