package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

// tempModule creates an empty module named modulePath in a temporary
// directory, with this checkout's go.sum, and returns the directory. With
// requireAgora its go.mod requires agora, replaced by this checkout, and the
// same versions of everything agora requires, so building it needs no
// network: the module cache has everything.
func tempModule(t testing.TB, modulePath string, requireAgora bool) string {
	t.Helper()
	repo, err := filepath.Abs(filepath.Join("..", ".."))
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
	fmt.Fprintf(&b, "module %s\n\ngo %s\n", modulePath, mf.Go.Version)
	if requireAgora {
		fmt.Fprintf(&b, "\nrequire %s v0.0.0-00010101000000-000000000000\n\nrequire (\n", mf.Module.Mod.Path)
		for _, r := range mf.Require {
			fmt.Fprintf(&b, "\t%s %s\n", r.Mod.Path, r.Mod.Version)
		}
		fmt.Fprintf(&b, ")\n\nreplace %s => %s\n", mf.Module.Mod.Path, repo)
	}
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "go.mod"), []byte(b.String()))
	sum, err := os.ReadFile(filepath.Join(repo, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "go.sum"), sum)
	return dir
}
