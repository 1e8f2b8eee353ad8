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
	"strings"
	"syscall"
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
// output) is not counted. It reports each side's records/s by the wall
// clock and per CPU second (this process's user and system time, plus
// otherCPU's, such as a redis-server's: on a loaded machine the wall clock
// mostly measures the other tenants), heap allocations per record, and the
// pipeline's speed as a fraction of the baseline's by both clocks.
func sideBySide(b *testing.B, records int, otherCPU func() time.Duration, pipeline, hand func(untimed func(func()))) {
	b.Helper()
	type meter struct {
		wall, cpu time.Duration
		mallocs   int64
	}
	read := func() meter {
		var m goruntime.MemStats
		goruntime.ReadMemStats(&m)
		cpu := processCPU()
		if otherCPU != nil {
			cpu += otherCPU()
		}
		return meter{wall: time.Duration(time.Now().UnixNano()), cpu: cpu, mallocs: int64(m.Mallocs)}
	}
	var sides [2]meter
	add := func(side int, start, end meter, sign int64) {
		sides[side].wall += time.Duration(sign) * (end.wall - start.wall)
		sides[side].cpu += time.Duration(sign) * (end.cpu - start.cpu)
		sides[side].mallocs += sign * (end.mallocs - start.mallocs)
	}
	run := func(side int, body func(func(func()))) {
		untimed := func(fn func()) {
			start := read()
			fn()
			add(side, start, read(), -1)
		}
		start := read()
		body(untimed)
		add(side, start, read(), 1)
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
	p, h := total/sides[0].wall.Seconds(), total/sides[1].wall.Seconds()
	pc, hc := total/sides[0].cpu.Seconds(), total/sides[1].cpu.Seconds()
	b.ReportMetric(p, "pipeline-records/s")
	b.ReportMetric(h, "hand-records/s")
	b.ReportMetric(p/h, "pipeline/hand")
	b.ReportMetric(pc, "pipeline-records/cpu-s")
	b.ReportMetric(hc, "hand-records/cpu-s")
	b.ReportMetric(pc/hc, "cpu-pipeline/hand")
	b.ReportMetric(float64(sides[0].mallocs)/total, "pipeline-allocs/record")
	b.ReportMetric(float64(sides[1].mallocs)/total, "hand-allocs/record")
}

// processCPU is this process's user and system time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// pidCPU is the user and system time of process pid so far, from
// /proc/pid/stat (Linux, 100 ticks a second).
func pidCPU(pid int) time.Duration {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// Fields after the parenthesised command name; utime and stime are the
	// 14th and 15th fields of the line.
	rest := string(b[strings.LastIndexByte(string(b), ')')+2:])
	f := strings.Fields(rest)
	if len(f) < 13 {
		return 0
	}
	ut, _ := strconv.ParseInt(f[11], 10, 64)
	st, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(ut+st) * 10 * time.Millisecond
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
	sideBySide(b, benchRecords, nil, func(func(func())) {
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
	sideBySide(b, benchRecords, nil, func(func(func())) {
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
	sideBySide(b, streamRecords, func() time.Duration { return pidCPU(srv.PID()) }, func(untimed func(func())) {
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
