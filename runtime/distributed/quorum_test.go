package distributed

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime/distributed/internal/quorum"
)

func TestQuorumRefusesSettingsThatLeaveNoValidity(t *testing.T) {
	urls := []string{"redis://127.0.0.1:1/0", "redis://127.0.0.1:2/0", "redis://127.0.0.1:3/0"}
	_, err := NewRedisWorkerCoordinator(Options{
		RedisURL: "redis://127.0.0.1:4/0", RedlockRedisURLs: urls,
		LeaseTTL: time.Second, RedlockClockDriftFactor: 0.95,
	})
	if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "RedlockClockDriftFactor") || !strings.Contains(err.Error(), "LeaseTTL") {
		t.Fatalf("drift factor 0.95 on a 1 s lease: %v; want ErrInvalidConfig naming both settings", err)
	}
	c, err := NewRedisWorkerCoordinator(Options{RedisURL: "redis://127.0.0.1:4/0", RedlockRedisURLs: urls})
	if err != nil {
		t.Fatalf("defaults: %v", err)
	}
	defer c.Close()
	b := quorumOf(t, c)
	const maxNodeTimeout = 250 * time.Millisecond
	if b.redlock.Quorum() != 2 || b.redlock.NodeTimeout() != maxNodeTimeout || b.reservation != 2*maxNodeTimeout || b.primary.reserver.s.LeaseTTL != b.reservation {
		t.Errorf("defaults: quorum %d, node timeout %s, reservation %s (reserver's lease TTL %s)", b.redlock.Quorum(), b.redlock.NodeTimeout(), b.reservation, b.primary.reserver.s.LeaseTTL)
	}
	if b.primary.reserver.registry != "" || b.primary.primary.registry == "" {
		t.Errorf("registry: reserver %q, primary %q; want takeover off for the reservation only", b.primary.reserver.registry, b.primary.primary.registry)
	}
	if rs := redlockStatus(t, c); rs.Validity != quorum.Validity(DefaultLeaseTTL, DefaultRedlockClockDriftFactor).String() || rs.ReachableNodes != 0 || rs.Nodes[0].Contacted {
		t.Errorf("status before any contact %+v", rs)
	}
}
