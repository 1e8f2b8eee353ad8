package gen

import (
	"bytes"
	"context"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
)

// importsOf returns the sorted import paths of a Go source file, nil when it
// does not parse.
func importsOf(src []byte) []string {
	f, err := parser.ParseFile(token.NewFileSet(), "", src, parser.ImportsOnly)
	if err != nil {
		return nil
	}
	var paths []string
	for _, imp := range f.Imports {
		if p, err := strconv.Unquote(imp.Path.Value); err == nil {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	return paths
}

// newImports reports whether writing f brings imports its package did not
// have from the old file: only then can the build need checksums that go.sum
// lacks.
func newImports(f File) bool {
	if !f.Exists {
		return true
	}
	return !slices.Equal(importsOf(f.Old), importsOf(f.Content))
}

// missingSums asks the go command whether the package in dir builds with
// the module's go.sum as it is, and reports whether checksums are missing.
// It runs only after writing a file with new imports, the first generation
// above all, and says nothing when it cannot tell.
func missingSums(ctx context.Context, dir string) bool {
	cmd := exec.CommandContext(ctx, "go", "list", "-e", "-deps", "-f", "{{with .Error}}{{.Err}}{{end}}{{range .DepsErrors}}{{.Err}}{{end}}", ".")
	cmd.Dir = dir
	// A -mod=mod in the environment would add the checksums itself, which
	// is not what the user's go build will do.
	cmd.Env = append(os.Environ(), "GOFLAGS="+withoutModFlag(os.Getenv("GOFLAGS")))
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	_ = cmd.Run()
	return bytes.Contains(out.Bytes(), []byte("missing go.sum entry"))
}

// withoutModFlag drops -mod=... from a GOFLAGS value.
func withoutModFlag(flags string) string {
	var kept []string
	for _, f := range strings.Fields(flags) {
		if !strings.HasPrefix(f, "-mod=") {
			kept = append(kept, f)
		}
	}
	return strings.Join(kept, " ")
}
