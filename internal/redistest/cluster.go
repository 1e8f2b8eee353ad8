package redistest

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// CLIBinaryEnv names the environment variable that overrides the redis-cli
// binary (default: redis-cli beside the redis-server binary, else in PATH).
const CLIBinaryEnv = "AGORA_REDIS_CLI"

// clusterNodeTimeout is the cluster-node-timeout of StartCluster's masters:
// short, so a killed master is marked failed within a test's time.
const clusterNodeTimeout = 1000 * time.Millisecond

// CLIBinary returns the redis-cli binary, or calls t.Skip (t.Fatal under
// CI=true) when there is none.
func CLIBinary(tb testing.TB) string {
	tb.Helper()
	name := os.Getenv(CLIBinaryEnv)
	if name == "" {
		name = filepath.Join(filepath.Dir(Binary(tb)), "redis-cli")
		if _, err := os.Stat(name); err != nil {
			name = "redis-cli"
		}
	}
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("redistest: %s not found (%v); CI must have redis-cli installed", name, err)
		}
		tb.Skipf("redistest: %s not found (%v); skipping outside CI", name, err)
	}
	return path
}

// Cluster is a Redis Cluster of masters without replicas, each a Server on
// its own loopback port, owned by one test.
//
// The masters run with cluster-require-full-coverage no: when one is killed,
// the others keep serving their slots, which is what fault tests of a single
// shard need (with the default, the whole cluster would refuse commands).
type Cluster struct {
	tb       testing.TB
	password string
	// Masters are the nodes, each serving a third (or 1/n) of the slots.
	Masters []*Server
}

// StartCluster starts n masters with cluster mode on (n ≥ 3, as redis-cli
// requires), joins them with redis-cli --cluster create, and waits until
// every node reports cluster_state:ok. Options apply to every master
// (WithPassword protects every node). Everything stops when the test ends.
func StartCluster(tb testing.TB, n int, opts ...Option) *Cluster {
	tb.Helper()
	if n < 3 {
		tb.Fatalf("redistest: a Redis Cluster needs at least 3 masters, not %d", n)
	}
	cli := CLIBinary(tb)
	var cfg config
	for _, opt := range opts {
		opt(&cfg)
	}
	c := &Cluster{tb: tb, password: cfg.password}
	nodeOpts := append(append([]Option(nil), opts...), WithArgs(
		"--cluster-enabled", "yes",
		"--cluster-config-file", "nodes.conf",
		"--cluster-node-timeout", strconv.FormatInt(clusterNodeTimeout.Milliseconds(), 10),
		"--cluster-require-full-coverage", "no",
		"--cluster-announce-ip", "127.0.0.1",
	))
	for range n {
		c.Masters = append(c.Masters, Start(tb, nodeOpts...))
	}
	args := []string{"--cluster", "create"}
	for _, m := range c.Masters {
		args = append(args, m.Addr())
	}
	args = append(args, "--cluster-replicas", "0", "--cluster-yes")
	if cfg.password != "" {
		args = append(args, "--no-auth-warning", "-a", cfg.password)
	}
	out, err := exec.Command(cli, args...).CombinedOutput()
	if err != nil {
		tb.Fatalf("redistest: redis-cli --cluster create: %v\n%s", err, out)
	}
	c.WaitHealthy(20 * time.Second)
	return c
}

// URL returns a redis+cluster:// URL naming every master: the first in the
// authority, the others as addr parameters.
func (c *Cluster) URL() string {
	auth := ""
	if c.password != "" {
		auth = ":" + url.PathEscape(c.password) + "@"
	}
	q := url.Values{}
	for _, m := range c.Masters[1:] {
		q.Add("addr", m.Addr())
	}
	return fmt.Sprintf("redis+cluster://%s%s?%s", auth, c.Masters[0].Addr(), q.Encode())
}

// Client returns a plain go-redis client on master i.
func (c *Cluster) Client(i int) *redis.Client {
	c.tb.Helper()
	cl := redis.NewClient(&redis.Options{Addr: c.Masters[i].Addr(), Password: c.password})
	c.tb.Cleanup(func() { _ = cl.Close() })
	return cl
}

// MasterOf returns the index of the master serving key's slot, asking a node
// that is up.
func (c *Cluster) MasterOf(key string) int {
	c.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var lastErr error
	for i, m := range c.Masters {
		if m.PID() == 0 {
			continue
		}
		cl := redis.NewClient(&redis.Options{Addr: m.Addr(), Password: c.password})
		slot, err := cl.ClusterKeySlot(ctx, key).Result()
		var ranges []redis.ClusterSlot
		if err == nil {
			//lint:ignore SA1019 CLUSTER SLOTS answers on every server the helper starts; its replacement needs Redis 7
			ranges, err = cl.ClusterSlots(ctx).Result()
		}
		_ = cl.Close()
		if err != nil {
			lastErr = fmt.Errorf("node %d: %w", i, err)
			continue
		}
		for _, r := range ranges {
			if int64(r.Start) <= slot && slot <= int64(r.End) && len(r.Nodes) > 0 {
				for j, mm := range c.Masters {
					if mm.Addr() == r.Nodes[0].Addr {
						return j
					}
				}
			}
		}
		lastErr = fmt.Errorf("no master serves slot %d", slot)
	}
	c.tb.Fatalf("redistest: master of %q: %v", key, lastErr)
	return -1
}

// WaitHealthy waits until every running master reports cluster_state:ok
// and knows every other master's slots.
func (c *Cluster) WaitHealthy(timeout time.Duration) {
	c.tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := c.healthy()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			c.tb.Fatalf("redistest: cluster not healthy after %s: %v", timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (c *Cluster) healthy() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for i, m := range c.Masters {
		if m.PID() == 0 {
			continue
		}
		cl := redis.NewClient(&redis.Options{Addr: m.Addr(), Password: c.password})
		info, err := cl.ClusterInfo(ctx).Result()
		_ = cl.Close()
		if err != nil {
			return fmt.Errorf("node %d: %w", i, err)
		}
		if !strings.Contains(info, "cluster_state:ok") {
			return fmt.Errorf("node %d: not cluster_state:ok", i)
		}
		if !strings.Contains(info, "cluster_slots_assigned:16384") ||
			!strings.Contains(info, fmt.Sprintf("cluster_known_nodes:%d", len(c.Masters))) {
			return fmt.Errorf("node %d does not know the whole cluster yet", i)
		}
	}
	return nil
}

// WaitNodeFailed waits until every other running master marks master i as
// failed (the cluster-node-timeout of 1 s, then gossip), so that a killed
// master is known dead across the cluster.
func (c *Cluster) WaitNodeFailed(i int, timeout time.Duration) {
	c.tb.Helper()
	deadline := time.Now().Add(timeout)
	addr := c.Masters[i].Addr()
	for {
		failed := 0
		running := 0
		for j, m := range c.Masters {
			if j == i || m.PID() == 0 {
				continue
			}
			running++
			cl := redis.NewClient(&redis.Options{Addr: m.Addr(), Password: c.password})
			nodes, err := cl.ClusterNodes(context.Background()).Result()
			_ = cl.Close()
			if err != nil {
				continue
			}
			for _, line := range strings.Split(nodes, "\n") {
				f := strings.Fields(line)
				if len(f) > 2 && strings.HasPrefix(f[1], addr+"@") && strings.Contains(f[2], "fail") && !strings.Contains(f[2], "fail?") {
					failed++
				}
			}
		}
		if failed == running {
			return
		}
		if time.Now().After(deadline) {
			c.tb.Fatalf("redistest: master %d (%s) not marked failed after %s", i, addr, timeout)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
