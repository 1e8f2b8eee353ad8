package main

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
)

// readmeBlock is a fenced code block of README.md marked for testing with a
// preceding <!-- tested: KIND [ARG] --> line.
type readmeBlock struct {
	kind, arg string // "sh", "file PATH" or "published"
	line      int    // of the opening fence
	body      string // without the fences and the list item's indentation
}

var testedMarker = regexp.MustCompile(`^\s*<!-- tested: (\w+)(?: (\S+))? -->\s*$`)

// readmeBlocks returns the marked blocks of the README, in order.
func readmeBlocks(t *testing.T) []readmeBlock {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(b), "\n")
	var out []readmeBlock
	for i := 0; i < len(lines); i++ {
		m := testedMarker.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		if i+1 >= len(lines) || !strings.HasPrefix(strings.TrimSpace(lines[i+1]), "```") {
			t.Fatalf("README.md:%d: a tested marker must be followed by a code block", i+1)
		}
		fence := lines[i+1]
		indent := fence[:len(fence)-len(strings.TrimLeft(fence, " "))]
		blk := readmeBlock{kind: m[1], arg: m[2], line: i + 2}
		var body []string
		j := i + 2
		for ; j < len(lines) && strings.TrimSpace(lines[j]) != "```"; j++ {
			body = append(body, strings.TrimPrefix(lines[j], indent))
		}
		if j == len(lines) {
			t.Fatalf("README.md:%d: unterminated code block", blk.line)
		}
		blk.body = strings.Join(body, "\n") + "\n"
		out = append(out, blk)
		i = j
	}
	return out
}

// TestReadmeTour follows the README as a new user would, in a new module
// outside this repository: the local-checkout install, the tour's files,
// go generate, go build and the CI recipe, each exactly as written, and
// then runs the binary against a Redis. The only edit is the path of the
// checkout. go.sum starts empty and nothing runs go mod tidy but the README,
// so a worker.go that needs a second tidy fails the build here.
func TestReadmeTour(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a module")
	}
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	blocks := readmeBlocks(t)
	kinds := map[string]int{}
	for _, b := range blocks {
		kinds[b.kind]++
	}
	if kinds["sh"] < 3 || kinds["file"] < 2 || kinds["published"] != 1 {
		t.Fatalf("README.md marks %v blocks; want the install, build and CI shell blocks, the tour's files and the published install", kinds)
	}

	dir := t.TempDir()
	// Offline: the module cache holds every dependency. GOFLAGS is emptied
	// so no -mod=mod quietly repairs a go.sum the README left incomplete.
	env := append(os.Environ(), "GOFLAGS=", "GOPROXY=off", "GOSUMDB=off", "GOWORK=off", "GOTOOLCHAIN=local")
	var toolLine string
	for _, b := range blocks {
		switch b.kind {
		case "published":
			// Needs the network and a release: checked, not run.
			if !strings.Contains(b.body, "go get -tool github.com/agora-etl/agora/cmd/agoragen") {
				t.Errorf("README.md:%d: the published install does not add agoragen as a tool:\n%s", b.line, b.body)
			}
		case "file":
			if b.arg == "" {
				t.Fatalf("README.md:%d: a file block needs a path", b.line)
			}
			writeFile(t, filepath.Join(dir, b.arg), []byte(b.body))
			if strings.Contains(b.body, "//go:generate") {
				toolLine = b.body
			}
		case "sh":
			for _, cmdline := range strings.Split(strings.TrimSpace(b.body), "\n") {
				cmdline = strings.ReplaceAll(cmdline, "../agora", repo)
				cmd := exec.Command("sh", "-c", cmdline)
				cmd.Dir, cmd.Env = dir, env
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("README.md:%d: %s: %v\n%s", b.line, cmdline, err, out)
				}
			}
		default:
			t.Fatalf("README.md:%d: unknown tested block kind %q", b.line, b.kind)
		}
	}
	if !strings.Contains(toolLine, "//go:generate go tool agoragen") {
		t.Errorf("the tour's package does not generate with go tool agoragen")
	}
	if _, err := os.Stat(filepath.Join(dir, "orders", "worker.go")); err != nil {
		t.Fatalf("go generate wrote no orders/worker.go: %v", err)
	}

	// The tour's module imports only runtime and worker: its module graph
	// holds the core's dependencies, none of the config-only path's, the
	// dashboard's or the peer benchmarks' (BENCHMARKS.md, "Modules").
	// The graph lists modules nothing here builds, whose go.mod files a
	// fresh module cache lacks: only this step may fetch them (go.mod files
	// alone), from the proxy the tests run with.
	proxy, err := exec.Command("go", "env", "GOPROXY").Output()
	if err != nil {
		t.Fatalf("go env GOPROXY: %v", err)
	}
	list := exec.Command("go", "list", "-m", "all")
	list.Dir, list.Env = dir, append(slices.Clone(env), "GOPROXY="+strings.TrimSpace(string(proxy)))
	mods, err := list.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("go list -m all: %v\n%s", err, stderr)
	}
	if n := strings.Count(string(mods), "\n"); n > 130 {
		t.Errorf("the tour's module graph has %d modules, want at most 130", n)
	}
	for _, heavy := range []string{"chromedp", "franz-go", "kfake", "pgx", "modernc.org", "cel-go", "redsync", "redislock", "gocron"} {
		if strings.Contains(string(mods), heavy) {
			t.Errorf("the tour's module graph has %s:\n%s", heavy, mods)
		}
	}

	// A bad setting stops it with one message, one prefix, and an example
	// fit for that setting.
	bad := exec.Command(filepath.Join(dir, "worker"))
	bad.Env = append(os.Environ(), "AGORA_DISTRIBUTED_REDIS_URL=redis://127.0.0.1:1/0", "AGORA_DISTRIBUTED_HEARTBEAT_INTERVAL=often")
	out, err := bad.CombinedOutput()
	if code := bad.ProcessState.ExitCode(); err == nil || code != 1 {
		t.Fatalf("worker with a bad setting: exit %d, %v\n%s", code, err, out)
	}
	msg := string(out)
	if !strings.Contains(msg, "AGORA_DISTRIBUTED_HEARTBEAT_INTERVAL") || !strings.Contains(msg, "is not a number of seconds (30) or a duration (30s)") ||
		strings.Count(msg, "invalid configuration") != 1 || strings.Contains(msg, "agora worker:") {
		t.Errorf("the bad setting's message is not one clear line:\n%s", msg)
	}

	// The binary runs, wires the Redis coordinator (its worker record is in
	// Redis) and stops cleanly on SIGINT.
	mr := miniredis.RunT(t)
	worker := exec.Command(filepath.Join(dir, "worker"))
	worker.Env = append(os.Environ(), "AGORA_DISTRIBUTED_REDIS_URL=redis://"+mr.Addr()+"/0")
	stderr, err := worker.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := worker.Start(); err != nil {
		t.Fatal(err)
	}
	defer worker.Process.Kill()
	started := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if strings.Contains(sc.Text(), "worker pool started") {
				close(started)
			}
		}
	}()
	select {
	case <-started:
	case <-time.After(20 * time.Second):
		t.Fatal("the tour's worker did not start")
	}
	var registered bool
	for _, k := range mr.Keys() {
		registered = registered || strings.HasPrefix(k, "agora:distributed:worker:")
	}
	if !registered {
		t.Errorf("the worker did not register in Redis: keys %v", mr.Keys())
	}
	if err := worker.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := worker.Wait(); err != nil {
		t.Fatalf("the tour's worker did not exit cleanly: %v", err)
	}
}
