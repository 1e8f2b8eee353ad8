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
