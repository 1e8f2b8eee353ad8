package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const cgoOrdersSrc = `package orders

// #include <stdlib.h>
import "C"

import "context"

// BuildCgo builds the pipeline with cgo.
//
//agora:schedule id=cgo every=1h
func BuildCgo(context.Context) (*Pipeline, error) { return &Pipeline{}, nil }
`

// TestRunReportsDirectivesInCgoFilesWithoutCgo: with CGO_ENABLED=0 the go
// command leaves the cgo file out, and its directive used to vanish with
// exit 0.
func TestRunReportsDirectivesInCgoFilesWithoutCgo(t *testing.T) {
	dir := userModule(t, true, map[string]string{
		"orders/orders.go": ordersSrc,
		"orders/cgo.go":    cgoOrdersSrc,
	})
	t.Setenv("CGO_ENABLED", "0")
	code, _, stderr := runCmd(t, "./orders")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, stderr)
	}
	want := `cgo.go:10:1: //agora:schedule in cgo.go, which its build constraints exclude from some builds (import "C": cgo files are left out when CGO_ENABLED=0)`
	if !strings.Contains(stderr, want) {
		t.Fatalf("stderr lacks %q:\n%s", want, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "orders", "worker.go")); err == nil {
		t.Fatal("worker.go written despite the error")
	}
}

// TestRunReportsAPackageWhoseFilesAreAllExcluded: under ./... a directory
// whose every file is excluded used to be skipped as "no Go files".
func TestRunReportsAPackageWhoseFilesAreAllExcluded(t *testing.T) {
	userModule(t, true, map[string]string{
		"orders/orders.go": ordersSrc,
		"tools/tools.go": "//go:build tools\n\npackage tools\n\nimport \"context\"\n\n" +
			"//agora:schedule id=tool every=1h\nfunc BuildTool(context.Context) (any, error) { return nil, nil }\n",
	})
	for _, pattern := range []string{"./...", "./tools"} {
		code, _, stderr := runCmd(t, pattern)
		if code != 1 || !strings.Contains(stderr, "tools.go:7:1: //agora:schedule in tools.go, which its build constraints exclude from some builds (//go:build tools)") {
			t.Errorf("agoragen %s: exit %d, want 1 and the directive reported\n%s", pattern, code, stderr)
		}
	}
}
