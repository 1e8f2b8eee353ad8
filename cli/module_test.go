package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/agora-etl/agora/internal/modtest"
)

// goGenerateLine is split so that no line of this file starts with the
// directive: go generate ./... would otherwise run agoragen on this package.
const goGenerateLine = "//go:" + "generate go run github.com/agora-etl/agora/cmd/agoragen"

const annotatedPackage = `// Package jobs holds one pipeline.
package jobs

import (
	"context"
	"fmt"

	"github.com/agora-etl/agora/runtime"
)

` + goGenerateLine + `

//agora:schedule id=hello every=1h
func BuildHello(ctx context.Context) (runtime.Pipeline, error) {
	return runtime.PipelineFunc(func(ctx context.Context) error {
		fmt.Println("hello from a module worker")
		return nil
	}), nil
}
`

func TestWorkerModuleBuildsAndRunsAnAnnotatedPackage(t *testing.T) {
	mod := modtest.New(t, "example.com/shop", true)
	modtest.WriteFile(t, filepath.Join(mod, "jobs", "jobs.go"), annotatedPackage)

	// Without worker.go agora refuses, as agoragen -check would.
	code, _, stderr := runAgora(t, mod, nil, "worker", "--module", "./jobs")
	if code != 1 || !strings.Contains(stderr, "out of date; run go generate") {
		t.Fatalf("stale package: exit %d, want 1 and a hint\n%s", code, stderr)
	}

	gen := mustRun(t, mod, "go", "generate", "./...")
	if gen != "" {
		t.Logf("go generate: %s", gen)
	}
	before := listTree(t, mod)
	p := startAgora(t, mod, []string{"AGORA_DISTRIBUTED_REDIS_URL="}, "worker", "--module", "./jobs", "-health-port", "0")
	p.waitOutput(t, p.stdout, "hello from a module worker", 2*time.Minute)
	p.healthAddr(t)
	p.signal(t, syscall.SIGINT)
	if code := p.wait(t, 20*time.Second); code != 0 {
		t.Fatalf("module worker exit %d after SIGINT\n%s", code, p.stderr)
	}
	// The throwaway main calls worker.Main, whose entry serves the fleet
	// subcommand.
	code, stdout, stderr := runAgora(t, mod, []string{"AGORA_DISTRIBUTED_REDIS_URL="}, "worker", "--module", "./jobs", "fleet", "help")
	if code != 0 || !strings.Contains(stdout, "trigger ID") {
		t.Fatalf("agora worker --module ./jobs fleet help: exit %d\n%s%s", code, stdout, stderr)
	}
	if after := listTree(t, mod); after != before {
		t.Fatalf("agora worker --module left files behind:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// listTree lists every file under dir, one path a line.
func listTree(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, path)
		b.WriteString(rel + "\n")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}
