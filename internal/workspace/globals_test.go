package workspace

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// pluginRoots are the packages (with those under them) in which linking a
// package must not change a program: no init with side effects, no
// Register function filling a package-level registry. What a worker serves
// is in its main or in package worker.
var pluginRoots = []string{"runtime", "worker", "etl", "config", "cli", "fleet", "tracing"}

// noRegisterRoots hold no package-level Register… function at all: the
// core takes what it serves as options (issue 28).
var noRegisterRoots = []string{"runtime", "worker"}

// TestNoInitAndNoGlobalRegistries fails on a func init() or a package-level
// Register… function that writes to a package-level variable in any
// non-test file under pluginRoots, and on any package-level Register…
// function under noRegisterRoots. Elsewhere a Register that fills a
// registry it is given (etl/postgres.Register(*etl.Registry)) is fine.
func TestNoInitAndNoGlobalRegistries(t *testing.T) {
	for _, dir := range pluginRoots {
		err := filepath.WalkDir(filepath.Join(root, dir), func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if d.Name() == "testdata" || d.Name() == "node_modules" {
					return filepath.SkipDir
				}
				rel, err := filepath.Rel(root, path)
				if err != nil {
					return err
				}
				strict := slices.ContainsFunc(noRegisterRoots, func(r string) bool {
					return rel == r || strings.HasPrefix(filepath.ToSlash(rel), r+"/")
				})
				problems, err := globalHooks(path, strict)
				if err != nil {
					return err
				}
				for _, p := range problems {
					t.Error(p)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// TestGlobalHooksFindsThem keeps the check honest: it finds an init and a
// Register that appends to, locks or assigns a package-level variable, and
// passes a Register that fills the registry it is given.
func TestGlobalHooksFindsThem(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "a.go"), `package p

import "sync"

var (
	mu    sync.Mutex
	hooks []func()
	named = map[string]func(){}
)

func init() { hooks = append(hooks, nil) }

func RegisterHook(h func()) { mu.Lock(); defer mu.Unlock(); hooks = append(hooks, h) }
`)
	writeFile(t, filepath.Join(dir, "b.go"), `package p

type Registry struct{ m map[string]func() }

func RegisterNamed(name string, h func()) { named[name] = h }

func Register(r *Registry) { r.m["x"] = nil }

func RegisterLocal() { named := map[string]int{}; named["x"] = 1 }
`)
	writeFile(t, filepath.Join(dir, "a_test.go"), "package p\n\nfunc init() {}\n")
	problems, err := globalHooks(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	var funcs []string
	for _, p := range problems {
		funcs = append(funcs, p[strings.LastIndex(p, " ")+1:])
	}
	slices.Sort(funcs)
	if want := []string{"RegisterHook", "RegisterNamed", "init"}; !slices.Equal(funcs, want) {
		t.Fatalf("found %q, want %q:\n%s", funcs, want, strings.Join(problems, "\n"))
	}
	if problems, err = globalHooks(dir, true); err != nil || len(problems) != 5 {
		t.Fatalf("strict: %v, %d problems, want 5 (every Register and the init):\n%s", err, len(problems), strings.Join(problems, "\n"))
	}
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// globalHooks reports, as "file:line: what name", the func init and the
// Register… functions writing package-level variables (strict: every
// package-level Register… function) among the non-test .go files of dir
// (one package).
func globalHooks(dir string, strict bool) ([]string, error) {
	fset := token.NewFileSet()
	matches, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		return nil, err
	}
	var files []*ast.File
	globals := map[string]bool{}
	for _, name := range matches {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
		for _, decl := range f.Decls {
			if gd, ok := decl.(*ast.GenDecl); ok && gd.Tok == token.VAR {
				for _, spec := range gd.Specs {
					for _, n := range spec.(*ast.ValueSpec).Names {
						globals[n.Name] = true
					}
				}
			}
		}
	}
	var problems []string
	for _, f := range files {
		for _, decl := range f.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Recv != nil || fd.Body == nil {
				continue
			}
			switch {
			case fd.Name.Name == "init":
				problems = append(problems, fset.Position(fd.Pos()).String()+": func init")
			case strict && strings.HasPrefix(fd.Name.Name, "Register"):
				problems = append(problems, fset.Position(fd.Pos()).String()+": a package-level "+fd.Name.Name)
			case strings.HasPrefix(fd.Name.Name, "Register") && writesGlobal(fd, globals):
				problems = append(problems, fset.Position(fd.Pos()).String()+": a package-level registry written by "+fd.Name.Name)
			}
		}
	}
	return problems, nil
}

// writesGlobal reports whether fd assigns to, appends to, indexes into or
// calls a method of a package-level variable it does not shadow.
func writesGlobal(fd *ast.FuncDecl, globals map[string]bool) bool {
	local := map[string]bool{}
	for _, field := range fd.Type.Params.List {
		for _, n := range field.Names {
			local[n.Name] = true
		}
	}
	isGlobal := func(e ast.Expr) bool {
		for {
			switch x := e.(type) {
			case *ast.Ident:
				return globals[x.Name] && !local[x.Name]
			case *ast.SelectorExpr:
				e = x.X
			case *ast.IndexExpr:
				e = x.X
			case *ast.StarExpr:
				e = x.X
			case *ast.ParenExpr:
				e = x.X
			default:
				return false
			}
		}
	}
	found := false
	ast.Inspect(fd.Body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.AssignStmt:
			for _, lhs := range x.Lhs {
				if x.Tok == token.DEFINE {
					if id, ok := lhs.(*ast.Ident); ok {
						local[id.Name] = true
					}
					continue
				}
				found = found || isGlobal(lhs)
			}
		case *ast.IncDecStmt:
			found = found || isGlobal(x.X)
		case *ast.CallExpr:
			if sel, ok := x.Fun.(*ast.SelectorExpr); ok {
				found = found || isGlobal(sel.X)
			}
		}
		return !found
	})
	return found
}
