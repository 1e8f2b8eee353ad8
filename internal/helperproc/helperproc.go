// Package helperproc runs a test binary again as a helper process, for the
// tests of a worker's signals and exit statuses, which need a process of
// their own. The test binary's TestMain runs the scenario named by an
// environment variable instead of the tests; the helper prints READY on
// standard output once set up, and may write what its runs did to the file
// named by AGORA_TEST_OUT.
package helperproc

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

	"github.com/agora-etl/agora/internal/syncbuf"
)

// OutEnv names the file a helper writes what its runs did to.
const OutEnv = "AGORA_TEST_OUT"

// Proc is a running helper.
type Proc struct {
	cmd *exec.Cmd
	// Out is the file named by OutEnv.
	Out string
	// Stdout holds the lines the helper printed; Stderr its log.
	Stdout, Stderr *syncbuf.Buffer
	exited         chan struct{}
	err            error
}

// Start starts the test binary with env=scenario and args (the flags of a
// test binary, then a worker's), and waits until it prints READY. The
// helper is killed when the test ends, if it has not exited.
func Start(t testing.TB, env, scenario string, args ...string) *Proc {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out.txt")
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), env+"="+scenario, OutEnv+"="+out)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &Proc{cmd: cmd, Out: out, Stdout: &syncbuf.Buffer{}, Stderr: &syncbuf.Buffer{}, exited: make(chan struct{})}
	cmd.Stderr = p.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = cmd.Process.Kill()
			<-p.exited
		}
	})
	ready := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			fmt.Fprintln(p.Stdout, sc.Text())
			if sc.Text() == "READY" {
				close(ready)
			}
		}
		p.err = cmd.Wait()
		close(p.exited)
	}()
	select {
	case <-ready:
	case <-p.exited:
		t.Fatalf("helper exited early: %v\n%s", p.err, p.Stderr)
	case <-time.After(20 * time.Second):
		t.Fatalf("helper not ready\n%s", p.Stderr)
	}
	return p
}

// Exited is closed when the helper has exited.
func (p *Proc) Exited() <-chan struct{} { return p.exited }

// Signal sends sig to the helper.
func (p *Proc) Signal(t testing.TB, sig os.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

// Wait returns the helper's exit status, failing the test if it has not
// exited within d.
func (p *Proc) Wait(t testing.TB, within time.Duration) int {
	t.Helper()
	select {
	case <-p.exited:
	case <-time.After(within):
		t.Fatalf("helper did not exit within %v\n%s", within, p.Stderr)
	}
	var ee *exec.ExitError
	if errors.As(p.err, &ee) {
		return ee.ExitCode()
	}
	if p.err != nil {
		t.Fatal(p.err)
	}
	return 0
}

// WaitFor waits until out, one of the helper's outputs, holds text,
// failing the test after 5 s.
func (p *Proc) WaitFor(t testing.TB, out *syncbuf.Buffer, text string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(out.String(), text) {
		if time.Now().After(deadline) {
			t.Fatalf("the helper did not write %s:\n%s", text, p.Stderr)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Output returns what the helper wrote to Out.
func (p *Proc) Output(t testing.TB) string {
	t.Helper()
	b, err := os.ReadFile(p.Out)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
