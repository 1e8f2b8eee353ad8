// Package pgtest starts real PostgreSQL servers for integration, fault and
// benchmark tests: initdb into a temporary directory, postgres on a free
// 127.0.0.1 port with its unix socket in that directory, tuned for speed
// (no fsync), stopped and removed when the test (or, for Shared, the test
// binary) ends.
//
// PostgreSQL refuses to run as root, so when the tests run as root the
// server runs as the unprivileged system user "postgres" (Debian's package
// creates it), or "nobody" when there is none.
//
// The binaries are found through AGORA_POSTGRES_BIN (a directory), PATH,
// and /usr/lib/postgresql/<version>/bin, where Debian's postgresql package
// puts them. Without them the test is skipped, except under CI=true where
// it fails: CI must never pass by skipping the tests that matter.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/agora-etl/agora/internal/redisproc"
)

// BinDirEnv names the environment variable giving the directory of initdb
// and postgres.
const BinDirEnv = "AGORA_POSTGRES_BIN"

// startTimeout bounds how long a freshly started server may take to accept
// connections.
const startTimeout = 30 * time.Second

// Superuser is the name of the superuser initdb creates; it authenticates
// with trust on loopback.
const Superuser = "postgres"

// Server is a running postgres process.
type Server struct {
	dir    string
	port   int
	cmd    *exec.Cmd
	exited chan struct{}
	dbs    atomic.Int64
	stop   sync.Once
}

// Binaries finds initdb and postgres.
func Binaries() (initdb, postgres string, err error) {
	var dirs []string
	if d := os.Getenv(BinDirEnv); d != "" {
		dirs = append(dirs, d)
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		dirs = append(dirs, filepath.Dir(p))
	}
	versions, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Sort(sort.Reverse(sort.StringSlice(versions)))
	dirs = append(dirs, versions...)
	for _, d := range dirs {
		i, p := filepath.Join(d, "initdb"), filepath.Join(d, "postgres")
		if isExec(i) && isExec(p) {
			return i, p, nil
		}
	}
	return "", "", fmt.Errorf("pgtest: initdb and postgres not found in $%s, PATH or /usr/lib/postgresql/*/bin (apt-get install postgresql)", BinDirEnv)
}

func isExec(path string) bool {
	st, err := os.Stat(path)
	return err == nil && !st.IsDir() && st.Mode()&0o111 != 0
}

// skipOrFail skips tb without the binaries, or fails it under CI=true.
func skipOrFail(tb testing.TB, err error) {
	tb.Helper()
	if os.Getenv("CI") == "true" {
		tb.Fatalf("%v; CI must have PostgreSQL installed", err)
	}
	tb.Skipf("%v; skipping outside CI", err)
}

// Start starts a server of the test's own, stopped at the end of the test.
// Prefer Shared, which starts one per test binary.
func Start(tb testing.TB) *Server {
	tb.Helper()
	s, err := start()
	if err != nil {
		if errors.Is(err, errNoBinaries) {
			skipOrFail(tb, err)
		}
		tb.Fatal(err)
	}
	tb.Cleanup(s.Stop)
	return s
}

var errNoBinaries = errors.New("pgtest: no PostgreSQL binaries")

var shared struct {
	once sync.Once
	s    *Server
	err  error
}

// Shared returns the test binary's shared server, starting it on first
// use. Each test should work in a database of its own (NewDatabase). Call
// Main from TestMain so the server is stopped when the tests end; without
// it the server dies with the test binary but leaves its directory behind.
func Shared(tb testing.TB) *Server {
	tb.Helper()
	shared.once.Do(func() { shared.s, shared.err = start() })
	if shared.err != nil {
		if errors.Is(shared.err, errNoBinaries) {
			skipOrFail(tb, shared.err)
		}
		tb.Fatal(shared.err)
	}
	return shared.s
}

// Main runs the tests of m and stops the shared server, if one started,
// before exiting with the tests' status. Call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	if shared.s != nil {
		shared.s.Stop()
	}
	os.Exit(code)
}

func start() (*Server, error) {
	initdb, postgres, err := Binaries()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", errNoBinaries, err)
	}
	cred, err := credential()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, fmt.Errorf("pgtest: %w", err)
	}
	s := &Server{dir: dir, exited: make(chan struct{})}
	fail := func(err error) (*Server, error) {
		s.Stop()
		return nil, err
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			return fail(fmt.Errorf("pgtest: %w", err))
		}
	}
	data := filepath.Join(dir, "data")
	cmd := exec.Command(initdb, "-D", data, "-U", Superuser, "--auth=trust", "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fail(fmt.Errorf("pgtest: initdb: %w\n%s", err, out))
	}
	// A port found free can be taken before postgres binds it: try a few.
	var lastErr error
	for range 5 {
		port, err := redisproc.FreePort()
		if err != nil {
			return fail(err)
		}
		s.port = port
		if lastErr = s.run(postgres, data, cred); lastErr == nil {
			return s, nil
		}
	}
	return fail(fmt.Errorf("pgtest: cannot start postgres: %w\n%s", lastErr, s.tail()))
}

// credential returns the user to run the server as when running as root.
func credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, err1 := strconv.ParseUint(u.Uid, 10, 32)
		gid, err2 := strconv.ParseUint(u.Gid, 10, 32)
		if err1 == nil && err2 == nil && uid != 0 {
			return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
		}
	}
	return nil, errors.New("pgtest: running as root and no unprivileged user (postgres or nobody) to run postgres as")
}

func (s *Server) run(postgres, data string, cred *syscall.Credential) error {
	logFile, err := os.OpenFile(filepath.Join(s.dir, "postgres.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()
	cmd := exec.Command(postgres, "-D", data,
		"-p", strconv.Itoa(s.port),
		"-c", "listen_addresses=127.0.0.1",
		"-c", "unix_socket_directories="+s.dir,
		"-c", "fsync=off",
		"-c", "synchronous_commit=off",
		"-c", "full_page_writes=off",
		"-c", "max_connections=200",
		"-c", "shared_buffers=64MB",
		"-c", "max_wal_size=1GB",
		"-c", "checkpoint_timeout=30min",
	)
	cmd.Stdout, cmd.Stderr = logFile, logFile
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	s.cmd, s.exited = cmd, exited
	deadline := time.Now().Add(startTimeout)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		conn, err := pgx.Connect(ctx, s.URL("postgres"))
		cancel()
		if err == nil {
			conn.Close(context.Background())
			return nil
		}
		select {
		case <-exited:
			return errors.New("postgres exited during start")
		default:
		}
		if time.Now().After(deadline) {
			s.kill()
			return fmt.Errorf("postgres on port %d not ready after %s: %w", s.port, startTimeout, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Port returns the server's port on 127.0.0.1.
func (s *Server) Port() int { return s.port }

// Addr returns "127.0.0.1:port".
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// URL returns a postgres:// URL for database db as the superuser, over
// loopback TCP without TLS.
func (s *Server) URL(db string) string {
	u := url.URL{Scheme: "postgres", User: url.User(Superuser), Host: s.Addr(), Path: "/" + db, RawQuery: "sslmode=disable"}
	return u.String()
}

// NewDatabase creates an empty database for one test, dropped when the
// test ends, and returns its URL.
func (s *Server) NewDatabase(tb testing.TB) string {
	tb.Helper()
	name := fmt.Sprintf("test_%d", s.dbs.Add(1))
	s.exec(tb, "CREATE DATABASE "+name)
	tb.Cleanup(func() { s.exec(tb, "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)") })
	return s.URL(name)
}

func (s *Server) exec(tb testing.TB, sql string) {
	tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		tb.Fatalf("pgtest: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, sql); err != nil {
		tb.Fatalf("pgtest: %s: %v", sql, err)
	}
}

// Stop stops the server (fast shutdown, then SIGKILL after 10 seconds) and
// removes its directory.
func (s *Server) Stop() {
	s.stop.Do(func() {
		if s.cmd != nil && s.cmd.Process != nil {
			s.cmd.Process.Signal(syscall.SIGINT) // fast shutdown
			select {
			case <-s.exited:
			case <-time.After(10 * time.Second):
				s.kill()
			}
		}
		os.RemoveAll(s.dir)
	})
}

func (s *Server) kill() {
	if s.cmd != nil && s.cmd.Process != nil {
		s.cmd.Process.Kill()
		<-s.exited
	}
}

// tail returns the end of the server's log, for failure messages.
func (s *Server) tail() string {
	b, err := os.ReadFile(filepath.Join(s.dir, "postgres.log"))
	if err != nil {
		return ""
	}
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return strings.TrimSpace(string(b))
}
