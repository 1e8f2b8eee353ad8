package fleet_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agora-etl/agora/fleet"
	"github.com/agora-etl/agora/internal/redistest"
	"github.com/agora-etl/agora/runtime/distributed"
)

// uiChildEnv makes the test binary run "fleet ui" instead of its tests
// (TestMain-free re-exec: the test below starts it).
const uiChildEnv = "AGORA_TEST_FLEET_UI_CHILD"

func TestFleetUIChild(t *testing.T) {
	if os.Getenv(uiChildEnv) != "1" {
		t.Skip("runs only as the child of TestFleetUIStartedFromAScriptStopsOnSIGINT")
	}
	// A dashboard that serves nothing: what is tested is that the ui
	// command asks for the shutdown signals itself.
	d := func(ctx context.Context, _ *distributed.Inspector, flags fleet.DashboardFlags, stdout, _ io.Writer) error {
		fmt.Fprintf(stdout, "fleet dashboard on http://%s\n", flags.Listen)
		<-ctx.Done()
		return nil
	}
	os.Exit(fleet.Run(context.Background(), []string{"ui", "--listen", "127.0.0.1:0"}, os.Stdout, os.Stderr, fleet.WithDashboard(d)))
}

// A shell starts a background job with SIGINT ignored; "fleet ui" started
// so must still stop on kill -INT: the ui command asks for the signals
// itself, whatever dashboard it serves.
func TestFleetUIStartedFromAScriptStopsOnSIGINT(t *testing.T) {
	srv := redistest.Start(t)
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	// trap '' INT is what a non-interactive shell does for "cmd &".
	cmd := exec.Command(sh, "-c", `trap '' INT; exec "$0" -test.run '^TestFleetUIChild$'`, os.Args[0])
	cmd.Env = append(os.Environ(), uiChildEnv+"=1", "AGORA_DISTRIBUTED_REDIS_URL="+srv.URL(), "AGORA_UI_TOKEN=")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	lines := bufio.NewScanner(out)
	ready := make(chan bool, 1)
	go func() {
		for lines.Scan() {
			if strings.Contains(lines.Text(), "fleet dashboard on http://") {
				ready <- true
				break
			}
		}
		for lines.Scan() { // drain
		}
	}()
	select {
	case <-ready:
	case <-time.After(30 * time.Second):
		t.Fatal("fleet ui never said where it listens")
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("fleet ui after SIGINT: %v, want exit status 0", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("fleet ui started with SIGINT ignored did not stop on SIGINT")
	}
}
