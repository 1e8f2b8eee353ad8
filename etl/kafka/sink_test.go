package kafka

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/agora-etl/agora/etl"
)

func TestSinkProducesKeyedJSONRecords(t *testing.T) {
	_, brokers := newCluster(t, 4, "out")
	s, err := NewSink(SinkConfig{Brokers: brokers, Topic: "out", Key: "id"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Name() != "kafka(out)" || s.Type() != "kafka" {
		t.Errorf("Name, Type = %q, %q", s.Name(), s.Type())
	}
	var batch []etl.Record
	for i := range 20 {
		batch = append(batch, etl.Record{"id": json.Number([]string{"1", "2", "3"}[i%3]), "i": i, "html": "<a&b>"})
	}
	batch = append(batch, etl.Record{"id": "user-7", "i": 20, "html": ""})
	if err := s.Write(context.Background(), batch); err != nil {
		t.Fatal(err)
	}
	// Write returned: the broker has every record, no flush needed.
	got := consumeAll(t, brokers, "out", 21)
	partitionOf := map[string]int32{}
	var is []int
	for _, r := range got {
		var rec map[string]any
		if err := json.Unmarshal(r.Value, &rec); err != nil {
			t.Fatalf("value %q: %v", r.Value, err)
		}
		if rec["html"] != "<a&b>" && rec["html"] != "" {
			t.Fatalf("value %s", r.Value)
		}
		key := string(r.Key)
		if p, ok := partitionOf[key]; ok && p != r.Partition {
			t.Fatalf("key %q in partitions %d and %d", key, p, r.Partition)
		}
		partitionOf[key] = r.Partition
		is = append(is, int(rec["i"].(float64)))
		if want := map[bool]string{true: "user-7", false: []string{"1", "2", "3"}[int(rec["i"].(float64))%3]}[rec["i"].(float64) == 20]; key != want {
			t.Fatalf("record %v has key %q, want %q", rec, key, want)
		}
	}
	slices.Sort(is)
	for i := range 21 {
		if is[i] != i {
			t.Fatalf("records %v, want 0..20 once each", is)
		}
	}
	// Values are JSON without HTML escaping, keys sorted.
	for _, r := range got {
		if string(r.Key) == "user-7" && string(r.Value) != `{"html":"","i":20,"id":"user-7"}` {
			t.Fatalf("value %s", r.Value)
		}
	}
}

func TestSinkRejectsRecordsWithoutAKeyOrThatJSONCannotEncode(t *testing.T) {
	_, brokers := newCluster(t, 1, "out")
	s, err := NewSink(SinkConfig{Brokers: brokers, Topic: "out", Key: "id"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// A rejection that fails the run (no DLQ): nothing of the batch is
	// produced, or the re-read batch would produce "x" again.
	err = s.Write(etl.WithRejectsFailRun(context.Background()), []etl.Record{{"id": "x"}, {"other": 1}})
	var failed *etl.RejectedError
	if !errors.As(err, &failed) || len(failed.Rejections) != 1 || failed.Rejections[0].Index != 1 {
		t.Fatalf("Write failing the run = %v, want record 1 rejected", err)
	}
	err = s.Write(context.Background(), []etl.Record{
		{"id": "a"}, {"other": 1}, {"id": nil}, {"id": "b", "x": math.NaN()}, {"id": true},
	})
	var rej *etl.RejectedError
	if !errors.As(err, &rej) {
		t.Fatalf("Write = %v, want a *etl.RejectedError", err)
	}
	var idx []int
	for _, r := range rej.Rejections {
		idx = append(idx, r.Index)
	}
	if !slices.Equal(idx, []int{1, 2, 3}) {
		t.Fatalf("rejected %v (%v), want records 1 2 3", idx, err)
	}
	got := consumeAll(t, brokers, "out", 2)
	if string(got[0].Key) != "a" || string(got[1].Key) != "true" {
		t.Fatalf("keys %q %q, want a and true", got[0].Key, got[1].Key)
	}
}

// TestSinkIsAnIdempotentProducerWaitingForAllReplicas looks at the produce
// requests the broker gets: acks=-1 and batches carrying a producer id.
func TestSinkIsAnIdempotentProducerWaitingForAllReplicas(t *testing.T) {
	c, brokers := newCluster(t, 1, "out")
	var mu sync.Mutex
	var acks []int16
	var producerIDs []int64
	c.ControlKey(int16(kmsg.Produce), func(req kmsg.Request) (kmsg.Response, error, bool) {
		c.KeepControl()
		pr := req.(*kmsg.ProduceRequest)
		mu.Lock()
		defer mu.Unlock()
		acks = append(acks, pr.Acks)
		for _, topic := range pr.Topics {
			for _, p := range topic.Partitions {
				var b kmsg.RecordBatch
				if err := b.ReadFrom(p.Records); err != nil {
					t.Errorf("record batch: %v", err)
					continue
				}
				producerIDs = append(producerIDs, b.ProducerID)
			}
		}
		return nil, nil, false
	})
	s, err := NewSink(SinkConfig{Brokers: brokers, Topic: "out"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if v := s.cl.OptValue(kgo.RequiredAcks); v != kgo.AllISRAcks() {
		t.Errorf("required acks %v", v)
	}
	if v := s.cl.OptValue(kgo.DisableIdempotentWrite); v != false {
		t.Errorf("idempotent write disabled: %v", v)
	}
	for range 3 {
		if err := s.Write(context.Background(), []etl.Record{{"n": 1}, {"n": 2}}); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(acks) == 0 {
		t.Fatal("no produce request seen")
	}
	for i := range acks {
		if acks[i] != -1 {
			t.Errorf("produce request %d has acks %d, want -1 (all in-sync replicas)", i, acks[i])
		}
	}
	for i, id := range producerIDs {
		if id < 0 || id != producerIDs[0] {
			t.Errorf("batch %d has producer id %d, want one id ≥ 0 for every batch (%v)", i, id, producerIDs)
		}
	}
}

// TestSinkFailsTheBatchWhenTheBrokerIsGone: no broker, no acknowledgement.
func TestSinkFailsTheBatchWhenTheBrokerIsGone(t *testing.T) {
	c, brokers := newCluster(t, 1, "out")
	s, err := NewSink(SinkConfig{Brokers: brokers, Topic: "out"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err = s.Write(ctx, []etl.Record{{"n": 1}})
	var rej *etl.RejectedError
	if err == nil || errors.As(err, &rej) {
		t.Fatalf("Write = %v, want the batch failed", err)
	}
}

// TestKafkaToKafkaKeepsRecords: a pipeline from a topic to another.
func TestKafkaToKafkaKeepsRecords(t *testing.T) {
	_, brokers := newCluster(t, 2, "in", "out")
	produce(t, brokers, "in", 0, 10)
	sink, err := NewSink(SinkConfig{Brokers: brokers, Topic: "out", Key: "n"})
	if err != nil {
		t.Fatal(err)
	}
	if err := etl.New(testSource(t, brokers, "in", "g", "", 200*time.Millisecond), []etl.Sink{sink}, etl.WithBatchSize(3)).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := consumeAll(t, brokers, "out", 10)
	var ns []int
	for _, r := range got {
		ns = append(ns, numbers(t, []etl.Record{decodeValue(r.Value)})[0])
		if string(r.Key) != string(r.Value[len(`{"n":`):len(r.Value)-1]) {
			t.Fatalf("key %q for value %s", r.Key, r.Value)
		}
	}
	if ok, dups := sameSet(ns, 10); !ok || dups != 0 {
		t.Fatalf("out holds %v", ns)
	}
}
