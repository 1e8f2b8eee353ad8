// Package workspace reads the repository's module layout: the modules
// go.work ties together for development. Its tests keep go.work, the go.mod
// files on disk and the Makefile's MODULES in step, and hold the rule that
// makes go install github.com/agora-etl/agora/cmd/agora@latest work.
package workspace

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/mod/modfile"
)

// Modules returns the directories go.work in root uses, relative to root
// and slash-separated ("." for the core module).
func Modules(root string) ([]string, error) {
	path := filepath.Join(root, "go.work")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	wf, err := modfile.ParseWork(path, data, nil)
	if err != nil {
		return nil, fmt.Errorf("workspace: %w", err)
	}
	var dirs []string
	for _, u := range wf.Use {
		dirs = append(dirs, strings.TrimPrefix(filepath.ToSlash(filepath.Clean(u.Path)), "./"))
	}
	return dirs, nil
}
