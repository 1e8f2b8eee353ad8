package helperproc_test

import (
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agora-etl/agora/internal/helperproc"
)

const env = "AGORA_HELPERPROC_TEST"

func TestMain(m *testing.M) {
	switch os.Getenv(env) {
	case "exit3":
		_ = os.WriteFile(os.Getenv(helperproc.OutEnv), []byte("ran\n"), 0o600)
		fmt.Println("READY")
		os.Exit(3)
	case "wait":
		fmt.Println("READY")
		fmt.Fprintln(os.Stderr, "waiting for a signal")
		time.Sleep(time.Minute)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func TestStartWaitOutput(t *testing.T) {
	p := helperproc.Start(t, env, "exit3", "-test.run=^$")
	if code := p.Wait(t, 10*time.Second); code != 3 {
		t.Fatalf("exit %d, want 3", code)
	}
	if got := p.Output(t); got != "ran\n" {
		t.Fatalf("output %q", got)
	}
	if !strings.Contains(p.Stdout.String(), "READY") {
		t.Fatalf("stdout %q", p.Stdout)
	}
}

func TestSignalAndWaitFor(t *testing.T) {
	p := helperproc.Start(t, env, "wait", "-test.run=^$")
	p.WaitFor(t, p.Stderr, "waiting for a signal")
	select {
	case <-p.Exited():
		t.Fatal("exited before the signal")
	default:
	}
	p.Signal(t, syscall.SIGTERM)
	if code := p.Wait(t, 10*time.Second); code != -1 {
		t.Fatalf("exit %d, want -1 (killed by a signal)", code)
	}
}
