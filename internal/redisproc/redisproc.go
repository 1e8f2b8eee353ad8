// Package redisproc holds what starting a local redis-server needs besides
// exec: a free loopback port and a readiness check. The test helper
// internal/redistest and the `make run` demo both start servers with it.
package redisproc

import (
	"bufio"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
)

// FreePort asks the kernel for a free port on 127.0.0.1. Another process can
// take it before the server binds it, so callers retry on a failed start.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("redisproc: find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Ping sends a raw PING to the Redis at addr and checks the answer. A server
// that wants a password answers NOAUTH: it is up all the same. With useTLS it
// skips certificate verification, since it only asks whether the server is
// up.
func Ping(addr string, useTLS bool) error {
	var conn net.Conn
	var err error
	if useTLS {
		dialer := &net.Dialer{Timeout: time.Second}
		conn, err = tls.DialWithDialer(dialer, "tcp", addr, &tls.Config{InsecureSkipVerify: true})
	} else {
		conn, err = net.DialTimeout("tcp", addr, time.Second)
	}
	if err != nil {
		return err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(time.Second))
	if _, err := conn.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return err
	}
	if strings.HasPrefix(line, "+PONG") || strings.HasPrefix(line, "-NOAUTH") {
		return nil
	}
	return fmt.Errorf("unexpected reply %q", strings.TrimSpace(line))
}

// WaitReady pings addr until the server answers, the process exits (exited
// is closed) or timeout passes.
func WaitReady(addr string, useTLS bool, exited <-chan struct{}, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		select {
		case <-exited:
			return errors.New("redis-server exited during start")
		default:
		}
		err := Ping(addr, useTLS)
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("redis-server on %s not ready after %s: %w", addr, timeout, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
