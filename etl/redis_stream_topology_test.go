package etl_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/internal/redistest"
)

// topologyPassword protects the Cluster's nodes and the Sentinel set-up's
// data servers, so the URLs carry credentials the way deployments do.
const topologyPassword = "t0p%secret"

// writeIDs writes records {"id": from} … {"id": from+n-1} in one batch.
func writeIDs(ctx context.Context, sink *etl.RedisStreamSink, from, n int) error {
	recs := make([]etl.Record, n)
	for i := range recs {
		recs[i] = etl.Record{"id": int64(from + i)}
	}
	return sink.Write(ctx, recs)
}

// drain reads and acknowledges batches of two until a read comes back
// empty, and returns the ids read, in order.
func drain(t *testing.T, src *etl.RedisStreamSource) string {
	t.Helper()
	ctx := context.Background()
	var ids []any
	for {
		b, err := src.Read(ctx, 2)
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Records) == 0 {
			return fmt.Sprint(ids)
		}
		for _, r := range b.Records {
			ids = append(ids, r["id"])
		}
		if err := b.Ack(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// streamThroughURL runs the redis_stream sink and source through url on
// stream: the sink adds entries, a consumer reads some and dies without
// acknowledging, and its successor under the same name reads those first,
// then the rest, each once. node is a plain client on the server that
// holds the stream, to check what the components did there.
func streamThroughURL(t *testing.T, url, stream string, node *redis.Client) (*etl.RedisStreamSink, *etl.RedisStreamSource) {
	t.Helper()
	ctx := context.Background()
	sink, err := etl.NewRedisStreamSink(etl.RedisStreamSinkConfig{URL: url, Stream: stream})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sink.Close() })
	if err := writeIDs(ctx, sink, 0, 5); err != nil {
		t.Fatal(err)
	}
	if n := node.XLen(ctx, stream).Val(); n != 5 {
		t.Fatalf("XLEN %s on the node that holds it = %d, want 5", stream, n)
	}

	cfg := etl.RedisStreamSourceConfig{URL: url, Stream: stream, Group: "g", Consumer: "c1"}
	first := newStreamSource(t, cfg)
	b, err := first.Read(ctx, 3)
	if err != nil || len(b.Records) != 3 {
		t.Fatalf("first read: %v %v", b.Records, err)
	}
	first.Close() // a crash: never acknowledged

	if err := writeIDs(ctx, sink, 5, 2); err != nil {
		t.Fatal(err)
	}
	again := newStreamSource(t, cfg)
	if got := drain(t, again); got != "[0 1 2 3 4 5 6]" {
		t.Fatalf("ids %s: the unacknowledged 0-2 must come first, then the rest once", got)
	}
	if n := pendingCount(t, node, stream, "g"); n != 0 {
		t.Fatalf("pending = %d after every batch was acknowledged", n)
	}
	return sink, again
}

// TestRedisStreamThroughRedisCluster: a redis+cluster:// URL gives the
// components a ClusterClient, so a stream on any master is reached from
// the seed nodes the URL names (the stream here lives on a master other
// than the first, so commands are redirected to it).
func TestRedisStreamThroughRedisCluster(t *testing.T) {
	cl := redistest.StartCluster(t, 3, redistest.WithPassword(topologyPassword))
	stream := ""
	for i := 0; stream == ""; i++ {
		if k := fmt.Sprintf("events-%d", i); cl.MasterOf(k) != 0 {
			stream = k
		}
	}
	streamThroughURL(t, cl.URL(), stream, cl.Client(cl.MasterOf(stream)))
}

// TestRedisStreamThroughSentinel: a redis+sentinel:// URL gives the
// components a failover client, which finds the primary through the
// Sentinels and follows it when they fail over: the same sink and source
// go on after a failover.
func TestRedisStreamThroughSentinel(t *testing.T) {
	g := redistest.StartSentinels(t, redistest.WithPassword(topologyPassword))
	primary := redis.NewClient(&redis.Options{Addr: g.Master().Addr(), Password: topologyPassword})
	t.Cleanup(func() { primary.Close() })
	sink, src := streamThroughURL(t, g.URL(), "events", primary)

	ctx := context.Background()
	// The replica has every entry and the group before the failover, so
	// nothing is lost by it.
	if n, err := primary.Wait(ctx, 1, 5*time.Second).Result(); err != nil || n != 1 {
		t.Fatalf("WAIT 1 = %d, %v", n, err)
	}
	next := g.Failover(20 * time.Second)

	// The first write after the switch may reach the old primary, now a
	// read-only replica, before the client hears of the switch: a failed
	// batch, which a pipeline retries. Retry the same way.
	deadline := time.Now().Add(10 * time.Second)
	for err := writeIDs(ctx, sink, 7, 2); err != nil; err = writeIDs(ctx, sink, 7, 2) {
		if time.Now().After(deadline) {
			t.Fatalf("the sink does not reach the new primary: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if got := drain(t, src); got != "[7 8]" {
		t.Fatalf("ids after the failover %s, want [7 8]", got)
	}
	now := redis.NewClient(&redis.Options{Addr: next.Addr(), Password: topologyPassword})
	t.Cleanup(func() { now.Close() })
	if n := now.XLen(ctx, "events").Val(); n != 9 {
		t.Fatalf("XLEN on the new primary = %d, want 9", n)
	}
	if n := pendingCount(t, now, "events", "g"); n != 0 {
		t.Fatalf("pending on the new primary = %d", n)
	}
}

// TestRedisStreamConfigValidateTopologyURLs: Cluster and Sentinel URLs are
// checked when the config is, by the coordinator's parser: a mistake is
// reported under the url key with the URL redacted.
func TestRedisStreamConfigValidateTopologyURLs(t *testing.T) {
	for _, tc := range []struct{ url, want string }{
		{"redis+cluster://:s3cret@127.0.0.1:7000?addr=127.0.0.1:7001", ""},
		{"redis+sentinel://127.0.0.1:26379?master_name=m&password=s3cret", ""},
		{"redis+cluster://:s3cret@127.0.0.1:7000/2", "database 0 only"},
		{"redis+sentinel://127.0.0.1:26379?password=s3cret", "has no master_name"},
	} {
		src := etl.RedisStreamSourceConfig{URL: tc.url, Stream: "s", Group: "g"}.Validate()
		sink := etl.RedisStreamSinkConfig{URL: tc.url, Stream: "s"}.Validate()
		for _, err := range []error{src, sink} {
			if tc.want == "" {
				if err != nil {
					t.Errorf("%s: %v", tc.url, err)
				}
				continue
			}
			var fe *etl.FieldError
			if !errors.As(err, &fe) || fe.Key != "url" || !strings.Contains(err.Error(), tc.want) ||
				!strings.Contains(err.Error(), "xxxxx") || strings.Contains(err.Error(), "s3cret") {
				t.Errorf("%s: %v", tc.url, err)
			}
		}
	}
}
