package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"

	"github.com/agora-etl/agora/internal/gen"
	"github.com/agora-etl/agora/internal/modtest"
	"github.com/agora-etl/agora/internal/syncbuf"
)

// goldenModule lays out every golden case with an expected file as a package
// of one temporary module that requires this checkout of agora (and the same
// versions of everything else), so the expected files can be built as users
// build them. It returns the module directory and the case names.
func goldenModule(t *testing.T) (string, []string) {
	t.Helper()
	root := goldenRoot(t)
	mod := modtest.New(t, "agoragen.golden", true)

	var cases []string
	for _, name := range goldenCases(t) {
		want, _ := filepath.Glob(filepath.Join(root, name, "want", "*.go"))
		if len(want) == 0 {
			continue
		}
		cases = append(cases, name)
		inputs, _ := filepath.Glob(filepath.Join(root, name, "*.go"))
		for _, f := range append(inputs, want...) {
			src, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if filepath.Base(filepath.Dir(f)) != "want" && gen.IsGenerated(src) {
				continue // the stale file the generated one replaces
			}
			writeFile(t, filepath.Join(mod, name, filepath.Base(f)), src)
		}
	}
	if len(cases) == 0 {
		t.Fatal("no golden case has an expected file")
	}
	return mod, cases
}

func writeFile(t testing.TB, path string, content []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, content, 0o644); err != nil {
		t.Fatal(err)
	}
}

// goCommand runs the go command in dir without network access: the module
// cache already holds every dependency of this module.
func goCommand(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("go %s in %s: %v\n%s", strings.Join(args, " "), dir, err, out.String())
	}
	return out.String()
}

// TestGoldenCompiles builds and vets every expected worker.go together with
// its input package, in one go build of all cases.
func TestGoldenCompiles(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	mod, cases := goldenModule(t)
	goCommand(t, mod, "build", "./...")
	goCommand(t, mod, "vet", "./...")
	t.Logf("built and vetted %d cases: %s", len(cases), strings.Join(cases, ", "))
}

// TestGuardBreaksBuild changes a factory's signature after generation and
// expects go build to fail at the guard, with the advice to re-run go
// generate in sight.
func TestGuardBreaksBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	mod, _ := goldenModule(t)
	src := filepath.Join(mod, "basic", "orders.go")
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	changed := strings.Replace(string(b), "func BuildOrders(ctx context.Context) (*OrdersPipeline, error) { return &OrdersPipeline{}, nil }",
		"func BuildOrders(ctx context.Context) (runtime.Pipeline, error) { return &OrdersPipeline{}, nil }", 1)
	if changed == string(b) {
		t.Fatal("basic/orders.go no longer has the expected BuildOrders")
	}
	writeFile(t, src, []byte(changed))
	cmd := exec.Command("go", "build", "./basic")
	cmd.Dir = mod
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "GOTOOLCHAIN=local")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatal("go build succeeded after the factory's signature changed")
	}
	gen, _ := os.ReadFile(filepath.Join(mod, "basic", "worker.go"))
	var guardLine int
	for i, line := range strings.Split(string(gen), "\n") {
		if strings.Contains(line, "= BuildOrders") && strings.Contains(line, "re-run go generate") {
			guardLine = i + 1
		}
	}
	if guardLine == 0 || !strings.Contains(string(out), fmt.Sprintf("worker.go:%d:", guardLine)) {
		t.Fatalf("build error is not at the guard (line %d):\n%s", guardLine, out)
	}
}

// TestGeneratedWorkerEndToEnd builds the e2e_worker golden case and runs it
// against a miniredis on loopback with AGORA_DISTRIBUTED_REDIS_URL set: the
// generated GetWorker must wire the Redis coordinator (runs carry real
// fencing tokens and leave keys in Redis), run the pipelines, and shut down
// cleanly on SIGINT.
func TestGeneratedWorkerEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a worker")
	}
	mod, _ := goldenModule(t)
	bin := filepath.Join(t.TempDir(), "e2e-worker")
	goCommand(t, mod, "build", "-o", bin, "./e2e_worker")

	redis := miniredis.RunT(t)
	cmd := exec.Command(bin, "-log-format", "json")
	cmd.Env = append(os.Environ(), "AGORA_DISTRIBUTED_REDIS_URL=redis://"+redis.Addr()+"/0")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	logs := &lockedBuffer{}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
		done <- cmd.Wait()
	}()
	defer cmd.Process.Kill()

	var ticks, setups int
	var lastToken int64
	timeout := time.After(30 * time.Second)
	for ticks < 2 || setups < 1 {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("worker exited early: %v\n%s", <-done, logs.String())
			}
			var name string
			var run, token int64
			if _, err := fmt.Sscanf(line, "ran %s %d %d", &name, &run, &token); err != nil {
				t.Fatalf("unexpected output %q", line)
			}
			if token <= 0 {
				t.Fatalf("%s ran without a fencing token: the Redis coordinator is not wired (%q)", name, line)
			}
			switch name {
			case "tick":
				if token <= lastToken {
					t.Fatalf("fencing tokens do not increase: %d after %d", token, lastToken)
				}
				lastToken = token
				ticks++
			case "setup":
				setups++
			}
		case <-timeout:
			t.Fatalf("after 30s: %d ticks, %d setups\n%s", ticks, setups, logs.String())
		}
	}
	var agoraKeys int
	for _, k := range redis.Keys() {
		if strings.HasPrefix(k, "agora:distributed:") {
			agoraKeys++
		}
	}
	if agoraKeys == 0 {
		t.Fatalf("no agora keys in Redis: %v", redis.Keys())
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	go func() {
		for range lines {
		}
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("worker did not exit cleanly after SIGINT: %v\n%s", err, logs.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("worker still running 15s after SIGINT\n%s", logs.String())
	}
	if setups != 1 {
		t.Fatalf("the once pipeline ran %d times", setups)
	}
}

// lockedBuffer collects logs written from several goroutines.
type lockedBuffer = syncbuf.Buffer
