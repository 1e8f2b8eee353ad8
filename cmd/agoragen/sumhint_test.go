package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestHintWhenGoSumCannotBuildTheWorker writes a worker.go into a module
// whose go.sum lacks the checksums of what the worker imports (the Redis
// client): agoragen says in one line to run go mod tidy. With a complete
// go.sum, or when the file's imports did not change, it says nothing.
func TestHintWhenGoSumCannotBuildTheWorker(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	const hint = "imports packages whose checksums go.sum lacks; run go mod tidy before go build"

	dir := userModule(t, true, map[string]string{"orders/orders.go": ordersSrc})
	// GOFLAGS=-mod=mod (set by userModule) must not hide the gap.
	sum := readFile(t, filepath.Join(dir, "go.sum"))
	var kept []string
	for _, line := range strings.Split(sum, "\n") {
		if !strings.HasPrefix(line, "github.com/redis/go-redis/") {
			kept = append(kept, line)
		}
	}
	writeFile(t, filepath.Join(dir, "go.sum"), []byte(strings.Join(kept, "\n")))
	code, _, stderr := runCmd(t, "./orders")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if strings.Count(stderr, hint) != 1 || !strings.Contains(stderr, "orders/worker.go") {
		t.Fatalf("no one-line hint naming orders/worker.go:\n%s", stderr)
	}
	if strings.Contains(readFile(t, filepath.Join(dir, "go.sum")), "github.com/redis/go-redis/") {
		t.Fatal("the check changed go.sum")
	}
	// Regenerating the same file asks nothing and says nothing.
	if os.Remove(filepath.Join(dir, "orders", "worker.go")) != nil {
		t.Fatal("no worker.go written")
	}
	writeFile(t, filepath.Join(dir, "go.sum"), []byte(sum))
	if code, _, stderr := runCmd(t, "./orders"); code != 0 || strings.Contains(stderr, hint) {
		t.Fatalf("complete go.sum: exit %d, hint shown:\n%s", code, stderr)
	}
	writeFile(t, filepath.Join(dir, "go.sum"), []byte(strings.Join(kept, "\n")))
	// The go command now needs the missing checksums to list the package at
	// all: where it cannot fetch them (offline) the load fails, and that is
	// said with the same advice; never "nothing to generate".
	code, _, stderr = runCmd(t, "./orders")
	switch {
	case strings.Contains(stderr, hint):
		t.Fatalf("unchanged file: exit %d, hint shown:\n%s", code, stderr)
	case code == 2 && strings.Contains(stderr, "run go mod tidy"):
	case code != 0 || strings.Contains(stderr, "nothing to generate"):
		t.Fatalf("unchanged file: exit %d:\n%s", code, stderr)
	}
}
