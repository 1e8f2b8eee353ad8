package cli_test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agora-etl/agora/internal/syncbuf"
	"github.com/agora-etl/agora/runtime/history"
)

// syncBuffer collects logs written from several goroutines.
type syncBuffer = syncbuf.Buffer

// agoraProc is one agora process started by a test.
type agoraProc struct {
	cmd            *exec.Cmd
	stdout, stderr *syncBuffer
	done           chan struct{}
	code           int
}

// startAgora starts the agora binary with args in dir, with env added to
// the test's environment; the process is killed when the test ends.
func startAgora(t *testing.T, dir string, env []string, args ...string) *agoraProc {
	t.Helper()
	return startAgoraBin(t, agoraBin, dir, env, args...)
}

// startAgoraBin is startAgora for the agora binary bin (a build with
// other tags).
func startAgoraBin(t *testing.T, bin, dir string, env []string, args ...string) *agoraProc {
	t.Helper()
	p := &agoraProc{stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Dir = dir
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		err := p.cmd.Wait()
		p.code = exitCode(err)
		close(p.done)
	}()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if ee, ok := err.(*exec.ExitError); ok {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return 128 + int(ws.Signal())
		}
		return ee.ExitCode()
	}
	return -1
}

// runAgora runs the agora binary to its end and returns its exit code,
// stdout and stderr.
func runAgora(t *testing.T, dir string, env []string, args ...string) (int, string, string) {
	t.Helper()
	p := startAgora(t, dir, env, args...)
	return p.wait(t, 2*time.Minute), p.stdout.String(), p.stderr.String()
}

// wait returns the exit code, failing the test if the process does not
// end within d.
func (p *agoraProc) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		return p.code
	case <-time.After(d):
		t.Fatalf("agora %q did not exit within %v\nstdout:\n%s\nstderr:\n%s", p.cmd.Args[1:], d, p.stdout, p.stderr)
		return -1
	}
}

func (p *agoraProc) signal(t *testing.T, sig os.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

// waitOutput waits until out contains text, failing after d.
func (p *agoraProc) waitOutput(t *testing.T, out *syncBuffer, text string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !strings.Contains(out.String(), text) {
		select {
		case <-p.done:
			if strings.Contains(out.String(), text) {
				return
			}
			t.Fatalf("agora exited (%d) before printing %q\nstdout:\n%s\nstderr:\n%s", p.code, text, p.stdout, p.stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q within %v\nstdout:\n%s\nstderr:\n%s", text, d, p.stdout, p.stderr)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

var healthAddrRE = regexp.MustCompile(`health server listening"? addr=(\S+)`)

// healthAddr waits for the health server's address in the log.
func (p *agoraProc) healthAddr(t *testing.T) string {
	t.Helper()
	p.waitOutput(t, p.stderr, "health server listening", 30*time.Second)
	m := healthAddrRE.FindStringSubmatch(p.stderr.String())
	if m == nil {
		t.Fatalf("no address in the health server's log line:\n%s", p.stderr)
	}
	addr := strings.Trim(m[1], `"`)
	if strings.HasPrefix(addr, "[::]:") || strings.HasPrefix(addr, ":") {
		addr = "127.0.0.1:" + addr[strings.LastIndex(addr, ":")+1:]
	}
	return addr
}

// lines returns the non-empty lines of s.
func lines(s string) []string {
	var out []string
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// exited reports whether the process has ended.
func (p *agoraProc) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// about is the lines of a replica's log that name pipeline or are above
// INFO, at most the last 60, for a failure message.
func about(log, pipeline string) string {
	var keep []string
	for _, l := range lines(log) {
		if strings.Contains(l, `"`+pipeline+`"`) || strings.Contains(l, "WARN") || strings.Contains(l, "ERROR") {
			keep = append(keep, l)
		}
	}
	if len(keep) > 60 {
		keep = keep[len(keep)-60:]
	}
	return strings.Join(keep, "\n")
}

// fleetRuns returns pipelineID's run history as agora fleet runs --json
// prints it.
func fleetRuns(t *testing.T, dir string, env []string, pipelineID string) []history.Record {
	t.Helper()
	code, out, errOut := runAgora(t, dir, env, "fleet", "runs", pipelineID, "--json")
	if code != 0 {
		t.Fatalf("agora fleet runs %s --json: exit %d\n%s%s", pipelineID, code, out, errOut)
	}
	var runs []history.Record
	if err := json.Unmarshal([]byte(out), &runs); err != nil {
		t.Fatalf("fleet runs --json: %v\n%s", err, out)
	}
	return runs
}
