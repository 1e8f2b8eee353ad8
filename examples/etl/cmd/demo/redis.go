package main

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"syscall"
	"time"

	"github.com/alicebob/miniredis/v2"
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
	port, err := freePort()
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
	deadline := time.Now().Add(10 * time.Second)
	for {
		if ping(addr) {
			return &redisServer{Kind: "redis-server " + path, Addr: addr, stop: stop}, nil
		}
		select {
		case <-done:
			return nil, fmt.Errorf("redis-server exited before accepting connections on %s", addr)
		case <-ctx.Done():
			stop()
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			stop()
			return nil, fmt.Errorf("redis-server did not answer on %s within 10s", addr)
		}
	}
}

// ping reports whether a Redis answers PING on addr.
func ping(addr string) bool {
	conn, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return false
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	return err == nil && line == "+PONG\r\n"
}

// freePort asks the kernel for a free loopback port.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
