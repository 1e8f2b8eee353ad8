package distributed

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/runtime"
)

func TestQuorumTimings(t *testing.T) {
	for _, tc := range []struct {
		ttl, node time.Duration
	}{
		{300 * time.Second, maxNodeTimeout},
		{2 * time.Second, 200 * time.Millisecond},
		{time.Second, 100 * time.Millisecond},
		{5 * time.Millisecond, time.Millisecond},
	} {
		if got := quorumNodeTimeout(tc.ttl); got != tc.node {
			t.Errorf("quorumNodeTimeout(%s) = %s, want %s", tc.ttl, got, tc.node)
		}
	}
	// TTL − (TTL × drift + 2 ms)
	if got, want := quorumValidity(10*time.Second, 0.01), 10*time.Second-100*time.Millisecond-2*time.Millisecond; got != want {
		t.Errorf("quorumValidity(10s, 0.01) = %s, want %s", got, want)
	}
	for n, q := range map[int]int{3: 2, 4: 3, 5: 3, 6: 4, 7: 4} {
		if got := majority(n); got != q {
			t.Errorf("majority(%d) = %d, want %d", n, got, q)
		}
	}
}

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
	if b.quorum != 2 || b.nodeTimeout != maxNodeTimeout || b.reservation != 2*maxNodeTimeout || b.stateTTL != 2*DefaultLeaseTTL {
		t.Errorf("defaults: quorum %d, node timeout %s, reservation %s, state TTL %s", b.quorum, b.nodeTimeout, b.reservation, b.stateTTL)
	}
	if rs := redlockStatus(t, c); rs.Validity != quorumValidity(DefaultLeaseTTL, DefaultRedlockClockDriftFactor).String() || rs.ReachableNodes != 0 || rs.Nodes[0].Contacted {
		t.Errorf("status before any contact %+v", rs)
	}
}

func TestParseServerInfo(t *testing.T) {
	info := "# Server\r\nredis_version:7.0.15\r\nredis_mode:standalone\r\nrun_id:abc123\r\n# Replication\r\nrole:master\r\n# Cluster\r\ncluster_enabled:0\r\n"
	si := parseServerInfo(info)
	if si.runID != "abc123" || si.role != "master" || si.mode != "standalone" || si.cluster || si.problem() != "" {
		t.Fatalf("parseServerInfo = %+v (%q)", si, si.problem())
	}
	for _, tc := range []struct {
		si   serverInfo
		want string
	}{
		{serverInfo{role: "slave"}, "replica"},
		{serverInfo{role: "master", cluster: true}, "Cluster"},
		{serverInfo{mode: "sentinel"}, "Sentinel"},
	} {
		if got := tc.si.problem(); !strings.Contains(got, tc.want) {
			t.Errorf("problem(%+v) = %q, want it to say %s", tc.si, got, tc.want)
		}
	}
}

func TestNodeValueRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		ref  leaseRef
		want string
	}{
		{leaseRef{Owner: "w#1", Token: 7, RunNumber: 7, Mode: runtime.RunNumberAuto}, "7 7 0 w#1"},
		{leaseRef{Owner: "host-1#ab", Token: 9, Mode: 1_800_000_000}, "9 1800000000 1800000000 host-1#ab"},
		{leaseRef{Owner: "a b#c", Token: 3, Mode: runtime.RunNumberOnce}, "3 3 -1 a b#c"},
	} {
		v := nodeValue(tc.ref)
		if v != tc.want {
			t.Errorf("nodeValue(%+v) = %q, want %q", tc.ref, v, tc.want)
		}
		if tok, err := leaseToken(v); err != nil || tok != tc.ref.Token {
			t.Errorf("leaseToken(%q) = %d, %v", v, tok, err)
		}
	}
	if _, err := leaseToken("garbage"); err == nil {
		t.Error("leaseToken(garbage) did not fail")
	}
}

func TestTallyAcquire(t *testing.T) {
	n := func(i int) *quorumNode { return &quorumNode{index: i} }
	got := []nodeReply[[]int64]{
		{node: n(0), val: []int64{1}},
		{node: n(1), val: []int64{0, 41}},
		{node: n(2), val: []int64{-2, 44}},
		{node: n(3), val: []int64{-1}},
		{node: n(4), err: errors.New("down")},
		{node: n(5), val: []int64{9}},
	}
	want := acquireTally{granted: 1, held: 1, completed: 1, stale: 1, failed: 2, holder: 44}
	if tally := tallyAcquire(got); tally != want {
		t.Fatalf("tallyAcquire = %+v, want %+v", tally, want)
	}
}
