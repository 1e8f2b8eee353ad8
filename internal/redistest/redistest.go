// Package redistest starts real redis-server processes for integration,
// fault and benchmark tests: each on a free 127.0.0.1 port, in its own
// temporary directory, without persistence, stopped when the test ends.
//
// Tests that need a real server call Start; StartCluster starts a Redis
// Cluster of such servers, StartSentinels a primary, a replica and three
// Sentinels. Without a redis-server binary (or redis-cli, for a cluster) the
// test is skipped, except under CI=true where it fails: CI must never pass
// by skipping the tests that matter.
package redistest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agora-etl/agora/internal/redisproc"
)

// BinaryEnv names the environment variable that overrides the redis-server
// binary (default: "redis-server" looked up in PATH).
const BinaryEnv = "AGORA_REDIS_SERVER"

// startTimeout bounds how long a freshly started server may take to answer.
const startTimeout = 10 * time.Second

// Option configures a Server.
type Option func(*config)

type config struct {
	password string
	tls      bool
	args     []string
	// sentinelConf, when set, makes the server a Sentinel: the text is
	// written to sentinel.conf (which Sentinel rewrites as it learns) and
	// the file passed first, as Sentinel requires.
	sentinelConf string
}

// WithPassword makes the server require password (requirepass), for tests of
// authenticated URLs.
func WithPassword(password string) Option {
	return func(c *config) { c.password = password }
}

// WithTLS serves TLS only, with a self-signed certificate for 127.0.0.1
// (CertFile); URL then starts with rediss://.
func WithTLS() Option {
	return func(c *config) { c.tls = true }
}

// WithArgs passes extra command-line arguments to redis-server, such as
// "--maxmemory-policy", "noeviction".
func WithArgs(args ...string) Option {
	return func(c *config) { c.args = append(c.args, args...) }
}

// Server is a redis-server process owned by one test.
type Server struct {
	tb     testing.TB
	bin    string
	dir    string
	port   int
	cfg    config
	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	paused bool
	logs   *os.File
}

// Binary returns the redis-server binary to use, or calls t.Skip (t.Fatal
// under CI=true) when there is none.
func Binary(tb testing.TB) string {
	tb.Helper()
	name := os.Getenv(BinaryEnv)
	if name == "" {
		name = "redis-server"
	}
	path, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			tb.Fatalf("redistest: %s not found (%v); CI must have redis-server installed", name, err)
		}
		tb.Skipf("redistest: %s not found (%v); skipping outside CI", name, err)
	}
	return path
}

// Start starts a redis-server on a free loopback port and registers its
// shutdown with tb.Cleanup.
func Start(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	s := &Server{tb: tb, bin: Binary(tb), dir: tb.TempDir()}
	for _, opt := range opts {
		opt(&s.cfg)
	}
	if s.cfg.tls {
		if err := writeSelfSignedCert(s.CertFile(), s.keyFile()); err != nil {
			tb.Fatalf("redistest: TLS certificate: %v", err)
		}
	}
	logs, err := os.Create(filepath.Join(s.dir, "redis.log"))
	if err != nil {
		tb.Fatalf("redistest: %v", err)
	}
	s.logs = logs
	tb.Cleanup(s.shutdown)

	// A port found free can be taken by someone else before redis-server
	// binds it, so try a few.
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port, err := redisproc.FreePort()
		if err != nil {
			tb.Fatalf("redistest: no free port: %v", err)
		}
		s.port = port
		if lastErr = s.start(); lastErr == nil {
			return s
		}
	}
	tb.Fatalf("redistest: cannot start redis-server: %v\n%s", lastErr, s.tail())
	return nil
}

// Addr returns "127.0.0.1:port".
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// Port returns the server's port.
func (s *Server) Port() int { return s.port }

// URL returns a redis:// URL for database 0 of the server, with the password
// when the server has one.
func (s *Server) URL() string { return s.URLForDB(0) }

// URLForDB returns a redis:// (rediss:// with WithTLS) URL for database db
// of the server.
func (s *Server) URLForDB(db int) string {
	auth := ""
	if s.cfg.password != "" {
		auth = ":" + s.cfg.password + "@"
	}
	scheme := "redis"
	if s.cfg.tls {
		scheme = "rediss"
	}
	return fmt.Sprintf("%s://%s%s/%d", scheme, auth, s.Addr(), db)
}

// CertFile returns the PEM certificate a WithTLS server presents; it is
// self-signed, so clients must trust it explicitly or skip verification.
func (s *Server) CertFile() string { return filepath.Join(s.dir, "server.crt") }

func (s *Server) keyFile() string { return filepath.Join(s.dir, "server.key") }

// PID returns the process id of the running server, or 0.
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Kill ends the server with SIGKILL, as a crash would, and waits for it to be
// gone. Clients see connection errors until Restart.
func (s *Server) Kill() {
	s.tb.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.killLocked()
}

// Pause stops the server with SIGSTOP: connections stay open but nothing is
// answered, like a stalled host or a long GC pause.
func (s *Server) Pause() {
	s.tb.Helper()
	s.signal(syscall.SIGSTOP, true)
}

// Resume continues a paused server with SIGCONT.
func (s *Server) Resume() {
	s.tb.Helper()
	s.signal(syscall.SIGCONT, false)
}

// Restart kills the server if it runs and starts a new one on the same port
// with empty data, like a restart without persistence.
func (s *Server) Restart() {
	s.tb.Helper()
	s.restart(false)
}

// RestartFromFiles kills the server (SIGKILL) and starts a new one on the
// same port from whatever its data directory holds: the last RDB snapshot
// (SAVE) or AOF, so writes made after them are lost, as in a restart from
// a file that missed the last second.
func (s *Server) RestartFromFiles() {
	s.tb.Helper()
	s.restart(true)
}

func (s *Server) restart(keep bool) {
	s.tb.Helper()
	s.mu.Lock()
	s.killLocked()
	s.mu.Unlock()
	if !keep {
		if err := os.RemoveAll(filepath.Join(s.dir, "data")); err != nil {
			s.tb.Fatalf("redistest: %v", err)
		}
	}
	// The old socket may linger briefly; redis-server binds with
	// SO_REUSEADDR, but retry in case the kernel is slow to let go.
	deadline := time.Now().Add(startTimeout)
	for {
		err := s.start()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			s.tb.Fatalf("redistest: restart on port %d: %v\n%s", s.port, err, s.tail())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *Server) signal(sig syscall.Signal, paused bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil {
		s.tb.Fatalf("redistest: %v: server not running", sig)
	}
	if err := s.cmd.Process.Signal(sig); err != nil {
		s.tb.Fatalf("redistest: %v: %v", sig, err)
	}
	s.paused = paused
}

func (s *Server) start() error {
	data := filepath.Join(s.dir, "data")
	if err := os.MkdirAll(data, 0o700); err != nil {
		return err
	}
	args := []string{
		"--bind", "127.0.0.1",
		"--port", strconv.Itoa(s.port),
	}
	if s.cfg.sentinelConf != "" {
		conf := filepath.Join(s.dir, "sentinel.conf")
		if err := os.WriteFile(conf, []byte(s.cfg.sentinelConf), 0o600); err != nil {
			return err
		}
		args = append([]string{conf, "--sentinel"}, args...)
	}
	if s.cfg.tls {
		args = []string{
			"--bind", "127.0.0.1",
			"--port", "0",
			"--tls-port", strconv.Itoa(s.port),
			"--tls-cert-file", s.CertFile(),
			"--tls-key-file", s.keyFile(),
			"--tls-ca-cert-file", s.CertFile(),
			"--tls-auth-clients", "no",
		}
	}
	args = append(args,
		"--save", "",
		"--appendonly", "no",
		"--dir", data,
		"--daemonize", "no",
		"--protected-mode", "yes",
		"--logfile", "",
	)
	if s.cfg.password != "" {
		args = append(args, "--requirepass", s.cfg.password)
	}
	args = append(args, s.cfg.args...)
	cmd := exec.Command(s.bin, args...)
	cmd.Dir = s.dir
	cmd.Stdout = s.logs
	cmd.Stderr = s.logs
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	if err := redisproc.WaitReady(s.Addr(), s.cfg.tls, exited, startTimeout); err != nil {
		_ = cmd.Process.Kill()
		<-exited
		return err
	}
	s.mu.Lock()
	s.cmd, s.exited, s.paused = cmd, exited, false
	s.mu.Unlock()
	return nil
}

func (s *Server) killLocked() {
	if s.cmd == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGKILL)
	<-s.exited
	s.cmd, s.exited, s.paused = nil, nil, false
}

func (s *Server) shutdown() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.killLocked()
	if s.logs != nil {
		_ = s.logs.Close()
	}
}

// tail returns the end of the server's log, for failure messages.
func (s *Server) tail() string {
	b, err := os.ReadFile(filepath.Join(s.dir, "redis.log"))
	if err != nil {
		return ""
	}
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}
