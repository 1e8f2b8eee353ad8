package redistest

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// MasterName is the name under which a SentinelGroup's Sentinels monitor
// the primary.
const MasterName = "mymaster"

// Timings of a SentinelGroup: a primary that stops answering is declared
// down after sentinelDownAfter, and a failover is retried or given up after
// sentinelFailoverTimeout, so a failover completes in a few seconds.
const (
	sentinelDownAfter       = 500 * time.Millisecond
	sentinelFailoverTimeout = 3 * time.Second
)

// SentinelGroup is a primary, one replica and three Sentinels monitoring
// them (quorum 2), each a Server on its own loopback port, owned by one test.
type SentinelGroup struct {
	tb       testing.TB
	password string
	// Data holds the primary at Start (index 0) and its replica (index 1);
	// after a failover their roles swap: Master says which is which.
	Data [2]*Server
	// Sentinels are the three Sentinels.
	Sentinels [3]*Server
}

// StartSentinels starts a primary, a replica of it and three Sentinels,
// and waits until every Sentinel knows the replica and the other two
// Sentinels, so a failover can be agreed on at once. WithPassword protects
// the data servers (the replica and the Sentinels are given it); the
// Sentinels themselves have none. Everything stops when the test ends.
func StartSentinels(tb testing.TB, opts ...Option) *SentinelGroup {
	tb.Helper()
	var cfg config
	for _, opt := range opts {
		opt(&cfg)
	}
	g := &SentinelGroup{tb: tb, password: cfg.password}
	// No delay before the initial sync: the default waits 5 s for more
	// replicas to share one transfer.
	dataArgs := []string{"--replica-announce-ip", "127.0.0.1", "--repl-diskless-sync-delay", "0"}
	if cfg.password != "" {
		dataArgs = append(dataArgs, "--masterauth", cfg.password)
	}
	dataOpts := append(append([]Option(nil), opts...), WithArgs(dataArgs...))
	g.Data[0] = Start(tb, dataOpts...)
	g.Data[1] = Start(tb, append(dataOpts, WithArgs("--replicaof", "127.0.0.1", strconv.Itoa(g.Data[0].Port())))...)
	g.waitReplicating(g.Data[1], 10*time.Second)

	conf := fmt.Sprintf(`sentinel resolve-hostnames no
sentinel announce-ip 127.0.0.1
sentinel monitor %[1]s 127.0.0.1 %[2]d 2
sentinel down-after-milliseconds %[1]s %[3]d
sentinel failover-timeout %[1]s %[4]d
sentinel parallel-syncs %[1]s 1
`, MasterName, g.Data[0].Port(), sentinelDownAfter.Milliseconds(), sentinelFailoverTimeout.Milliseconds())
	if cfg.password != "" {
		conf += fmt.Sprintf("sentinel auth-pass %s %s\n", MasterName, cfg.password)
	}
	for i := range g.Sentinels {
		g.Sentinels[i] = Start(tb, func(c *config) { c.sentinelConf = conf })
	}
	g.waitDiscovered(20 * time.Second)
	return g
}

// URL returns a redis+sentinel:// URL naming the three Sentinels (the first
// in the authority, the others as addr parameters) and the master name, with
// the data servers' password as the password parameter when they have one.
func (g *SentinelGroup) URL() string {
	q := url.Values{}
	for _, s := range g.Sentinels[1:] {
		q.Add("addr", s.Addr())
	}
	q.Set("master_name", MasterName)
	if g.password != "" {
		q.Set("password", g.password)
	}
	return fmt.Sprintf("redis+sentinel://%s?%s", g.Sentinels[0].Addr(), q.Encode())
}

// sentinelClient returns a client on Sentinel i.
func (g *SentinelGroup) sentinelClient(i int) *redis.SentinelClient {
	return redis.NewSentinelClient(&redis.Options{Addr: g.Sentinels[i].Addr(), DialTimeout: time.Second})
}

// dataClient returns a client on data server d.
func (g *SentinelGroup) dataClient(d *Server) *redis.Client {
	return redis.NewClient(&redis.Options{Addr: d.Addr(), Password: g.password, DialTimeout: time.Second})
}

// MasterAddr returns the primary's address as Sentinel i reports it.
func (g *SentinelGroup) MasterAddr(i int) (string, error) {
	sc := g.sentinelClient(i)
	defer sc.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	hp, err := sc.GetMasterAddrByName(ctx, MasterName).Result()
	if err != nil {
		return "", err
	}
	if len(hp) != 2 {
		return "", fmt.Errorf("reply %v", hp)
	}
	return hp[0] + ":" + hp[1], nil
}

// Master returns the data server that is the primary now, by the Sentinels.
func (g *SentinelGroup) Master() *Server {
	g.tb.Helper()
	addr, err := g.MasterAddr(0)
	if err != nil {
		g.tb.Fatalf("redistest: master address: %v", err)
	}
	for _, d := range g.Data {
		if d.Addr() == addr {
			return d
		}
	}
	g.tb.Fatalf("redistest: Sentinels name %s, which is neither data server", addr)
	return nil
}

// Failover forces a failover with SENTINEL FAILOVER (no agreement needed)
// and waits until the replica is the primary everywhere. It returns the new
// primary.
func (g *SentinelGroup) Failover(timeout time.Duration) *Server {
	g.tb.Helper()
	old := g.Master()
	sc := g.sentinelClient(0)
	defer sc.Close()
	if err := sc.Failover(context.Background(), MasterName).Err(); err != nil {
		g.tb.Fatalf("redistest: SENTINEL FAILOVER: %v", err)
	}
	return g.WaitNewMaster(old, timeout)
}

// WaitNewMaster waits until every Sentinel names a primary other than old
// and that server answers as a writable primary; it returns the new primary.
// Use it after killing the primary.
func (g *SentinelGroup) WaitNewMaster(old *Server, timeout time.Duration) *Server {
	g.tb.Helper()
	deadline := time.Now().Add(timeout)
	var lastErr error
	for time.Now().Before(deadline) {
		next, err := g.newMaster(old)
		if err == nil {
			return next
		}
		lastErr = err
		time.Sleep(50 * time.Millisecond)
	}
	g.tb.Fatalf("redistest: no failover away from %s after %s: %v", old.Addr(), timeout, lastErr)
	return nil
}

func (g *SentinelGroup) newMaster(old *Server) (*Server, error) {
	var next *Server
	for i := range g.Sentinels {
		addr, err := g.MasterAddr(i)
		if err != nil {
			return nil, fmt.Errorf("sentinel %d: %w", i, err)
		}
		if addr == old.Addr() {
			return nil, fmt.Errorf("sentinel %d still names %s", i, addr)
		}
		for _, d := range g.Data {
			if d.Addr() == addr {
				next = d
			}
		}
		if next == nil {
			return nil, fmt.Errorf("sentinel %d names %s, which is neither data server", i, addr)
		}
	}
	dc := g.dataClient(next)
	defer dc.Close()
	info, err := dc.Info(context.Background(), "replication").Result()
	if err != nil {
		return nil, err
	}
	if !strings.Contains(info, "role:master") {
		return nil, errors.New("the new primary does not yet answer as one")
	}
	return next, nil
}

// waitReplicating waits until replica has synced with its primary.
func (g *SentinelGroup) waitReplicating(replica *Server, timeout time.Duration) {
	g.tb.Helper()
	dc := g.dataClient(replica)
	defer dc.Close()
	deadline := time.Now().Add(timeout)
	for {
		info, err := dc.Info(context.Background(), "replication").Result()
		if err == nil && strings.Contains(info, "master_link_status:up") {
			return
		}
		if time.Now().After(deadline) {
			g.tb.Fatalf("redistest: replica %s not in sync after %s (%v)", replica.Addr(), timeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitDiscovered waits until every Sentinel sees the primary up, its replica
// and the two other Sentinels.
func (g *SentinelGroup) waitDiscovered(timeout time.Duration) {
	g.tb.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := g.discovered()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			g.tb.Fatalf("redistest: Sentinels not ready after %s: %v", timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (g *SentinelGroup) discovered() error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	for i := range g.Sentinels {
		sc := g.sentinelClient(i)
		m, err := sc.Master(ctx, MasterName).Result()
		_ = sc.Close()
		if err != nil {
			return fmt.Errorf("sentinel %d: %w", i, err)
		}
		if m["flags"] != "master" || m["num-slaves"] != "1" || m["num-other-sentinels"] != "2" {
			return fmt.Errorf("sentinel %d: flags=%s replicas=%s other sentinels=%s",
				i, m["flags"], m["num-slaves"], m["num-other-sentinels"])
		}
	}
	return nil
}
