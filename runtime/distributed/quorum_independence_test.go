package distributed

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/internal/redistest"
	"github.com/agora-etl/agora/runtime"
)

func TestRedlockStartRefusesTwoURLsForOneServer(t *testing.T) {
	t.Parallel()
	const secret = "pa55-w0rd"
	sock := filepath.Join(t.TempDir(), "redis.sock")
	aliased := redistest.Start(t, redistest.WithPassword(secret), redistest.WithArgs("--unixsocket", sock, "--unixsocketperm", "700"))
	r := newQuorumRig(t, 1)
	opts := r.options(2 * time.Second)
	opts.RedlockRedisURLs = []string{
		aliased.URL(),
		"unix://:" + secret + "@" + sock + "?db=3",
		r.nodes[0].URL(),
	}
	c := r.coordinator(opts)
	err := c.Start(context.Background(), "a", []string{"p"})
	if !errors.Is(err, ErrQuorumNotIndependent) {
		t.Fatalf("Start = %v; want ErrQuorumNotIndependent", err)
	}
	for _, want := range []string{"RedlockRedisURLs[0]", "RedlockRedisURLs[1]", "same redis-server", "run_id"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if strings.Contains(err.Error(), secret) || strings.Contains(r.logs.String(), secret) {
		t.Fatalf("password shown: %v\n%s", err, r.logs)
	}
	if st := c.Status().(CoordinatorStatus); st.Running {
		t.Fatal("coordinator running after a refused Start")
	}
}

func TestRedlockStartRefusesReplicasAndClusterNodes(t *testing.T) {
	t.Parallel()
	r := newQuorumRig(t, 2)
	replica := redistest.Start(t, redistest.WithArgs("--replicaof", "127.0.0.1", strconv.Itoa(r.nodes[0].Port())))
	cluster := redistest.Start(t, redistest.WithArgs("--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"))
	for name, tc := range map[string]struct {
		url, want string
	}{
		"replica": {replica.URL(), "is a replica"},
		"cluster": {cluster.URL(), "Redis Cluster node"},
	} {
		t.Run(name, func(t *testing.T) {
			opts := r.options(2 * time.Second)
			opts.RedlockRedisURLs = append(opts.RedlockRedisURLs, tc.url)
			c := r.coordinator(opts)
			err := c.Start(context.Background(), "a", []string{"p"})
			if !errors.Is(err, ErrQuorumNotIndependent) || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "RedlockRedisURLs[2]") {
				t.Fatalf("Start = %v; want ErrQuorumNotIndependent saying RedlockRedisURLs[2] %s", err, tc.want)
			}
		})
	}
}

// TestRedlockNodeRefusingINFOCountsAsDown takes INFO away from a node's
// user after Start. The guard then refuses every new connection to it (it
// cannot check the server), so /status must show it down, not reachable
// because the refusal came as a server reply.
func TestRedlockNodeRefusingINFOCountsAsDown(t *testing.T) {
	r := newQuorumRig(t, 3)
	c := r.started(r.options(2*time.Second), "a")
	mustAcquire(t, c, "warm", runtime.RunNumberAuto)
	admin := r.client(r.nodes[2])
	if err := admin.Do(ctx, "ACL", "SETUSER", "default", "-info").Err(); err != nil {
		t.Fatal(err)
	}
	// Drop the coordinator's connections so that it has to reconnect.
	_ = admin.Do(ctx, "CLIENT", "KILL", "TYPE", "normal").Err()
	for range 3 {
		if ok, _ := c.TryAcquireLease(ctx, "p", runtime.RunNumberAuto); ok {
			_ = c.ReleaseLease(ctx, "p")
		}
	}
	rs := redlockStatus(t, c)
	if n := rs.Nodes[2]; n.Reachable || !strings.Contains(n.LastError, "INFO is not allowed") {
		t.Fatalf("node 2: reachable %v, last error %q; want down with the INFO refusal", n.Reachable, n.LastError)
	}
	if rs.ReachableNodes != 2 {
		t.Fatalf("reachable nodes %d, want 2", rs.ReachableNodes)
	}
}
