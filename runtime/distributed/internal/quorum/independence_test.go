package quorum

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agora-etl/agora/internal/redistest"
	"github.com/agora-etl/agora/internal/redisurl"
)

// stubPrimary is a Primary that answers everything, reports no run id and
// records the reservations given back.
type stubPrimary struct {
	mu       sync.Mutex
	released []Lease
}

func (p *stubPrimary) ReleaseReservation(_ context.Context, l Lease) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.released = append(p.released, l)
	return nil
}

func (p *stubPrimary) Complete(context.Context, Lease) error      { return nil }
func (p *stubPrimary) Ping(context.Context) error                 { return nil }
func (p *stubPrimary) Prepare(context.Context) error              { return nil }
func (p *stubPrimary) ServerInfo(context.Context) (string, error) { return "", nil }

// releasedReservations returns the leases whose reservation was given back.
func (p *stubPrimary) releasedReservations() []Lease {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.released)
}

// testRig is a backend on fresh redis-servers, with its stub primary.
type testRig struct {
	b       *Backend
	primary *stubPrimary
	servers []*redistest.Server
}

// newTestRig starts n redis-servers and a backend on them with a lease TTL
// of ttl.
func newTestRig(t *testing.T, n int, ttl time.Duration) *testRig {
	t.Helper()
	r := &testRig{primary: &stubPrimary{}}
	var nodes []redisurl.URL
	var raws []string
	for range n {
		srv := redistest.Start(t)
		u, err := redisurl.Parse(srv.URL())
		if err != nil {
			t.Fatal(err)
		}
		r.servers = append(r.servers, srv)
		nodes, raws = append(nodes, u), append(raws, srv.URL())
	}
	r.b = New(Settings{
		Nodes: nodes, Primary: "redis://primary", KeyPrefix: "t:",
		LeaseTTL: ttl, ClockDriftFactor: 0.01, OnceTTL: 2 * ttl, OpTimeout: 2 * time.Second,
		Redactor: redisurl.NewRedactor(raws...), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}, r.primary)
	t.Cleanup(func() { _ = r.b.Close() })
	return r
}

func TestGuardRefusesAServerReachedTwice(t *testing.T) {
	// A node whose name starts pointing at another node's server after
	// Start: its connections are refused, so it counts as down.
	b := newTestRig(t, 3, 2*time.Second).b
	if err := b.VerifyStart(context.Background()); err != nil {
		t.Fatal(err)
	}
	g := b.guard
	id0 := g.runIDs[0]
	if id0 == "" || g.runIDs[1] == "" || id0 == g.runIDs[1] {
		t.Fatalf("run ids after VerifyStart %q; want three distinct", g.runIDs)
	}
	err := g.admit(2, serverInfo{runID: id0, role: "master"})
	if !errors.Is(err, ErrNotIndependent) || !strings.Contains(err.Error(), "RedlockRedisURLs[0]") || !strings.Contains(err.Error(), "RedlockRedisURLs[2]") {
		t.Fatalf("admit(2, node 0's run id) = %v; want ErrNotIndependent naming both", err)
	}
	// Node 0 restarted (a new run id): its old one no longer blocks others.
	if err := g.admit(0, serverInfo{runID: "fresh", role: "master"}); err != nil {
		t.Fatal(err)
	}
	if err := g.admit(2, serverInfo{runID: id0, role: "master"}); err != nil {
		t.Fatalf("admit after node 0 moved on: %v", err)
	}
	if err := g.admit(1, serverInfo{runID: "x", role: "slave"}); !errors.Is(err, ErrNotIndependent) {
		t.Fatalf("admit(replica) = %v; want ErrNotIndependent", err)
	}
}
