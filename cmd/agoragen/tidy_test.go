package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agora-etl/agora/internal/modtest"
)

const newImportSrc = `// Package orders holds order pipelines.
package orders

import (
	"context"

	"example.org/notyet/pkg"
)

// Pipeline copies orders.
type Pipeline struct{}

// Run copies.
func (*Pipeline) Run(context.Context) error { return pkg.Do() }

// BuildOrders builds the pipeline.
//
//agora:schedule every=1h
func BuildOrders(context.Context) (*Pipeline, error) { return &Pipeline{}, nil }
`

// TestRunNewImportBeforeGoModTidy: an import whose module go.mod lacks used
// to yield the type checker's `could not import … (invalid package name: "")`.
func TestRunNewImportBeforeGoModTidy(t *testing.T) {
	userModule(t, true, map[string]string{"orders/orders.go": newImportSrc})
	code, _, stderr := runCmd(t, "./orders")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, stderr)
	}
	if strings.Contains(stderr, "invalid package name") || strings.Contains(stderr, "in dependency") {
		t.Errorf("stderr still has the type checker's puzzle:\n%s", stderr)
	}
	if !strings.Contains(stderr, "orders/orders.go:7:2: ") || !strings.Contains(stderr, "example.org/notyet/pkg") ||
		!strings.Contains(stderr, "run go mod tidy") {
		t.Errorf("stderr does not name the import and say to run go mod tidy:\n%s", stderr)
	}
	if n := strings.Count(stderr, "\n"); n != 2 {
		t.Errorf("want one diagnostic and the summary, got %d lines:\n%s", n, stderr)
	}
}

const runtimeOrdersSrc = `// Package orders holds order pipelines.
package orders

import (
	"context"

	"github.com/agora-etl/agora/runtime"
)

// BuildOrders builds the pipeline.
//
//agora:schedule every=1h
func BuildOrders(context.Context) (runtime.Pipeline, error) { return nil, nil }
`

// TestRunGoModNeedsUpdating: while go.mod needs updating go list fails before
// matching any package, and agoragen used to answer "nothing to generate"
// with exit 0.
func TestRunGoModNeedsUpdating(t *testing.T) {
	repo := modtest.RepoRoot(t)
	dir := userModule(t, true, map[string]string{"orders/orders.go": runtimeOrdersSrc})
	// What a hand-written go.mod looks like: agora required, none of the
	// modules it needs.
	writeFile(t, filepath.Join(dir, "go.mod"), []byte("module example.com/user\n\ngo 1.26\n\n"+
		"require github.com/agora-etl/agora v0.0.0-00010101000000-000000000000\n\n"+
		"replace github.com/agora-etl/agora => "+repo+"\n"))
	t.Setenv("GOFLAGS", "-mod=readonly")
	code, _, stderr := runCmd(t, "./orders")
	if code != 2 || !strings.Contains(stderr, "go mod tidy") || strings.Contains(stderr, "nothing to generate") {
		t.Fatalf("exit %d, want 2 and a go mod tidy hint\n%s\n%s", code, stderr, readFile(t, "go.mod"))
	}
}
