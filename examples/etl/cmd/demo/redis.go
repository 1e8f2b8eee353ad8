package main

import (
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/agora-etl/agora/internal/redisproc"
)

// redisServer is the Redis the replicas share.
type redisServer struct {
	Kind string
	Addr string
	stop func()
}

// Stop stops the server.
func (r *redisServer) Stop() { r.stop() }

// startRedis starts redis-server on a free loopback port when it is
// installed, and an in-process miniredis on loopback otherwise.
func startRedis(ctx context.Context, dir string, forceMini bool) (*redisServer, error) {
	if path, err := exec.LookPath("redis-server"); err == nil && !forceMini {
		return startRedisServer(ctx, path, dir)
	}
	m := miniredis.NewMiniRedis()
	if err := m.StartAddr("127.0.0.1:0"); err != nil {
		return nil, fmt.Errorf("start miniredis: %w", err)
	}
	return &redisServer{Kind: "miniredis (in-process)", Addr: m.Addr(), stop: m.Close}, nil
}

func startRedisServer(ctx context.Context, path, dir string) (*redisServer, error) {
	port, err := redisproc.FreePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(path, "--bind", "127.0.0.1", "--port", strconv.Itoa(port),
		"--save", "", "--appendonly", "no", "--dir", dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start redis-server: %w", err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	stop := func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	if err := redisproc.WaitReady(addr, false, done, 10*time.Second); err != nil {
		stop()
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		stop()
		return nil, err
	}
	return &redisServer{Kind: "redis-server " + path, Addr: addr, stop: stop}, nil
}
