package gen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"strings"
	"sync"

	"golang.org/x/tools/go/packages"

	"github.com/agora-etl/agora/templates"
)

// LoadMode is what agoragen asks go/packages for: names and files to know
// where to write, syntax for the comments, types for the signature checks,
// and the import graph (implied by types anyway) to report errors of
// dependencies. Function bodies of dependencies are never checked: they
// come from export data.
const LoadMode = packages.NeedName | packages.NeedFiles | packages.NeedSyntax |
	packages.NeedTypes | packages.NeedImports | packages.NeedModule

// ErrLoad is wrapped by every failure to load packages (exit code 2).
var ErrLoad = errors.New("agoragen: cannot load packages")

// loaded is the result of one load.
type loaded struct {
	fset  *token.FileSet
	roots []*packages.Package
	// generated holds the files that carried the agoragen header and were
	// left out of type checking.
	generated map[string]bool
}

// load loads the packages matched by patterns in one go/packages call. A
// file that carries the agoragen header is parsed down to its package
// clause: the file about to be replaced cannot then break the load, however
// stale or broken it is.
func load(ctx context.Context, dir string, tags string, patterns []string) (*loaded, error) {
	l := &loaded{fset: token.NewFileSet(), generated: map[string]bool{}}
	var mu sync.Mutex
	cfg := &packages.Config{
		Context: ctx,
		Mode:    LoadMode,
		Dir:     dir,
		Fset:    l.fset,
		ParseFile: func(fset *token.FileSet, filename string, src []byte) (*ast.File, error) {
			if IsGenerated(src) {
				mu.Lock()
				l.generated[filename] = true
				mu.Unlock()
				return parser.ParseFile(fset, filename, src, parser.PackageClauseOnly)
			}
			return parser.ParseFile(fset, filename, src, parser.AllErrors|parser.ParseComments|parser.SkipObjectResolution)
		},
	}
	if tags != "" {
		cfg.BuildFlags = []string{"-tags=" + tags}
	}
	pkgs, err := packages.Load(cfg, patterns...)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrLoad, err)
	}
	if len(pkgs) == 0 {
		if err := noPackages(ctx, dir, cfg.BuildFlags, patterns); err != nil {
			return nil, err
		}
	}
	l.roots = pkgs
	return l, nil
}

// noPackages explains an empty load. go/packages returns no package and no
// error when go list fails before matching anything, as it does while go.mod
// needs updating (a new module before its first go mod tidy): go list's own
// message is the explanation, and the answer is not "nothing to generate".
// It returns nil when go list succeeds: the patterns matched nothing.
func noPackages(ctx context.Context, dir string, flags, patterns []string) error {
	args := append(append([]string{"list", "-e", "-f", "{{.ImportPath}}"}, flags...), patterns...)
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if cmd.Run() == nil {
		return nil // patterns that match nothing: nothing to generate
	}
	msg := strings.ReplaceAll(strings.TrimSpace(stderr.String()), "\n\t", " ")
	hint := ""
	switch {
	case strings.Contains(msg, "go mod tidy"):
		hint = "; then go generate again"
	case strings.Contains(msg, "go.mod") || strings.Contains(msg, "go.sum") || strings.Contains(msg, "verifying module"):
		hint = "; run go mod tidy, then go generate again"
	}
	return fmt.Errorf("%w: %s: %s%s", ErrLoad, strings.Join(patterns, " "), msg, hint)
}

// IsGenerated reports whether src is a Go file that carries the agoragen
// header as a line comment of its own before the package clause, the place
// Go's convention for generated files gives it. The header anywhere else (in
// a block comment, a string, after the package clause) does not count: a
// file agoragen may overwrite must be unmistakably its own, and a file that
// does not parse up to its package clause is never.
func IsGenerated(src []byte) bool {
	if !bytes.Contains(src, []byte(templates.Header)) {
		return false
	}
	f, err := parser.ParseFile(token.NewFileSet(), "", src, parser.PackageClauseOnly|parser.ParseComments)
	if err != nil {
		return false
	}
	for _, group := range f.Comments {
		for _, c := range group.List {
			if c.Pos() > f.Package {
				return false
			}
			if strings.TrimRight(c.Text, "\r \t") == templates.Header {
				return true
			}
		}
	}
	return false
}
