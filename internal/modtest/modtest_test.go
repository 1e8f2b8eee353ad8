package modtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestNewModuleBuildsAgainstThisCheckout(t *testing.T) {
	dir := New(t, "example.com/probe", true)
	WriteFile(t, filepath.Join(dir, "main.go"), `package main

import "github.com/agora-etl/agora/runtime"

func main() { println(runtime.Every(1).String()) }
`)
	cmd := exec.Command("go", "run", ".")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go run in the new module: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "every=1ns") {
		t.Fatalf("output %q does not come from this checkout's runtime", out)
	}
}

func TestRepoRootHoldsAgorasGoMod(t *testing.T) {
	root := RepoRoot(t)
	if _, err := os.Stat(filepath.Join(root, "internal", "modtest", "modtest.go")); err != nil {
		t.Fatalf("RepoRoot = %s, which does not hold this package: %v", root, err)
	}
}
