package distributed

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/internal/redistest"
	"github.com/agora-etl/agora/runtime"
)

// Coordinators on a real 3-master Redis Cluster: every script keeps to one
// hash slot (a CROSSSLOT reply would fail these tests), the registry scan
// covers every master, and a dead master stops only its own pipelines.

// clusterReal is a set of coordinators on one real Redis Cluster.
type clusterReal struct {
	t      *testing.T
	cl     *redistest.Cluster
	logs   *logBuffer
	prefix string // KeyPrefix; empty for the default
}

func newClusterReal(t *testing.T, opts ...redistest.Option) *clusterReal {
	t.Helper()
	return &clusterReal{t: t, cl: redistest.StartCluster(t, 3, opts...), logs: &logBuffer{}}
}

// clusterPassword protects the shared cluster's nodes, so its tests run
// through the URL's credentials.
const clusterPassword = "cl@ster/pw"

// sub returns r for subtest t with its own key prefix, so subtests share
// the cluster (starting one takes about two seconds) but no keys.
func (r *clusterReal) sub(t *testing.T) *clusterReal {
	return &clusterReal{t: t, cl: r.cl, logs: &logBuffer{}, prefix: "agora:" + t.Name() + ":"}
}

func (r *clusterReal) options(ttl time.Duration) Options {
	return Options{
		KeyPrefix: r.prefix,
		RedisURL:  r.cl.URL(),
		LeaseTTL:  ttl,
		Logger:    slog.New(slog.NewTextHandler(r.logs, &slog.HandlerOptions{Level: slog.LevelInfo})),
	}
}

func (r *clusterReal) started(opts Options, workerID string, pipelines []string) *RedisWorkerCoordinator {
	r.t.Helper()
	return startCoordinator(r.t, opts, workerID, pipelines)
}

// onEveryMaster returns n ids made from format, the ith served by master
// i % 3, for keys built by key (a pipeline's lease key, a worker's record).
func (r *clusterReal) onEveryMaster(n int, format string, key func(id string) string) []string {
	r.t.Helper()
	out := make([]string, n)
	found := 0
	for j := 0; found < n && j < 1000; j++ {
		id := fmt.Sprintf(format, j)
		m := r.cl.MasterOf(key(id))
		for i := range out {
			if out[i] == "" && i%3 == m {
				out[i] = id
				found++
				break
			}
		}
	}
	if found < n {
		r.t.Fatalf("found ids for only %d of %d places", found, n)
	}
	return out
}

func (r *clusterReal) pipelinesOnEveryMaster() []string {
	return r.onEveryMaster(3, "p%d", keys{prefix: r.prefix}.lease)
}

// TestClusterOnThreeMasters runs, on one password-protected cluster, what
// leaves it healthy.
func TestClusterOnThreeMasters(t *testing.T) {
	r := newClusterReal(t, redistest.WithPassword(clusterPassword))
	t.Run("lease life cycle on every shard", func(t *testing.T) { testClusterLeaseLifecycle(t, r.sub(t)) })
	t.Run("ListWorkers covers every master", func(t *testing.T) { testClusterListWorkers(t, r.sub(t)) })
	t.Run("one holder per pipeline in a race", func(t *testing.T) { testClusterRace(t, r.sub(t)) })
}

func testClusterLeaseLifecycle(t *testing.T, r *clusterReal) {
	ids := r.pipelinesOnEveryMaster()
	// TTL 900 ms: renewal every 300 ms.
	a := r.started(r.options(900*time.Millisecond), "a", ids)
	b := r.started(r.options(900*time.Millisecond), "b", ids)
	lost := recordLost(a)
	if st := a.Status().(CoordinatorStatus); st.Topology != "cluster" || len(st.Nodes) != 3 {
		t.Fatalf("status topology %q nodes %v", st.Topology, st.Nodes)
	}
	if err := a.Healthy(ctx); err != nil {
		t.Fatalf("Healthy: %v", err)
	}
	first := map[string]runtime.Lease{}
	slot := liveSlot() // after the epochs Start made
	for _, id := range ids {
		first[id] = mustAcquire(t, a, id, slot)
		if ok, err := b.TryAcquireLease(ctx, id, slotRun(slot)); ok || err != nil {
			t.Fatalf("%s: b acquired a held lease: %v, %v", id, ok, err)
		}
		if ok, err := b.ValidateLease(ctx, id, first[id].FencingToken); !ok || err != nil {
			t.Fatalf("%s: ValidateLease(held token) = %v, %v", id, ok, err)
		}
	}
	// Renewals go through (three rounds at least) and the leases stay.
	time.Sleep(time.Second)
	for _, id := range ids {
		if cur, held := a.CurrentLease(id); !held || !cur.ExpiresAt.After(first[id].ExpiresAt) {
			t.Fatalf("%s: lease not renewed: %+v held=%v", id, cur, held)
		}
		if err := a.CompleteLease(ctx, id); err != nil {
			t.Fatalf("%s: CompleteLease: %v", id, err)
		}
		if ok, err := b.TryAcquireLease(ctx, id, slotRun(slot)); ok || !errors.Is(err, runtime.ErrSlotCompleted) {
			t.Fatalf("%s: completed slot: %v, %v; want false, ErrSlotCompleted", id, ok, err)
		}
		next := mustAcquire(t, b, id, slot+1)
		if next.FencingToken <= first[id].FencingToken {
			t.Fatalf("%s: token %d not above %d", id, next.FencingToken, first[id].FencingToken)
		}
		if ok, _ := a.ValidateLease(ctx, id, first[id].FencingToken); ok {
			t.Fatalf("%s: stale token validated", id)
		}
		if err := b.ReleaseLease(ctx, id); err != nil {
			t.Fatal(err)
		}
		mustAcquire(t, a, id, runtime.RunNumberOnce)
		if err := a.CompleteLease(ctx, id); err != nil {
			t.Fatal(err)
		}
		if ok, err := b.TryAcquireLease(ctx, id, runtime.RunNumberOnce); ok || !errors.Is(err, runtime.ErrSlotCompleted) {
			t.Fatalf("%s: Once ran twice: %v, %v", id, ok, err)
		}
	}
	if n := lost.count(); n != 0 {
		t.Fatalf("%d leases lost on a healthy cluster", n)
	}
	// The scripts were loaded on every master: no call fell back to EVAL.
	for i := range r.cl.Masters {
		if stats := r.cl.Client(i).Info(ctx, "errorstats").Val(); strings.Contains(stats, "NOSCRIPT") {
			t.Errorf("master %d answered NOSCRIPT: %s", i, stats)
		}
	}
	raw, _ := json.Marshal(a.Status())
	for _, text := range []string{string(raw), r.logs.String()} {
		if strings.Contains(text, "cl@ster") || strings.Contains(text, "cl%40ster") {
			t.Errorf("the password shows in %s", text)
		}
	}
}

func testClusterListWorkers(t *testing.T, r *clusterReal) {
	workers := r.onEveryMaster(6, "worker-%d", keys{prefix: r.prefix}.worker)
	for _, w := range workers {
		r.started(r.options(10*time.Second), w, []string{"p"})
	}
	list, err := newConnected(t, r.options(10*time.Second)).ListWorkers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range list {
		got = append(got, w.ID)
	}
	want := slices.Clone(workers)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("ListWorkers = %v, want %v (records on all three masters)", got, want)
	}
}

// newConnected returns a coordinator that is only connected, as an
// inspection tool would use it.
func newConnected(t *testing.T, opts Options) *RedisWorkerCoordinator {
	t.Helper()
	c, err := NewRedisWorkerCoordinator(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	if err := c.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	return c
}

func testClusterRace(t *testing.T, r *clusterReal) {
	ids := r.pipelinesOnEveryMaster()
	var coords []*RedisWorkerCoordinator
	for _, w := range []string{"a", "b", "c"} {
		coords = append(coords, r.started(r.options(10*time.Second), w, ids))
	}
	for id, byWorker := range raceForLeases(t, coords, 10, ids) {
		if len(byWorker) < 2 {
			t.Errorf("%s: acquisitions by worker %v; want several coordinators to win", id, byWorker)
		}
	}
}

func TestClusterKilledMasterStopsOnlyItsPipelines(t *testing.T) {
	r := newClusterReal(t)
	ids := r.pipelinesOnEveryMaster() // ids[i] lives on master i
	// a's registry record lives on the master that dies too: its heartbeats
	// fail from then on, which must not cost the leases on the others.
	workers := r.onEveryMaster(2, "worker-%d", keys{prefix: r.prefix}.worker)
	// TTL 1.5 s: renewal every 0.5 s, renewal deadline 1 s.
	a := r.started(r.options(1500*time.Millisecond), workers[0], ids)
	b := r.started(r.options(1500*time.Millisecond), workers[1], ids)
	lost := recordLost(a)
	leases := map[string]runtime.Lease{}
	for _, id := range ids {
		leases[id] = mustAcquire(t, a, id, runtime.RunNumberAuto)
	}

	r.cl.Masters[0].Kill()
	killed := time.Now()
	select {
	case l := <-lost.ch:
		if l.PipelineID != ids[0] {
			t.Fatalf("lost %s, which lives on a master that is up", l.PipelineID)
		}
		if took := time.Since(killed); took > 3*time.Second {
			t.Errorf("lease on the dead master given up after %s, want about the 1 s renewal deadline", took)
		}
	case <-time.After(5 * time.Second):
		t.Fatalf("lease of %s on the killed master not given up", ids[0])
	}

	// Fail-safe: nobody gets the dead master's pipeline.
	start := time.Now()
	if ok, err := b.TryAcquireLease(ctx, ids[0], runtime.RunNumberAuto); ok || err == nil {
		t.Fatalf("acquire on the killed master = %v, %v; want an error and no lease", ok, err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("refusing took %s", took)
	}
	if _, err := b.ValidateLease(ctx, ids[0], leases[ids[0]].FencingToken); err == nil {
		t.Error("ValidateLease on the killed master answered")
	}

	// The others go on: a keeps renewing its leases there, b is refused
	// while a holds them and gets them once a lets go.
	time.Sleep(1500 * time.Millisecond) // past a lease TTL: only renewals keep them
	for _, id := range ids[1:] {
		if _, held := a.CurrentLease(id); !held {
			t.Fatalf("lease of %s on a live master lost\n%s", id, r.logs)
		}
		if ok, err := b.ValidateLease(ctx, id, leases[id].FencingToken); !ok || err != nil {
			t.Fatalf("%s: ValidateLease = %v, %v", id, ok, err)
		}
		if ok, err := b.TryAcquireLease(ctx, id, runtime.RunNumberAuto); ok || err != nil {
			t.Fatalf("%s: b acquired a held lease: %v, %v", id, ok, err)
		}
		if err := a.ReleaseLease(ctx, id); err != nil {
			t.Fatal(err)
		}
		next := mustAcquire(t, b, id, runtime.RunNumberAuto)
		if next.FencingToken <= leases[id].FencingToken {
			t.Fatalf("%s: token %d not above %d", id, next.FencingToken, leases[id].FencingToken)
		}
	}
	if n := lost.count(); n != 1 {
		t.Fatalf("%d leases lost, want only the one on the killed master", n)
	}
	// Every request to the dead master fails and every other succeeds: the
	// outage is logged once per coordinator, not once per flap.
	if n := r.logs.count("distributed: Redis unreachable"); n > 2 {
		t.Errorf("%d outage warnings from two coordinators, want at most one each:\n%s", n, r.logs)
	}
}
