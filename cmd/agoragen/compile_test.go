package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"

	"github.com/agora-etl/agora/cmd/agoragen/internal/gen"
)

// goldenModule lays out every golden case with an expected file as a package
// of one temporary module that requires this checkout of agora (and the same
// versions of everything else), so the expected files can be built as users
// build them. It returns the module directory and the case names.
func goldenModule(t *testing.T) (string, []string) {
	t.Helper()
	root := goldenRoot(t)
	repo, err := filepath.Abs(filepath.Join(root, "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	gomod, err := os.ReadFile(filepath.Join(repo, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	mf, err := modfile.Parse("go.mod", gomod, nil)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "module agoragen.golden\n\ngo %s\n\nrequire %s v0.0.0-00010101000000-000000000000\n\nrequire (\n", mf.Go.Version, mf.Module.Mod.Path)
	for _, r := range mf.Require {
		fmt.Fprintf(&b, "\t%s %s\n", r.Mod.Path, r.Mod.Version)
	}
	fmt.Fprintf(&b, ")\n\nreplace %s => %s\n", mf.Module.Mod.Path, repo)

	mod := t.TempDir()
	writeFile(t, filepath.Join(mod, "go.mod"), []byte(b.String()))
	sum, err := os.ReadFile(filepath.Join(repo, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(mod, "go.sum"), sum)

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

func writeFile(t *testing.T, path string, content []byte) {
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
