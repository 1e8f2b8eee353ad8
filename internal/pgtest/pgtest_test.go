package pgtest

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { Main(m) }

func TestSharedServerGivesEachTestItsOwnDatabase(t *testing.T) {
	s := Shared(t)
	if Shared(t) != s {
		t.Fatal("Shared started a second server")
	}
	ctx := context.Background()
	a, b := s.NewDatabase(t), s.NewDatabase(t)
	if a == b {
		t.Fatalf("two tests got the same database %s", a)
	}
	conn, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE TABLE t (id int)"); err != nil {
		t.Fatal(err)
	}
	var addr string
	var fsync string
	if err := conn.QueryRow(ctx, "SELECT host(inet_server_addr()), current_setting('fsync')").Scan(&addr, &fsync); err != nil {
		t.Fatal(err)
	}
	if addr != "127.0.0.1" || fsync != "off" {
		t.Fatalf("server on %s with fsync=%s, want 127.0.0.1 and off", addr, fsync)
	}
}

func TestStartAndStopRemovesTheDirectory(t *testing.T) {
	s := Start(t)
	dir := s.dir
	if _, err := os.Stat(dir); err != nil {
		t.Fatal(err)
	}
	s.Stop()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Fatalf("directory %s still there after Stop: %v", dir, err)
	}
	ctx := context.Background()
	if conn, err := pgx.Connect(ctx, s.URL("postgres")); err == nil {
		conn.Close(ctx)
		t.Fatal("server still answers after Stop")
	}
}

func TestBinariesFoundInDebiansDirectory(t *testing.T) {
	t.Setenv("PATH", "/nonexistent")
	i, p, err := Binaries()
	if err != nil {
		skipOrFail(t, err)
	}
	if i == "" || p == "" {
		t.Fatalf("initdb %q postgres %q", i, p)
	}
}
