package quorum

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/internal/redisurl"
	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/runtime/distributed/internal/leasebackend"
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
		if got := NodeTimeout(tc.ttl); got != tc.node {
			t.Errorf("NodeTimeout(%s) = %s, want %s", tc.ttl, got, tc.node)
		}
	}
	// TTL − (TTL × drift + 2 ms)
	if got, want := Validity(10*time.Second, 0.01), 10*time.Second-100*time.Millisecond-2*time.Millisecond; got != want {
		t.Errorf("Validity(10s, 0.01) = %s, want %s", got, want)
	}
	for n, q := range map[int]int{3: 2, 4: 3, 5: 3, 6: 4, 7: 4} {
		if got := Majority(n); got != q {
			t.Errorf("Majority(%d) = %d, want %d", n, got, q)
		}
	}
}

func TestNewDefaults(t *testing.T) {
	var nodes []redisurl.URL
	for _, raw := range []string{"redis://127.0.0.1:1/0", "redis://127.0.0.1:2/0", "redis://127.0.0.1:3/0"} {
		u, err := redisurl.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, u)
	}
	b := New(Settings{Nodes: nodes, KeyPrefix: "t:", LeaseTTL: 30 * time.Second, ClockDriftFactor: 0.01}, nil)
	defer b.Close()
	if b.Quorum() != 2 || b.NodeTimeout() != maxNodeTimeout || b.stateTTL != time.Minute || b.Validity() != Validity(30*time.Second, 0.01) || len(b.Nodes()) != 3 {
		t.Errorf("quorum %d, node timeout %s, state TTL %s, validity %s, %d nodes", b.Quorum(), b.NodeTimeout(), b.stateTTL, b.Validity(), len(b.Nodes()))
	}
	if st := b.Status(); st.ReachableNodes != 0 || st.Nodes[0].Contacted || st.Nodes[0].URL != nodes[0].Redacted {
		t.Errorf("status before any contact %+v", st)
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
		ref  Lease
		want string
	}{
		{Lease{Owner: "w#1", Token: 7, RunNumber: 7, Mode: runtime.RunNumberAuto}, "7 7 0 w#1"},
		{Lease{Owner: "host-1#ab", Token: 9, Mode: 1_800_000_000}, "9 1800000000 1800000000 host-1#ab"},
		{Lease{Owner: "a b#c", Token: 3, Mode: runtime.RunNumberOnce}, "3 3 -1 a b#c"},
	} {
		v := nodeValue(tc.ref)
		if v != tc.want {
			t.Errorf("nodeValue(%+v) = %q, want %q", tc.ref, v, tc.want)
		}
		if tok, err := leasebackend.LeaseToken(v); err != nil || tok != tc.ref.Token {
			t.Errorf("leaseToken(%q) = %d, %v", v, tok, err)
		}
	}
	if _, err := leasebackend.LeaseToken("garbage"); err == nil {
		t.Error("leaseToken(garbage) did not fail")
	}
}

func TestTallyAcquire(t *testing.T) {
	n := func(i int) *Node { return &Node{index: i} }
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
