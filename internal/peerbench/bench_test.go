package peerbench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"log/slog"
	"slices"
	"testing"
	"time"

	"github.com/bsm/redislock"
	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/internal/redistest"
	"github.com/agora-etl/agora/internal/redisurl"
	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/distributed"
)

// cycler does one acquire+release cycle.
type cycler func(ctx context.Context) error

// floorRelease is the usual compare-and-delete for a SET NX lock.
var floorRelease = redis.NewScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`)

// scriptedSetNX is the floor's SET NX PX sent as a script: what any acquire
// that needs a script pays before doing anything else.
var scriptedSetNX = redis.NewScript(`if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end return 0`)

// mintingSetNX is the least an acquire can do under the token rules of
// fencing.go, on the floor's own lease (a string taken with SET NX PX): read
// the server clock, write max(last+1, clock) to the counter while reading
// the last token, take the lease, and undo the counter when refused. It has
// none of the coordinator's slot, Once or retry rules.
var mintingSetNX = redis.NewScript(`
local now = redis.call('TIME')
local token = now[1] * 1000000 + now[2]
local last = redis.call('SET', KEYS[2], string.format('%d', token), 'GET')
if last and tonumber(last) >= token then
  token = tonumber(last) + 1
  redis.call('SET', KEYS[2], string.format('%d', token))
end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return token
end
if last then redis.call('SET', KEYS[2], last) else redis.call('DEL', KEYS[2]) end
return 0`)

// benchCyclers sets up the implementations on srv: this coordinator, the
// raw go-redis floor (SET NX PX + Lua compare-and-delete), bsm/redislock,
// the floor with its SET NX PX sent as a script ("floor-script"), and the
// floor minting a token by the coordinator's rules ("floor-token").
func benchCyclers(b *testing.B, srv *redistest.Server) map[string]cycler {
	coord, err := distributed.NewRedisWorkerCoordinator(distributed.Options{
		RedisURL: srv.URL(),
		LeaseTTL: time.Minute,
		Logger:   slog.New(slog.NewTextHandler(io.Discard, nil)),
	})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = coord.Close() })
	if err := coord.Start(context.Background(), "bench", []string{"bench"}); err != nil {
		b.Fatal(err)
	}
	// The others share one go-redis client made from the same URL by the
	// same parser as the coordinator's (same options; this module sees
	// only distributed's exported API, so not the coordinator's own pool),
	// and the floor stores a value as long as the coordinator's lease value
	// ("<token> <run> <owner>", 16-digit tokens, the owner being the worker
	// id, "#" and 16 hex digits): the only difference left is the work each
	// one asks Redis to do.
	parsed, err := redisurl.Parse(srv.URL())
	if err != nil {
		b.Fatal(err)
	}
	client := parsed.NewClient()
	b.Cleanup(func() { _ = client.Close() })
	locker := redislock.New(client)
	size := 2*16 + 2 + len("bench#") + 16
	value := make([]byte, (size+1)/2)
	_, _ = rand.Read(value)
	token := hex.EncodeToString(value)[:size]

	return map[string]cycler{
		"coordinator": coordinatorCycler(coord),
		"floor": func(ctx context.Context) error {
			ok, err := client.SetNX(ctx, "floor:bench", token, time.Minute).Result()
			if err != nil {
				return err
			}
			if !ok {
				return errors.New("not acquired")
			}
			return floorRelease.Run(ctx, client, []string{"floor:bench"}, token).Err()
		},
		"floor-script": func(ctx context.Context) error {
			ok, err := scriptedSetNX.Run(ctx, client, []string{"floor-script:bench"}, token, time.Minute.Milliseconds()).Int64()
			if err != nil {
				return err
			}
			if ok != 1 {
				return errors.New("not acquired")
			}
			return floorRelease.Run(ctx, client, []string{"floor-script:bench"}, token).Err()
		},
		"floor-token": func(ctx context.Context) error {
			tok, err := mintingSetNX.Run(ctx, client, []string{"floor-token:{bench}", "floor-token:{bench}:token"}, token, time.Minute.Milliseconds()).Int64()
			if err != nil {
				return err
			}
			if tok <= 0 {
				return errors.New("not acquired")
			}
			return floorRelease.Run(ctx, client, []string{"floor-token:{bench}"}, token).Err()
		},
		"redislock": func(ctx context.Context) error {
			lock, err := locker.Obtain(ctx, "redislock:bench", time.Minute, nil)
			if err != nil {
				return err
			}
			return lock.Release(ctx)
		},
	}
}

// coordinatorCycler is one TryAcquireLease + ReleaseLease of a pipeline.
func coordinatorCycler(coord *distributed.RedisWorkerCoordinator) cycler {
	return func(ctx context.Context) error {
		ok, err := coord.TryAcquireLease(ctx, "bench", runtime.RunNumberAuto)
		if err != nil {
			return err
		}
		if !ok {
			return errors.New("not acquired")
		}
		return coord.ReleaseLease(ctx, "bench")
	}
}

// runCycles runs n cycles and returns each one's latency.
func runCycles(b *testing.B, f cycler, n int) []time.Duration {
	ctx := context.Background()
	lat := make([]time.Duration, n)
	for i := range lat {
		start := time.Now()
		if err := f(ctx); err != nil {
			b.Fatal(err)
		}
		lat[i] = time.Since(start)
	}
	return lat
}

func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	return sorted[min(len(sorted)-1, int(float64(len(sorted))*p))]
}

func reportLatencies(b *testing.B, lat []time.Duration, total time.Duration) {
	slices.Sort(lat)
	b.ReportMetric(float64(len(lat))/total.Seconds(), "cycles/s")
	b.ReportMetric(float64(percentile(lat, 0.50).Microseconds()), "p50-µs")
	b.ReportMetric(float64(percentile(lat, 0.99).Microseconds()), "p99-µs")
}

// BenchmarkAcquireRelease measures one acquire+release cycle, one after
// another on one connection's worth of load, for this coordinator (which
// also mints a fencing token and checks the slot rule), the raw go-redis
// floor and bsm/redislock, against the same redis-server in the same run.
// The "ratio" case interleaves them, floor-script and floor-token in rounds
// so that drift in the machine's speed hits all alike, and reports
// throughput relative to the floor: floor-script/floor shows what sending an
// acquire as a script costs by itself, floor-token/floor what minting a
// token by the rules costs on top, with nothing else of the coordinator.
func BenchmarkAcquireRelease(b *testing.B) {
	srv := redistest.Start(b)
	cyclers := benchCyclers(b, srv)
	benchEach(b, cyclers, "coordinator", "floor", "redislock")
	b.Run("ratio", func(b *testing.B) {
		names := []string{"coordinator", "floor", "redislock", "floor-script", "floor-token"}
		spent, rounds := interleave(b, cyclers, names, ratioRound)
		// The median over rounds is what a burst of other work on the
		// machine, landing on one contender's round, cannot move.
		for _, n := range names {
			if n == "floor" {
				continue
			}
			perRound := make([]float64, len(rounds))
			for i, took := range rounds {
				perRound[i] = took["floor"].Seconds() / took[n].Seconds()
			}
			b.ReportMetric(spent["floor"].Seconds()/spent[n].Seconds(), n+"/floor")
			b.ReportMetric(median(perRound), n+"/floor-median")
		}
	})
}

// benchEach runs each named cycler as a sub-benchmark of its own, one cycle
// after another, and reports its rate and latencies.
func benchEach(b *testing.B, cyclers map[string]cycler, names ...string) {
	for _, name := range names {
		b.Run(name, func(b *testing.B) {
			runCycles(b, cyclers[name], 200) // warm up connections and scripts
			b.ResetTimer()
			start := time.Now()
			lat := runCycles(b, cyclers[name], b.N)
			total := time.Since(start)
			b.StopTimer()
			reportLatencies(b, lat, total)
		})
	}
}

// interleave runs the named cyclers in rounds of round cycles each, in a
// rotating order, until each has run b.N cycles, so that drift in the
// machine's speed hits all alike. It returns each one's total time and its
// time in every round.
func interleave(b *testing.B, cyclers map[string]cycler, names []string, round int) (spent map[string]time.Duration, rounds []map[string]time.Duration) {
	for _, n := range names {
		runCycles(b, cyclers[n], round) // warm up
	}
	spent = map[string]time.Duration{}
	b.ResetTimer()
	for r, done := 0, 0; done < b.N; r, done = r+1, done+round {
		// Rotate the order: whoever runs first after a switch pays for
		// waking the connection up.
		took := map[string]time.Duration{}
		for i := range names {
			n := names[(i+r)%len(names)]
			start := time.Now()
			runCycles(b, cyclers[n], round)
			took[n] = time.Since(start)
			spent[n] += took[n]
		}
		rounds = append(rounds, took)
	}
	b.StopTimer()
	return spent, rounds
}

// ratioRound is how many cycles one contender runs before the next takes
// over in the ratio benchmark: long enough to amortise the switch, short
// enough that a load change on the machine rarely spans only one contender.
const ratioRound = 50

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	v = slices.Clone(v)
	slices.Sort(v)
	return v[len(v)/2]
}
