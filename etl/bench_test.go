package etl_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	goruntime "runtime"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/internal/redistest"
)

// benchRecords is the record count of the file benchmarks.
const benchRecords = 1_000_000

// benchName is the name field of every benchmark record.
const benchName = "xxxxxxxxxxxxxxxxxxxxxxxx"

// sideBySide runs the pipeline and the hand-written baseline in the same
// benchmark, in the order pipeline, hand, hand, pipeline per op so that a
// change in the machine's load weighs on both alike. Each body moves
// records records; what it does inside untimed (preparing input, checking
// output) is not counted. It reports each side's records/s and heap
// allocations per record, and the pipeline's speed as a fraction of the
// baseline's.
func sideBySide(b *testing.B, records int, pipeline, hand func(untimed func(func()))) {
	b.Helper()
	var took [2]time.Duration
	var allocs [2]int64
	mallocs := func() int64 {
		var m goruntime.MemStats
		goruntime.ReadMemStats(&m)
		return int64(m.Mallocs)
	}
	run := func(side int, body func(func(func()))) {
		untimed := func(fn func()) {
			start, before := time.Now(), mallocs()
			fn()
			took[side] -= time.Since(start)
			allocs[side] -= mallocs() - before
		}
		start, before := time.Now(), mallocs()
		body(untimed)
		took[side] += time.Since(start)
		allocs[side] += mallocs() - before
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		run(0, pipeline)
		run(1, hand)
		run(1, hand)
		run(0, pipeline)
	}
	b.StopTimer()
	total := 2 * float64(records) * float64(b.N)
	p, h := total/took[0].Seconds(), total/took[1].Seconds()
	b.ReportMetric(p, "pipeline-records/s")
	b.ReportMetric(h, "hand-records/s")
	b.ReportMetric(p/h, "pipeline/hand")
	b.ReportMetric(float64(allocs[0])/total, "pipeline-allocs/record")
	b.ReportMetric(float64(allocs[1])/total, "hand-allocs/record")
}

func benchInput(b *testing.B) string {
	b.Helper()
	path := filepath.Join(b.TempDir(), "in.jsonl")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for i := 0; i < benchRecords; i++ {
		fmt.Fprintf(w, "{\"id\":%d,\"name\":%q}\n", i, benchName)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	return path
}

// handLoop is the baseline: what one writes without agora.
func handLoop(b *testing.B, in, out string) {
	src, err := os.Open(in)
	if err != nil {
		b.Fatal(err)
	}
	defer src.Close()
	dst, err := os.OpenFile(out, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(dst, 64<<10)
	sc := bufio.NewScanner(bufio.NewReaderSize(src, 64<<10))
	for sc.Scan() {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			b.Fatal(err)
		}
		line, err := json.Marshal(rec)
		if err != nil {
			b.Fatal(err)
		}
		w.Write(line)
		w.WriteByte('\n')
	}
	if err := sc.Err(); err != nil {
		b.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := dst.Sync(); err != nil {
		b.Fatal(err)
	}
	dst.Close()
}

func BenchmarkFileJSONLToFile(b *testing.B) {
	in := benchInput(b)
	out := filepath.Join(b.TempDir(), "out.jsonl")
	reset := func() { os.Remove(out) }
	sideBySide(b, benchRecords, func(func(func())) {
		reset()
		src, err := etl.NewFileSource(etl.FileSourceConfig{Path: in})
		if err != nil {
			b.Fatal(err)
		}
		sink, err := etl.NewFileSink(etl.FileSinkConfig{Path: out})
		if err != nil {
			b.Fatal(err)
		}
		if err := etl.New(src, []etl.Sink{sink}).Run(context.Background()); err != nil {
			b.Fatal(err)
		}
	}, func(func(func())) {
		reset()
		handLoop(b, in, out)
	})
}

func BenchmarkIterableToFile(b *testing.B) {
	records := make([]etl.Record, benchRecords)
	for i := range records {
		records[i] = etl.Record{"id": int64(i), "name": benchName}
	}
	out := filepath.Join(b.TempDir(), "out.jsonl")
	sideBySide(b, benchRecords, func(func(func())) {
		os.Remove(out)
		sink, err := etl.NewFileSink(etl.FileSinkConfig{Path: out})
		if err != nil {
			b.Fatal(err)
		}
		if err := etl.New(etl.NewIterableSource(records), []etl.Sink{sink}).Run(context.Background()); err != nil {
			b.Fatal(err)
		}
	}, func(func(func())) {
		os.Remove(out)
		dst, err := os.OpenFile(out, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			b.Fatal(err)
		}
		w := bufio.NewWriterSize(dst, 64<<10)
		for _, rec := range records {
			line, err := json.Marshal(rec)
			if err != nil {
				b.Fatal(err)
			}
			w.Write(line)
			w.WriteByte('\n')
		}
		if err := w.Flush(); err != nil {
			b.Fatal(err)
		}
		if err := dst.Sync(); err != nil {
			b.Fatal(err)
		}
		dst.Close()
	})
}

// streamRecords is the entry count of the stream benchmark.
const streamRecords = 200_000

// streamBlock ends both loops: a read that waits this long for nothing.
const streamBlock = 10 * time.Millisecond

func BenchmarkRedisStreamToStream(b *testing.B) {
	srv := redistest.Start(b)
	c := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer c.Close()
	ctx := context.Background()
	round := 0
	// fill adds the input entries to a new stream and returns its name.
	fill := func() (string, string) {
		round++
		in, out := "in"+strconv.Itoa(round), "out"+strconv.Itoa(round)
		pipe := c.Pipeline()
		for i := 0; i < streamRecords; i++ {
			pipe.XAdd(ctx, &redis.XAddArgs{Stream: in, Values: []any{"data", fmt.Sprintf(`{"id":%d,"name":%q}`, i, benchName)}})
			if i%1000 == 999 {
				if _, err := pipe.Exec(ctx); err != nil {
					b.Fatal(err)
				}
			}
		}
		if _, err := pipe.Exec(ctx); err != nil {
			b.Fatal(err)
		}
		return in, out
	}
	check := func(out string) {
		if n, err := c.XLen(ctx, out).Result(); err != nil || n != streamRecords {
			b.Fatalf("XLEN %s = %d, %v", out, n, err)
		}
		c.Del(ctx, out)
	}
	sideBySide(b, streamRecords, func(untimed func(func())) {
		var in, out string
		untimed(func() { in, out = fill() })
		src, err := etl.NewRedisStreamSource(etl.RedisStreamSourceConfig{URL: srv.URL(), Stream: in, Group: "g", Consumer: "c", Block: etl.Duration(streamBlock)})
		if err != nil {
			b.Fatal(err)
		}
		sink, err := etl.NewRedisStreamSink(etl.RedisStreamSinkConfig{URL: srv.URL(), Stream: out})
		if err != nil {
			b.Fatal(err)
		}
		if err := etl.New(src, []etl.Sink{sink}).Run(ctx); err != nil {
			b.Fatal(err)
		}
		untimed(func() { check(out); c.Del(ctx, in) })
	}, func(untimed func(func())) {
		var in, out string
		untimed(func() { in, out = fill() })
		handStreamLoop(b, srv.Addr(), in, out)
		untimed(func() { check(out); c.Del(ctx, in) })
	})
}

// handStreamLoop is the baseline: a consumer-group loop written directly
// against go-redis, batch size etl.DefaultBatchSize, copying each entry's
// fields as they are.
func handStreamLoop(b *testing.B, addr, in, out string) {
	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	if err := c.XGroupCreateMkStream(ctx, in, "g", "0").Err(); err != nil {
		b.Fatal(err)
	}
	for {
		res, err := c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c", Streams: []string{in, ">"},
			Count: etl.DefaultBatchSize, Block: streamBlock}).Result()
		if err == redis.Nil {
			return
		}
		if err != nil {
			b.Fatal(err)
		}
		msgs := res[0].Messages
		pipe := c.Pipeline()
		ids := make([]string, len(msgs))
		for i, m := range msgs {
			ids[i] = m.ID
			pipe.XAdd(ctx, &redis.XAddArgs{Stream: out, Values: []any{"data", m.Values["data"]}})
		}
		if _, err := pipe.Exec(ctx); err != nil {
			b.Fatal(err)
		}
		if err := c.XAck(ctx, in, "g", ids...).Err(); err != nil {
			b.Fatal(err)
		}
	}
}
