package peerbench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/bsm/redislock"
	"github.com/go-co-op/gocron/v2"
	"github.com/redis/go-redis/v9"

	"github.com/agora-etl/agora/internal/redistest"
	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/distributed"
	"github.com/agora-etl/agora/runtime/history"
)

// The fleet benchmark: 3 replica processes (this test binary re-executed as
// TestFleetReplica) share one redis-server, each with N pipelines on
// "* * * * * *". Every run records which pipeline and slot it ran and how
// late it started; the parent reads INFO cpu and commandstats at both ends
// of the measured window and counts missed and duplicate slots.
//
// Contenders, one after another in the same benchmark run:
//   - agora: a WorkerPool with the Redis coordinator (defaults);
//   - agora-noahead: the same without lease-ahead (every lease asked for
//     at its slot, as before lease-ahead), not in the default set;
//   - agora-kill: agora with a 1 s heartbeat, whose replica 0 is SIGKILLed
//     5 s before the window (its record expires before it starts), not in
//     the default set;
//   - local: the same pool without any coordinator (every replica runs
//     every slot, so 2 × N duplicates a slot by design): the least any
//     design must do to start N runs a second on this machine, with no
//     Redis at the boundary, not in the default set;
//   - gocron: gocron v2 with a bsm/redislock distributed locker (the lock
//     is the job's name, held while the job runs, as gocron asks it);
//   - floor-fenced: the least an implementation keeping agora's rules
//     (one run per slot, runs of a pipeline never overlapping, a fencing
//     token above every earlier one, a completion record, a release that
//     only frees its own lease) must do: the floor's claims, then one
//     fencedFloorScript call per batch for the claims won, then one
//     fencedFloorRelease call per batch;
//   - floor: the least any implementation must do, with no fencing, no
//     completion record and no release: each replica sends one SET NX PX
//     per pipeline and slot (pipelined, 128 a round trip) and the one that
//     set it "runs".
//
// AGORA_FLEET_SECONDS sets the measured window (default 10 s),
// AGORA_FLEET_SIZES the pipeline counts (default "1000,5000"),
// AGORA_FLEET_IMPLS the contenders (default "agora,gocron,floor-fenced,floor").
// For looking into a run: AGORA_FLEET_STATS=1 logs each Redis command's
// calls and time per run, AGORA_FLEET_PROFILE=dir writes each replica's CPU
// profile there, AGORA_FLEET_TRIPS=1 has each agora replica print its
// round trips by operation, AGORA_FLEET_RUN_FOR=500ms makes agora's runs
// last that long, and AGORA_FLEET_LOG=1 shows agora's warnings.

const (
	fleetImplEnv  = "AGORA_FLEET_IMPL"
	fleetURLEnv   = "AGORA_FLEET_URL"
	fleetNEnv     = "AGORA_FLEET_N"
	fleetUntilEnv = "AGORA_FLEET_UNTIL" // Unix ns at which the replica stops
	fleetOutEnv   = "AGORA_FLEET_OUT"
	fleetIDEnv    = "AGORA_FLEET_ID"
	fleetReplicas = 3
)

// fleetRun is one execution: pipeline, slot (Unix s) and start lateness.
type fleetRun struct {
	idx    int
	slot   int64
	lateUs int64
}

type fleetRecorder struct {
	mu   sync.Mutex
	runs []fleetRun
}

func (r *fleetRecorder) add(idx int, slot int64, started time.Time) {
	late := started.Sub(time.Unix(slot, 0)).Microseconds()
	r.mu.Lock()
	r.runs = append(r.runs, fleetRun{idx, slot, late})
	r.mu.Unlock()
}

func (r *fleetRecorder) write(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	r.mu.Lock()
	for _, run := range r.runs {
		fmt.Fprintf(w, "%d %d %d\n", run.idx, run.slot, run.lateUs)
	}
	r.mu.Unlock()
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}

// TestFleetReplica is not a test: BenchmarkFleet runs it in each replica
// process.
func TestFleetReplica(t *testing.T) {
	impl := os.Getenv(fleetImplEnv)
	if impl == "" {
		t.Skip("replica process for BenchmarkFleet")
	}
	n, _ := strconv.Atoi(os.Getenv(fleetNEnv))
	untilNs, _ := strconv.ParseInt(os.Getenv(fleetUntilEnv), 10, 64)
	until := time.Unix(0, untilNs)
	url, id := os.Getenv(fleetURLEnv), os.Getenv(fleetIDEnv)
	rec := &fleetRecorder{runs: make([]fleetRun, 0, n*30)}
	ctx, cancel := context.WithDeadline(context.Background(), until)
	defer cancel()
	var err error
	switch impl {
	case "agora", "agora-noahead", "agora-kill", "local":
		err = fleetAgora(ctx, url, id, n, rec, impl)
	case "gocron":
		err = fleetGocron(ctx, url, n, rec)
	case "floor":
		err = fleetFloor(ctx, url, id, n, rec)
	case "floor-fenced":
		err = fleetFencedFloor(ctx, url, id, n, rec)
	default:
		t.Fatalf("unknown implementation %q", impl)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.write(os.Getenv(fleetOutEnv)); err != nil {
		t.Fatal(err)
	}
}

func fleetAgora(ctx context.Context, url, id string, n int, rec *fleetRecorder, impl string) error {
	var logTo io.Writer = io.Discard
	if os.Getenv("AGORA_FLEET_LOG") != "" {
		logTo = os.Stderr
	}
	quiet := slog.New(slog.NewTextHandler(logTo, &slog.HandlerOptions{Level: slog.LevelWarn}))
	// AGORA_DISTRIBUTED_RUN_HISTORY=off measures the fleet without its run
	// history.
	history, err := history.Parse(os.Getenv(distributed.EnvPrefix + "_RUN_HISTORY"))
	if err != nil {
		return err
	}
	opts := distributed.Options{RedisURL: url, Logger: quiet, RunHistory: history}
	if impl == "agora-kill" {
		// A killed replica's record expires 3 s after its last heartbeat.
		opts.HeartbeatInterval = time.Second
	}
	poolOpts := []runtime.PoolOption{runtime.WithWorkerID(id), runtime.WithLogger(quiet), runtime.WithSignalHandling(false)}
	var coord *distributed.RedisWorkerCoordinator
	if impl != "local" {
		coord, err = distributed.NewRedisWorkerCoordinator(opts)
		if err != nil {
			return err
		}
		defer coord.Close()
		var c runtime.Coordinator = coord
		if impl == "agora-noahead" {
			c = noAhead{coord}
		}
		poolOpts = append(poolOpts, runtime.WithCoordinator(c))
	}
	pool := runtime.NewWorkerPool(poolOpts...)
	every := runtime.MustCron("* * * * * *")
	runFor, _ := time.ParseDuration(os.Getenv("AGORA_FLEET_RUN_FOR"))
	for i := range n {
		pool.Register(&runtime.ScheduledPipeline{
			PipelineID: fmt.Sprintf("p%05d", i), Schedule: every,
			Factory: func(context.Context) (runtime.Pipeline, error) {
				return runtime.PipelineFunc(func(ctx context.Context) error {
					started := time.Now()
					lease, _ := runtime.LeaseFromContext(ctx)
					rec.add(i, lease.RunNumber, started)
					if runFor > 0 {
						time.Sleep(runFor)
					}
					return nil
				}), nil
			},
		})
	}
	err = pool.Run(ctx)
	if os.Getenv("AGORA_FLEET_TRIPS") != "" && coord != nil {
		reg := prometheus.NewRegistry()
		reg.MustRegister(coord)
		mfs, _ := reg.Gather()
		for _, mf := range mfs {
			for _, m := range mf.GetMetric() {
				if h := m.GetHistogram(); h != nil {
					fmt.Fprintf(os.Stderr, "%s %v count=%d sum=%.3fs\n", id, m.GetLabel(), h.GetSampleCount(), h.GetSampleSum())
				}
			}
		}
	}
	return err
}

// redislockLocker adapts bsm/redislock to gocron's Locker.
type redislockLocker struct{ c *redislock.Client }

func (l redislockLocker) Lock(ctx context.Context, key string) (gocron.Lock, error) {
	lock, err := l.c.Obtain(ctx, key, 5*time.Second, nil)
	if err != nil {
		return nil, err
	}
	return redislockLock{lock}, nil
}

type redislockLock struct{ l *redislock.Lock }

func (l redislockLock) Unlock(ctx context.Context) error { return l.l.Release(ctx) }

func fleetGocron(ctx context.Context, url string, n int, rec *fleetRecorder) error {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return err
	}
	client := redis.NewClient(opts)
	defer client.Close()
	s, err := gocron.NewScheduler(gocron.WithDistributedLocker(redislockLocker{redislock.New(client)}))
	if err != nil {
		return err
	}
	for i := range n {
		_, err := s.NewJob(gocron.CronJob("* * * * * *", true),
			gocron.NewTask(func() {
				// gocron does not tell a job its scheduled time: the slot
				// is the second it started in (lateness stays below 1 s
				// at these sizes).
				started := time.Now()
				rec.add(i, started.Unix(), started)
			}),
			gocron.WithName(fmt.Sprintf("p%05d", i)))
		if err != nil {
			return err
		}
	}
	s.Start()
	<-ctx.Done()
	return s.Shutdown()
}

func fleetFloor(ctx context.Context, url, id string, n int, rec *fleetRecorder) error {
	return floorLoop(ctx, url, n, nil, func(client *redis.Client, slot int64, from, to int) {
		for _, i := range floorClaims(client, "floor:", id, slot, from, to) {
			rec.add(i, slot, time.Now())
		}
	})
}

// floorLoop runs the floors' replica: a client on url (with scripts
// loaded), and at each second boundary batch for every 128 of the n
// pipelines, concurrently, until ctx ends.
func floorLoop(ctx context.Context, url string, n int, scripts []*redis.Script, batch func(client *redis.Client, slot int64, from, to int)) error {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return err
	}
	client := redis.NewClient(opts)
	defer client.Close()
	for _, s := range scripts {
		if err := s.Load(ctx, client).Err(); err != nil {
			return err
		}
	}
	for {
		next := time.Now().Truncate(time.Second).Add(time.Second)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Until(next)):
		}
		var wg sync.WaitGroup
		for from := 0; from < n; from += 128 {
			wg.Go(func() { batch(client, next.Unix(), from, min(from+128, n)) })
		}
		wg.Wait()
	}
}

// floorTag is pipeline i's hash tag in the floors' keys.
func floorTag(i int) string { return fmt.Sprintf("{p%05d}", i) }

// floorClaims sets the claim key of slot for pipelines from to to (SET NX
// PX, one pipelined round trip) and returns the pipelines it set.
func floorClaims(client *redis.Client, prefix, id string, slot int64, from, to int) []int {
	bg := context.Background()
	suffix := ":" + strconv.FormatInt(slot, 10)
	claims := make([]*redis.BoolCmd, to-from)
	_, _ = client.Pipelined(bg, func(p redis.Pipeliner) error {
		for i := from; i < to; i++ {
			claims[i-from] = p.SetNX(bg, prefix+floorTag(i)+suffix, id, 10*time.Second)
		}
		return nil
	})
	var won []int
	for i, c := range claims {
		if c.Val() {
			won = append(won, from+i)
		}
	}
	return won
}

// fencedFloorScript is the least a grant can do under the lease and token
// rules, for a batch of pipelines: the slot rule (ZSCORE of the completed
// slot), the lease "<slot> <owner>" taken only if free, with its expiry
// (SET NX PX), and the token as max(last + 1, server clock) with one clock
// reading per call.
// KEYS per pipeline: done, lease, token; ARGV[1] slot, ARGV[2] owner.
var fencedFloorScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local slot = tonumber(ARGV[1])
local out = {}
for i = 1, #KEYS, 3 do
  local done = redis.call('ZSCORE', KEYS[i], 's')
  local token = 0
  if not done or tonumber(done) < slot then
    now = now + 1
    local text = string.format('%d', now)
    if redis.call('SET', KEYS[i + 1], ARGV[1] .. ' ' .. ARGV[2], 'NX', 'PX', 300000) then
      local last = redis.call('SET', KEYS[i + 2], text, 'GET')
      token = now
      if last and tonumber(last) >= now then
        token = tonumber(last) + 1
      end
    end
  end
  out[#out + 1] = token
end
return out
`)

// fencedFloorRelease is the least a completion can do: record the slot
// (ZADD … GT) and delete the lease only if it is still this owner's (GET,
// DEL), for a batch of pipelines in one call. KEYS per pipeline: done,
// lease; ARGV[1] slot, then each lease's value.
var fencedFloorRelease = redis.NewScript(`
for i = 1, #KEYS, 2 do
  redis.call('ZADD', KEYS[i], 'GT', ARGV[1], 's')
  if redis.call('GET', KEYS[i + 1]) == ARGV[(i + 1) / 2 + 1] then
    redis.call('DEL', KEYS[i + 1])
  end
end
return 1
`)

// fleetFencedFloor is the floor with what the lease and token rules cannot
// do without: the slot claims of fleetFloor, then for the claims won one
// fencedFloorScript call per batch, then one fencedFloorRelease call for
// the batch's completions. No registry, renewal, takeover, retries or
// bookkeeping.
func fleetFencedFloor(ctx context.Context, url, id string, n int, rec *fleetRecorder) error {
	scripts := []*redis.Script{fencedFloorScript, fencedFloorRelease}
	return floorLoop(ctx, url, n, scripts, func(client *redis.Client, slot int64, from, to int) {
		bg := context.Background()
		won := floorClaims(client, "ff:claim:", id, slot, from, to)
		if len(won) == 0 {
			return
		}
		keys := make([]string, 0, 3*len(won))
		for _, i := range won {
			keys = append(keys, "ff:done:"+floorTag(i), "ff:lease:"+floorTag(i), "ff:token:"+floorTag(i))
		}
		tokens, err := fencedFloorScript.EvalSha(bg, client, keys, slot, id).Int64Slice()
		if err != nil {
			return
		}
		keys = keys[:0]
		values := []any{slot}
		for j, i := range won {
			if tokens[j] == 0 {
				continue
			}
			rec.add(i, slot, time.Now())
			keys = append(keys, "ff:done:"+floorTag(i), "ff:lease:"+floorTag(i))
			values = append(values, strconv.FormatInt(slot, 10)+" "+id)
		}
		if len(keys) > 0 {
			_ = fencedFloorRelease.EvalSha(bg, client, keys, values...).Err()
		}
	})
}

// fleetResult is one contender's numbers over the measured window.
type fleetResult struct {
	runs, distinct, missed, duplicates int
	p50, p99                           time.Duration
	cpuSeconds                         float64
	commands                           int64
	window                             time.Duration
}

// fleetTarget is the Redis a fleet runs against: the URL its replicas get,
// and a snapshot of the Redis CPU seconds and command calls (INFO itself
// left out) summed over every server.
type fleetTarget struct {
	url      string
	snapshot func() (cpuSeconds float64, calls int64, stats map[string]redistest.CommandStat)
}

// fleetSingle starts one redis-server for a fleet.
func fleetSingle(b *testing.B) fleetTarget {
	srv := redistest.Start(b)
	return fleetTarget{url: srv.URL(), snapshot: fleetSnapshot(b, srv.Addr())}
}

// fleetSnapshot returns a snapshot function over the servers at addrs.
func fleetSnapshot(b *testing.B, addrs ...string) func() (float64, int64, map[string]redistest.CommandStat) {
	admins := make([]*redis.Client, len(addrs))
	for i, a := range addrs {
		admins[i] = redis.NewClient(&redis.Options{Addr: a})
		b.Cleanup(func() { _ = admins[i].Close() })
	}
	return func() (float64, int64, map[string]redistest.CommandStat) {
		var cpu float64
		var calls int64
		stats := map[string]redistest.CommandStat{}
		for _, admin := range admins {
			info, err := admin.Info(context.Background(), "cpu", "commandstats").Result()
			if err != nil {
				b.Fatal(err)
			}
			for name, st := range redistest.ParseCommandStats(info) {
				if name != "info" {
					calls += st.Calls
					sum := stats[name]
					sum.Calls += st.Calls
					sum.Usec += st.Usec
					stats[name] = sum
				}
			}
			cpu += redistest.ParseCPUSeconds(info)
		}
		return cpu, calls, stats
	}
}

func runFleet(b *testing.B, impl string, n int, window time.Duration) fleetResult {
	return runFleetOn(b, fleetSingle(b), impl, n, window)
}

func runFleetOn(b *testing.B, target fleetTarget, impl string, n int, window time.Duration) fleetResult {
	dir := b.TempDir()
	// Slots are whole seconds: the window starts at a second boundary after
	// a warm-up that lets every replica register its pipelines.
	warmUp := 4 * time.Second
	if impl == "agora-kill" {
		warmUp = 10 * time.Second
	}
	start := time.Now().Add(warmUp).Truncate(time.Second)
	end := start.Add(window)
	until := end.Add(2 * time.Second) // let the window's last slots finish
	var cmds []*exec.Cmd
	for r := range fleetReplicas {
		args := []string{"-test.run=^TestFleetReplica$", "-test.bench=^$"}
		if dir := os.Getenv("AGORA_FLEET_PROFILE"); dir != "" {
			args = append(args, "-test.cpuprofile="+filepath.Join(dir, fmt.Sprintf("%s-%d-r%d.pprof", impl, n, r)))
		}
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(),
			fleetImplEnv+"="+impl, fleetURLEnv+"="+target.url, fleetNEnv+"="+strconv.Itoa(n),
			fleetUntilEnv+"="+strconv.FormatInt(until.UnixNano(), 10),
			fleetOutEnv+"="+filepath.Join(dir, fmt.Sprintf("r%d", r)), fleetIDEnv+"="+fmt.Sprintf("replica-%d", r))
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			b.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	snapshot := target.snapshot
	if impl == "agora-kill" {
		// Replica 0, the preferred worker of about a third of the
		// pipelines, is SIGKILLed 5 s before the window: its record has
		// expired by 2 s before it; the others' views may still name it
		// preferred for a while.
		time.Sleep(time.Until(start.Add(-5 * time.Second)))
		_ = cmds[0].Process.Kill()
		_ = cmds[0].Wait()
		cmds = cmds[1:]
	}
	// Snapshots half a second before each end: the runs of a slot start
	// at its boundary, so the window's commands are those of its slots.
	time.Sleep(time.Until(start.Add(-500 * time.Millisecond)))
	cpu0, calls0, stats0 := snapshot()
	time.Sleep(time.Until(end.Add(-500 * time.Millisecond)))
	cpu1, calls1, stats1 := snapshot()
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			b.Fatalf("%s replica: %v", impl, err)
		}
	}

	res := fleetResult{cpuSeconds: cpu1 - cpu0, commands: calls1 - calls0, window: window}
	seen := make(map[[2]int64]int, n*int(window/time.Second))
	var lates []int64
	for r := range fleetReplicas {
		if r == 0 && impl == "agora-kill" {
			continue // killed: wrote nothing
		}
		f, err := os.Open(filepath.Join(dir, fmt.Sprintf("r%d", r)))
		if err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var run fleetRun
			if _, err := fmt.Sscan(sc.Text(), &run.idx, &run.slot, &run.lateUs); err != nil {
				b.Fatal(err)
			}
			if run.slot < start.Unix() || run.slot >= end.Unix() {
				continue
			}
			res.runs++
			seen[[2]int64{int64(run.idx), run.slot}]++
			lates = append(lates, run.lateUs)
		}
		f.Close()
	}
	res.distinct = len(seen)
	res.duplicates = res.runs - res.distinct
	if os.Getenv("AGORA_FLEET_STATS") != "" && res.distinct > 0 {
		logCommandStats(b, stats0, stats1, res.distinct)
	}
	res.missed = n*int(window/time.Second) - res.distinct
	slices.Sort(lates)
	if len(lates) > 0 {
		res.p50 = time.Duration(lates[len(lates)/2]) * time.Microsecond
		res.p99 = time.Duration(lates[len(lates)*99/100]) * time.Microsecond
	}
	return res
}

// fleetWindow is the measured window: AGORA_FLEET_SECONDS, or 10 s.
func fleetWindow(b *testing.B) time.Duration {
	s := os.Getenv("AGORA_FLEET_SECONDS")
	if s == "" {
		return 10 * time.Second
	}
	secs, err := strconv.Atoi(s)
	if err != nil || secs < 2 {
		b.Fatalf("AGORA_FLEET_SECONDS=%q: want whole seconds ≥ 2", s)
	}
	return time.Duration(secs) * time.Second
}

// fleetSizes is the pipeline counts the variable env names ("1000,5000"),
// or def.
func fleetSizes(b *testing.B, env string, def []int) []int {
	s := os.Getenv(env)
	if s == "" {
		return def
	}
	var sizes []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			b.Fatalf("%s=%q: want pipeline counts like 1000,5000", env, s)
		}
		sizes = append(sizes, n)
	}
	return sizes
}

func BenchmarkFleet(b *testing.B) {
	window := fleetWindow(b)
	sizes := fleetSizes(b, "AGORA_FLEET_SIZES", []int{1000, 5000})
	impls := []string{"agora", "gocron", "floor-fenced", "floor"}
	if s := os.Getenv("AGORA_FLEET_IMPLS"); s != "" {
		impls = strings.Split(s, ",")
	}
	for _, n := range sizes {
		for _, impl := range impls {
			b.Run(fmt.Sprintf("N=%d/%s", n, impl), func(b *testing.B) {
				for range b.N {
					r := runFleet(b, impl, n, window)
					b.ReportMetric(float64(r.p50.Microseconds())/1000, "p50-ms")
					b.ReportMetric(float64(r.p99.Microseconds())/1000, "p99-ms")
					b.ReportMetric(100*r.cpuSeconds/r.window.Seconds(), "redis-cpu-%")
					if r.distinct > 0 {
						b.ReportMetric(float64(r.commands)/float64(r.distinct), "cmds/run")
						b.ReportMetric(1e6*r.cpuSeconds/float64(r.distinct), "redis-µs/run")
					}
					b.ReportMetric(float64(r.missed), "missed")
					b.ReportMetric(float64(r.duplicates), "duplicates")
					b.ReportMetric(float64(r.distinct), "slots-run")
				}
			})
		}
	}
}

// logCommandStats logs, per Redis command, the calls and the microseconds
// of Redis time it took per slot run over the window (AGORA_FLEET_STATS=1).
func logCommandStats(b *testing.B, before, after map[string]redistest.CommandStat, runs int) {
	names := make([]string, 0, len(after))
	for name := range after {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		calls := after[name].Calls - before[name].Calls
		usec := after[name].Usec - before[name].Usec
		if calls == 0 {
			continue
		}
		b.Logf("%-12s %6.2f calls/run %6.2f µs/run %6.2f µs/call", name,
			float64(calls)/float64(runs), float64(usec)/float64(runs), float64(usec)/float64(calls))
	}
}

// noAhead is the Redis coordinator without its LeaseAheader capability: the
// pool then asks for every lease at its slot, as before lease-ahead.
type noAhead struct {
	*distributed.RedisWorkerCoordinator
}

// Capabilities are the coordinator's, less lease-ahead.
func (c noAhead) Capabilities() runtime.Capabilities {
	caps := c.RedisWorkerCoordinator.Capabilities()
	caps.LeaseAheader = nil
	return caps
}
