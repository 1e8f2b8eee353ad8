// Package modtest makes throwaway Go modules for tests that run the go
// command the way a user of agora would: outside this repository, with
// agora required through a replace directive pointing at this checkout.
package modtest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

// RepoRoot returns this checkout's root: the nearest directory above the
// test's working directory that holds agora's go.mod.
func RepoRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && modfile.ModulePath(data) == "github.com/agora-etl/agora" {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("modtest: not inside the agora repository")
		}
		dir = parent
	}
}

// New creates a module named modulePath in a temporary directory, with this
// checkout's go.sum, and returns the directory. With requireAgora its go.mod
// requires agora, replaced by this checkout, and the same versions of
// everything agora requires, so building in it needs no network: the module
// cache has everything.
func New(t testing.TB, modulePath string, requireAgora bool) string {
	t.Helper()
	repo := RepoRoot(t)
	gomod, err := os.ReadFile(filepath.Join(repo, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	mf, err := modfile.Parse("go.mod", gomod, nil)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "module %s\n\ngo %s\n", modulePath, mf.Go.Version)
	if requireAgora {
		fmt.Fprintf(&b, "\nrequire %s v0.0.0-00010101000000-000000000000\n\nrequire (\n", mf.Module.Mod.Path)
		for _, r := range mf.Require {
			fmt.Fprintf(&b, "\t%s %s\n", r.Mod.Path, r.Mod.Version)
		}
		fmt.Fprintf(&b, ")\n\nreplace %s => %s\n", mf.Module.Mod.Path, repo)
	}
	dir := t.TempDir()
	WriteFile(t, filepath.Join(dir, "go.mod"), b.String())
	sum, err := os.ReadFile(filepath.Join(repo, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	WriteFile(t, filepath.Join(dir, "go.sum"), string(sum))
	return dir
}

// WriteFile writes content to path, creating its directory.
func WriteFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
