package kafka

import (
	"context"
	"fmt"
	goruntime "runtime"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/agora-etl/agora/etl"
)

// benchRecords is the record count of the kafka benchmark, per side and op.
const benchRecords = 100_000

// benchBlock is how long both sides wait for more records before they
// stop.
const benchBlock = 50 * time.Millisecond

// BenchmarkKafkaToKafka moves benchRecords records {"id":n,"name":"x…"}
// from a topic of 4 partitions to another through the pipeline (the kafka
// source, batch size 500, and the kafka sink) and through a hand-written
// loop against franz-go doing the same job: PollRecords of 500, ProduceSync
// of the values as they are, CommitRecords, until a poll waits 50 ms for
// nothing (after the first, which waits for the group join, as the source
// does). The broker is kfake in this process, so its CPU counts on both
// sides alike. Filling the input topic and counting the output are outside
// the timing. Order per op: pipeline, hand, hand, pipeline.
func BenchmarkKafkaToKafka(b *testing.B) {
	_, brokers := newCluster(b, 4, "seed")
	admin, err := kgo.NewClient(kgo.SeedBrokers(brokers...))
	if err != nil {
		b.Fatal(err)
	}
	defer admin.Close()
	ctx := context.Background()
	round := 0
	fill := func() (in, out string) {
		round++
		in, out = "in"+strconv.Itoa(round), "out"+strconv.Itoa(round)
		if _, err := kadm.NewClient(admin).CreateTopics(ctx, 4, 1, nil, in, out); err != nil {
			b.Fatal(err)
		}
		recs := make([]*kgo.Record, benchRecords)
		for i := range recs {
			recs[i] = &kgo.Record{Topic: in, Value: fmt.Appendf(nil, `{"id":%d,"name":"xxxxxxxxxxxxxxxxxxxxxxxx"}`, i)}
		}
		if err := admin.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			b.Fatal(err)
		}
		return in, out
	}
	count := func(topic string) {
		cl, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumeTopics(topic), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		if err != nil {
			b.Fatal(err)
		}
		defer cl.Close()
		wait, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		n := 0
		for n < benchRecords && wait.Err() == nil {
			n += len(cl.PollFetches(wait).Records())
		}
		if n != benchRecords {
			b.Fatalf("%s holds %d records, want %d", topic, n, benchRecords)
		}
	}
	pipeline := func(in, out string) {
		src, err := NewSource(SourceConfig{Brokers: brokers, Topic: in, Group: "g" + in, Block: etl.Duration(benchBlock)})
		if err != nil {
			b.Fatal(err)
		}
		sink, err := NewSink(SinkConfig{Brokers: brokers, Topic: out})
		if err != nil {
			b.Fatal(err)
		}
		if err := etl.New(src, []etl.Sink{sink}, etl.WithBatchSize(500)).Run(ctx); err != nil {
			b.Fatal(err)
		}
	}
	hand := func(in, out string) {
		cons, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.ConsumerGroup("g"+in), kgo.ConsumeTopics(in),
			kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()), kgo.DisableAutoCommit(), kgo.BlockRebalanceOnPoll())
		if err != nil {
			b.Fatal(err)
		}
		prod, err := kgo.NewClient(kgo.SeedBrokers(brokers...), kgo.DefaultProduceTopic(out))
		if err != nil {
			b.Fatal(err)
		}
		for first := true; ; first = false {
			block := benchBlock
			if first {
				block = JoinTimeout // the group join, as the source waits for it
			}
			wait, cancel := context.WithTimeout(ctx, block)
			recs := cons.PollRecords(wait, 500).Records()
			cancel()
			if len(recs) == 0 {
				break
			}
			outs := make([]*kgo.Record, len(recs))
			for i, r := range recs {
				outs[i] = &kgo.Record{Value: r.Value}
			}
			if err := prod.ProduceSync(ctx, outs...).FirstErr(); err != nil {
				b.Fatal(err)
			}
			if err := cons.CommitRecords(ctx, recs...); err != nil {
				b.Fatal(err)
			}
			cons.AllowRebalance()
		}
		prod.Close()
		cons.CloseAllowingRebalance()
	}

	type meter struct {
		wall, cpu time.Duration
		mallocs   uint64
	}
	var sides [2]meter
	run := func(side int, body func(in, out string)) {
		in, out := fill()
		var m goruntime.MemStats
		goruntime.ReadMemStats(&m)
		start, cpu, mallocs := time.Now(), processCPU(), m.Mallocs
		body(in, out)
		goruntime.ReadMemStats(&m)
		sides[side].wall += time.Since(start)
		sides[side].cpu += processCPU() - cpu
		sides[side].mallocs += m.Mallocs - mallocs
		CloseIdle()
		count(out)
	}
	b.ResetTimer()
	for range b.N {
		run(0, pipeline)
		run(1, hand)
		run(1, hand)
		run(0, pipeline)
	}
	b.StopTimer()
	total := 2 * float64(benchRecords) * float64(b.N)
	p, h := total/sides[0].wall.Seconds(), total/sides[1].wall.Seconds()
	pc, hc := total/sides[0].cpu.Seconds(), total/sides[1].cpu.Seconds()
	b.ReportMetric(p, "pipeline-records/s")
	b.ReportMetric(h, "hand-records/s")
	b.ReportMetric(pc, "pipeline-records/cpu-s")
	b.ReportMetric(hc, "hand-records/cpu-s")
	b.ReportMetric(float64(sides[0].mallocs)/total, "pipeline-allocs/record")
	b.ReportMetric(float64(sides[1].mallocs)/total, "hand-allocs/record")
	b.ReportMetric(p/h, "pipeline/hand-wall")
	b.ReportMetric(pc/hc, "pipeline/hand-cpu")
}

// processCPU is this process's user and system time.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
