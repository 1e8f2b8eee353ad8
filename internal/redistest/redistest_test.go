package redistest

import (
	"bufio"
	"fmt"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agora-etl/agora/internal/redisproc"
)

// do sends one inline command and returns the first reply line.
func do(addr, command string, timeout time.Duration) (string, error) {
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(timeout))
	if _, err := fmt.Fprintf(conn, "%s\r\n", command); err != nil {
		return "", err
	}
	r := bufio.NewReader(conn)
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	if strings.HasPrefix(line, "$") && !strings.HasPrefix(line, "$-1") {
		line, err = r.ReadString('\n')
	}
	return strings.TrimSpace(line), err
}

func TestStartServesOnLoopback(t *testing.T) {
	s := Start(t)
	if !strings.HasPrefix(s.Addr(), "127.0.0.1:") {
		t.Fatalf("Addr = %q, want a 127.0.0.1 address", s.Addr())
	}
	if got, want := s.URL(), fmt.Sprintf("redis://127.0.0.1:%d/0", s.Port()); got != want {
		t.Fatalf("URL = %q, want %q", got, want)
	}
	if reply, err := do(s.Addr(), "SET k v", time.Second); err != nil || reply != "+OK" {
		t.Fatalf("SET = %q, %v", reply, err)
	}
	if reply, _ := do(s.Addr(), "CONFIG GET save", time.Second); reply != "*2" {
		t.Fatalf("CONFIG GET save = %q", reply)
	}
	if s.PID() == 0 {
		t.Fatal("PID = 0 for a running server")
	}
}

func TestKillAndRestartLoseData(t *testing.T) {
	s := Start(t)
	port := s.Port()
	if _, err := do(s.Addr(), "SET k v", time.Second); err != nil {
		t.Fatal(err)
	}
	s.Kill()
	if _, err := do(s.Addr(), "PING", 200*time.Millisecond); err == nil {
		t.Fatal("PING answered after Kill")
	}
	s.Restart()
	if s.Port() != port {
		t.Fatalf("port changed from %d to %d", port, s.Port())
	}
	reply, err := do(s.Addr(), "GET k", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if reply != "$-1" {
		t.Fatalf("GET k after restart = %q, want nil (no persistence)", reply)
	}
}

func TestRestartWhileRunning(t *testing.T) {
	s := Start(t)
	before := s.PID()
	s.Restart()
	if s.PID() == before || s.PID() == 0 {
		t.Fatalf("PID %d -> %d, want a new process", before, s.PID())
	}
	if reply, err := do(s.Addr(), "PING", time.Second); err != nil || reply != "+PONG" {
		t.Fatalf("PING = %q, %v", reply, err)
	}
}

func TestPauseAndResume(t *testing.T) {
	s := Start(t)
	s.Pause()
	if _, err := do(s.Addr(), "PING", 300*time.Millisecond); err == nil {
		t.Fatal("paused server answered PING")
	}
	s.Resume()
	if reply, err := do(s.Addr(), "PING", 2*time.Second); err != nil || reply != "+PONG" {
		t.Fatalf("PING after Resume = %q, %v", reply, err)
	}
}

func TestPasswordAndArgs(t *testing.T) {
	s := Start(t, WithPassword("s3cret"), WithArgs("--maxmemory-policy", "noeviction"))
	if !strings.Contains(s.URL(), ":s3cret@") {
		t.Fatalf("URL %q lacks the password", s.URL())
	}
	if reply, _ := do(s.Addr(), "PING", time.Second); !strings.HasPrefix(reply, "-NOAUTH") {
		t.Fatalf("PING without AUTH = %q, want NOAUTH", reply)
	}
}

func TestBinaryMissingSkipsOutsideCI(t *testing.T) {
	t.Setenv(BinaryEnv, "redis-server-that-does-not-exist")
	t.Setenv("CI", "")
	ft := &fakeTB{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Binary(ft)
	}()
	<-done
	if !ft.skipped || ft.failed {
		t.Fatalf("skipped=%v failed=%v, want a skip", ft.skipped, ft.failed)
	}

	t.Setenv("CI", "true")
	ft = &fakeTB{TB: t}
	done = make(chan struct{})
	go func() {
		defer close(done)
		Binary(ft)
	}()
	<-done
	if !ft.failed || ft.skipped {
		t.Fatalf("skipped=%v failed=%v under CI=true, want a failure", ft.skipped, ft.failed)
	}
}

// fakeTB records Skip and Fatal instead of ending the real test; like the
// real ones, they end the calling goroutine.
type fakeTB struct {
	testing.TB
	skipped, failed bool
}

func (f *fakeTB) Helper() {}

func (f *fakeTB) Skipf(format string, args ...any) {
	f.skipped = true
	runtime.Goexit()
}

func (f *fakeTB) Fatalf(format string, args ...any) {
	f.failed = true
	runtime.Goexit()
}

func TestTLSServer(t *testing.T) {
	s := Start(t, WithTLS())
	if !strings.HasPrefix(s.URL(), "rediss://127.0.0.1:") {
		t.Fatalf("URL = %q", s.URL())
	}
	if err := redisproc.Ping(s.Addr(), true); err != nil {
		t.Fatalf("TLS PING: %v", err)
	}
	if _, err := do(s.Addr(), "PING", 300*time.Millisecond); err == nil {
		t.Fatal("plain-text PING answered by a TLS-only server")
	}
	s.Restart()
	if err := redisproc.Ping(s.Addr(), true); err != nil {
		t.Fatalf("TLS PING after restart: %v", err)
	}
}
