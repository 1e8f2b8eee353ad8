package runtime_test

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// helperEnv names the scenario a re-executed test binary runs instead of
// the tests.
const helperEnv = "AGORA_RUNTIME_TEST_HELPER"

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "fdflood" {
		os.Exit(runFloodHelper())
	}
	if name := os.Getenv(benchHelperEnv); name != "" {
		os.Exit(runBenchHelper(name))
	}
	os.Exit(m.Run())
}

type helperProc struct {
	cmd    *exec.Cmd
	out    string
	stdout *syncBuffer // lines the helper printed
	stderr *syncBuffer
	exited chan struct{}
	err    error
}

func startHelper(t *testing.T, scenario string) *helperProc {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out.txt")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+scenario, "AGORA_TEST_OUT="+out)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	hp := &helperProc{cmd: cmd, out: out, stdout: &syncBuffer{}, stderr: &syncBuffer{}, exited: make(chan struct{})}
	cmd.Stderr = hp.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		select {
		case <-hp.exited:
		default:
			_ = cmd.Process.Kill()
			<-hp.exited
		}
	})
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			fmt.Fprintln(hp.stdout, sc.Text())
			if sc.Text() == "READY" {
				close(ready)
			}
		}
		hp.err = cmd.Wait()
		close(hp.exited)
	}()
	select {
	case <-ready:
	case <-hp.exited:
		t.Fatalf("helper exited early: %v\n%s", hp.err, hp.stderr)
	case <-time.After(20 * time.Second):
		t.Fatalf("helper not ready\n%s", hp.stderr)
	}
	return hp
}

func (hp *helperProc) signal(t *testing.T, sig os.Signal) {
	t.Helper()
	if err := hp.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

func (hp *helperProc) wait(t *testing.T, within time.Duration) int {
	t.Helper()
	select {
	case <-hp.exited:
	case <-time.After(within):
		t.Fatalf("helper did not exit within %v\n%s", within, hp.stderr)
	}
	var ee *exec.ExitError
	if errors.As(hp.err, &ee) {
		return ee.ExitCode()
	}
	if hp.err != nil {
		t.Fatal(hp.err)
	}
	return 0
}

// waitFor waits until out, one of the helper's outputs, holds text.
func (hp *helperProc) waitFor(t *testing.T, out *syncBuffer, text string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(out.String(), text) {
		if time.Now().After(deadline) {
			t.Fatalf("the helper did not write %s:\n%s", text, hp.stderr)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
