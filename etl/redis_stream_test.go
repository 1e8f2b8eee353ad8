package etl_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/internal/redistest"
	"github.com/agora-etl/agora/runtime"
)

func redisClient(t *testing.T, srv *redistest.Server) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	t.Cleanup(func() { c.Close() })
	return c
}

// addEntries adds n entries {"data": {"id": i}} to stream.
func addEntries(t *testing.T, c *redis.Client, stream string, from, n int) {
	t.Helper()
	pipe := c.Pipeline()
	for i := from; i < from+n; i++ {
		pipe.XAdd(context.Background(), &redis.XAddArgs{Stream: stream, Values: []any{"data", fmt.Sprintf(`{"id":%d}`, i)}})
	}
	if _, err := pipe.Exec(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func newStreamSource(t *testing.T, cfg etl.RedisStreamSourceConfig) *etl.RedisStreamSource {
	t.Helper()
	if cfg.Block == 0 {
		cfg.Block = etl.Duration(50 * time.Millisecond)
	}
	src, err := etl.NewRedisStreamSource(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { src.Close() })
	return src
}

func pendingCount(t *testing.T, c *redis.Client, stream, group string) int64 {
	t.Helper()
	p, err := c.XPending(context.Background(), stream, group).Result()
	if err != nil {
		t.Fatal(err)
	}
	return p.Count
}

func TestRedisStreamRoundTripKeepsRecords(t *testing.T) {
	srv := redistest.Start(t)
	c := redisClient(t, srv)
	ctx := context.Background()
	sink, err := etl.NewRedisStreamSink(etl.RedisStreamSinkConfig{URL: srv.URL(), Stream: "in"})
	if err != nil {
		t.Fatal(err)
	}
	in := []etl.Record{
		{"id": int64(1), "name": "a<b", "nested": map[string]any{"x": []any{1, "two", nil, true}}},
		{"big": json.Number("12345678901234567890"), "f": 1.5},
	}
	if err := sink.Write(ctx, in); err != nil {
		t.Fatal(err)
	}
	sink.Close()
	// Entries with other fields than data come through as strings.
	c.XAdd(ctx, &redis.XAddArgs{Stream: "in", Values: []any{"user", "ann", "age", "41"}})
	c.XAdd(ctx, &redis.XAddArgs{Stream: "in", Values: []any{"data", "not json"}})

	src := newStreamSource(t, etl.RedisStreamSourceConfig{URL: srv.URL(), Stream: "in", Group: "g", IDField: "_id"})
	b, err := src.Read(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range b.Records {
		if id, _ := r["_id"].(string); !strings.Contains(id, "-") {
			t.Fatalf("record %v lacks its entry id", r)
		}
		delete(r, "_id")
		j, _ := json.Marshal(r)
		got = append(got, string(j))
	}
	want := []string{
		`{"id":1,"name":"a\u003cb","nested":{"x":[1,"two",null,true]}}`,
		`{"big":12345678901234567890,"f":1.5}`,
		`{"age":"41","user":"ann"}`,
		`{"data":"not json"}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("records:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if n := pendingCount(t, c, "in", "g"); n != 4 {
		t.Fatalf("pending before Ack = %d, want 4", n)
	}
	if err := b.Ack(ctx); err != nil {
		t.Fatal(err)
	}
	if n := pendingCount(t, c, "in", "g"); n != 0 {
		t.Fatalf("pending after Ack = %d", n)
	}
	if b, err := src.Read(ctx, 10); err != nil || len(b.Records) != 0 {
		t.Fatalf("an idle stream must give an empty batch: %v %v", b.Records, err)
	}
}

func TestRedisStreamSourceRereadsItsOwnPendingEntriesFirst(t *testing.T) {
	srv := redistest.Start(t)
	c := redisClient(t, srv)
	ctx := context.Background()
	addEntries(t, c, "s", 0, 5)
	cfg := etl.RedisStreamSourceConfig{URL: srv.URL(), Stream: "s", Group: "g", Consumer: "c1"}
	first := newStreamSource(t, cfg)
	b, err := first.Read(ctx, 3)
	if err != nil || len(b.Records) != 3 {
		t.Fatalf("%v %v", b.Records, err)
	}
	first.Close() // a crash: never acknowledged

	addEntries(t, c, "s", 5, 2)
	again := newStreamSource(t, cfg)
	var ids []any
	for {
		b, err := again.Read(ctx, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Records) == 0 {
			break
		}
		for _, r := range b.Records {
			ids = append(ids, r["id"])
		}
		if err := b.Ack(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if got := fmt.Sprint(ids); got != "[0 1 2 3 4 5 6]" {
		t.Fatalf("ids %s: the unacknowledged 0-2 must come first, then the rest once", got)
	}
	if n := pendingCount(t, c, "s", "g"); n != 0 {
		t.Fatalf("pending = %d", n)
	}
}

func TestRedisStreamSourceClaimsACrashedConsumersEntries(t *testing.T) {
	srv := redistest.Start(t)
	c := redisClient(t, srv)
	ctx := context.Background()
	addEntries(t, c, "s", 0, 4)
	dead := newStreamSource(t, etl.RedisStreamSourceConfig{URL: srv.URL(), Stream: "s", Group: "g", Consumer: "dead"})
	if b, err := dead.Read(ctx, 4); err != nil || len(b.Records) != 4 {
		t.Fatalf("%v %v", b.Records, err)
	}
	claimIdle := 30 * time.Millisecond
	cfg := etl.RedisStreamSourceConfig{URL: srv.URL(), Stream: "s", Group: "g", Consumer: "alive", ClaimIdle: etl.Duration(claimIdle)}
	// Before claim_idle the entries are still the other consumer's.
	early := newStreamSource(t, cfg)
	if b, err := early.Read(ctx, 10); err != nil || len(b.Records) != 0 {
		t.Fatalf("claimed too early: %v %v", b.Records, err)
	}
	time.Sleep(claimIdle + 10*time.Millisecond) // let the entries idle past claim_idle
	late := newStreamSource(t, cfg)
	b, err := late.Read(ctx, 10)
	if err != nil || len(b.Records) != 4 {
		t.Fatalf("claim: %v %v", b.Records, err)
	}
	if err := b.Ack(ctx); err != nil {
		t.Fatal(err)
	}
	if n := pendingCount(t, c, "s", "g"); n != 0 {
		t.Fatalf("pending = %d", n)
	}
}

func TestRedisStreamSourceSkipsEntriesDeletedWhilePending(t *testing.T) {
	srv := redistest.Start(t)
	c := redisClient(t, srv)
	ctx := context.Background()
	addEntries(t, c, "s", 0, 3)
	cfg := etl.RedisStreamSourceConfig{URL: srv.URL(), Stream: "s", Group: "g", Consumer: "c"}
	first := newStreamSource(t, cfg)
	b, _ := first.Read(ctx, 3)
	msgs, _ := c.XRange(ctx, "s", "-", "+").Result()
	c.XDel(ctx, "s", msgs[0].ID, msgs[1].ID)
	_ = b
	again := newStreamSource(t, cfg)
	b, err := again.Read(ctx, 10)
	if err != nil || len(b.Records) != 1 || fmt.Sprint(b.Records[0]["id"]) != "2" {
		t.Fatalf("%v %v", b.Records, err)
	}
	if err := b.Ack(ctx); err != nil {
		t.Fatal(err)
	}
	if n := pendingCount(t, c, "s", "g"); n != 0 {
		t.Fatalf("deleted entries left pending: %d", n)
	}
}

func TestRedisStreamSourceShutdownCutsTheBlockShort(t *testing.T) {
	srv := redistest.Start(t)
	src := newStreamSource(t, etl.RedisStreamSourceConfig{URL: srv.URL(), Stream: "s", Group: "g", Block: etl.Duration(20 * time.Second)})
	shutdown := make(chan struct{})
	ctx := runtime.ContextWithShutdown(context.Background(), shutdown)
	time.AfterFunc(50*time.Millisecond, func() { close(shutdown) })
	start := time.Now()
	b, err := src.Read(ctx, 10)
	if err != nil || len(b.Records) != 0 {
		t.Fatalf("%v %v", b.Records, err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Read waited %v despite the shutdown", d)
	}
}

func TestRedisStreamSinkTrimsApproximately(t *testing.T) {
	srv := redistest.Start(t)
	c := redisClient(t, srv)
	sink, err := etl.NewRedisStreamSink(etl.RedisStreamSinkConfig{URL: srv.URL(), Stream: "out", MaxLen: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	for i := 0; i < 10; i++ {
		recs := make([]etl.Record, 100)
		for j := range recs {
			recs[j] = etl.Record{"i": i*100 + j}
		}
		if err := sink.Write(context.Background(), recs); err != nil {
			t.Fatal(err)
		}
	}
	n, _ := c.XLen(context.Background(), "out").Result()
	if n < 10 || n >= 1000 {
		t.Fatalf("XLEN = %d after 1000 adds with maxlen ~10", n)
	}
}

func TestRedisStreamSinkDownFailsTheBatch(t *testing.T) {
	srv := redistest.Start(t)
	sink, err := etl.NewRedisStreamSink(etl.RedisStreamSinkConfig{URL: srv.URL() + "?max_retries=-1", Stream: "out"})
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	srv.Kill()
	err = sink.Write(context.Background(), []etl.Record{{"a": 1}})
	var rej *etl.RejectedError
	if err == nil || errors.As(err, &rej) {
		t.Fatalf("err = %v, want a batch-level error", err)
	}
}

func TestRedisStreamConfigValidate(t *testing.T) {
	err := etl.RedisStreamSourceConfig{URL: "redis://:s3cret@host:6379/x", Start: "later", Block: 5, ClaimIdle: etl.Duration(-time.Second)}.Validate()
	var keys []string
	for _, e := range err.(interface{ Unwrap() []error }).Unwrap() {
		var fe *etl.FieldError
		if !errors.As(e, &fe) {
			t.Fatalf("%v is not a FieldError", e)
		}
		keys = append(keys, fe.Key)
	}
	if got := strings.Join(keys, ","); got != "url,stream,group,start,block,claim_idle" {
		t.Fatalf("keys %s (%v)", got, err)
	}
	if strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("the password shows: %v", err)
	}
	err = etl.RedisStreamSinkConfig{URL: "redis://127.0.0.1:6379", MaxLen: -1}.Validate()
	if err == nil || !strings.Contains(err.Error(), "stream") || !strings.Contains(err.Error(), "maxlen") {
		t.Fatalf("sink: %v", err)
	}
	if err := (etl.RedisStreamSourceConfig{URL: "redis://127.0.0.1:6379", Stream: "s", Group: "g", Start: "$"}).Validate(); err != nil {
		t.Fatal(err)
	}
}

func TestRedisStreamSourceReadAheadIsNotLostWhenTheRunStops(t *testing.T) {
	srv := redistest.Start(t)
	c := redisClient(t, srv)
	ctx := context.Background()
	addEntries(t, c, "s", 0, 30)
	cfg := etl.RedisStreamSourceConfig{URL: srv.URL(), Stream: "s", Group: "g", Consumer: "c"}
	first := newStreamSource(t, cfg)
	b, err := first.Read(ctx, 10)
	if err != nil || len(b.Records) != 10 {
		t.Fatalf("%v %v", b.Records, err)
	}
	if err := b.Ack(ctx); err != nil {
		t.Fatal(err)
	}
	// The run stops here; the next batch may have been read ahead.
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	again := newStreamSource(t, cfg)
	var ids []string
	for {
		b, err := again.Read(ctx, 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Records) == 0 {
			break
		}
		for _, r := range b.Records {
			ids = append(ids, fmt.Sprint(r["id"]))
		}
		if err := b.Ack(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if len(ids) != 20 || ids[0] != "10" || ids[19] != "29" {
		t.Fatalf("the second run read %v, want 10..29 once each", ids)
	}
}

func TestRedisStreamSourceCloseStopsTheReadAhead(t *testing.T) {
	srv := redistest.Start(t)
	c := redisClient(t, srv)
	addEntries(t, c, "s", 0, 3)
	src := newStreamSource(t, etl.RedisStreamSourceConfig{URL: srv.URL(), Stream: "s", Group: "g", Block: etl.Duration(20 * time.Second)})
	if b, err := src.Read(context.Background(), 10); err != nil || len(b.Records) != 3 {
		t.Fatalf("%v %v", b.Records, err)
	}
	// The read ahead now waits on an empty stream for up to 20 s.
	start := time.Now()
	if err := src.Close(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Close took %v", d)
	}
	if err := src.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
}

func TestRedisStreamSinkAddsNothingWhenARejectionFailsTheRun(t *testing.T) {
	srv := redistest.Start(t)
	sink, err := etl.NewRedisStreamSink(etl.RedisStreamSinkConfig{URL: srv.URL(), Stream: "out"})
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	c := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer c.Close()
	batch := []etl.Record{{"a": 1}, {"a": math.NaN()}, {"a": 3}}
	var rej *etl.RejectedError
	err = sink.Write(etl.WithRejectsFailRun(context.Background()), batch)
	if !errors.As(err, &rej) || len(rej.Rejections) != 1 || rej.Rejections[0].Index != 1 {
		t.Fatalf("err = %v, want record 1 rejected", err)
	}
	if n, _ := c.XLen(context.Background(), "out").Result(); n != 0 {
		t.Fatalf("XLEN = %d after a batch whose rejection fails the run", n)
	}
	if err := sink.Write(context.Background(), batch); !errors.As(err, &rej) {
		t.Fatalf("err = %v, want rejections", err)
	}
	if n, _ := c.XLen(context.Background(), "out").Result(); n != 2 {
		t.Fatalf("XLEN = %d, want the 2 others when a DLQ takes the rejection", n)
	}
}
