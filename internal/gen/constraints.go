package gen

import (
	"bytes"
	"go/ast"
	"go/build/constraint"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/tools/go/packages"
)

// checkConstraints reports every //agora: comment in a file of pkg that some
// builds leave out: a //go:build line, a _GOOS or _GOARCH name suffix, cgo,
// or a name the go command ignores. The generated file has no build
// constraints, so such a directive would either vanish (the file excluded
// from this load, the case go/packages lists in IgnoredFiles) or make the
// generated code compile only where the file is included. Reporting it is
// simpler and safer than generating constrained code: the fix is to move
// the function into a file every build includes.
func checkConstraints(pkg *packages.Package, generated map[string]bool, ds *Diagnostics) (any bool) {
	files := append(append([]string(nil), pkg.GoFiles...), pkg.IgnoredFiles...)
	return checkConstraintFiles(files, generated, ds)
}

// checkConstraintFiles is checkConstraints for a list of file names.
func checkConstraintFiles(files []string, generated map[string]bool, ds *Diagnostics) (any bool) {
	seen := map[string]bool{}
	for _, name := range files {
		if seen[name] || generated[name] || !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			continue
		}
		seen[name] = true
		src, err := os.ReadFile(name)
		if err != nil || !bytes.Contains(src, []byte(Namespace)) {
			continue
		}
		// A file set of its own: an ignored file is not part of the load,
		// and the positions only need this file.
		local := token.NewFileSet()
		f, err := parser.ParseFile(local, name, src, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			continue // an included file's syntax error is reported by the load
		}
		reason := constraintReason(name, f)
		if reason == "" {
			continue
		}
		for _, g := range f.Comments {
			for _, c := range g.List {
				if !strings.HasPrefix(c.Text, Namespace) {
					continue
				}
				any = true
				dname, _ := directiveName(c.Text)
				ds.Add(local.Position(c.Slash), "%s%s in %s, which its build constraints exclude from some builds (%s): the generated file has none, so those builds would lack this declaration or fail to compile; move the directive and its function into a file without build constraints",
					Namespace, dname, filepath.Base(name), reason)
			}
		}
	}
	return any
}

// constraintReason says why some builds leave out the file name parsed as f,
// or "" when every build includes it.
func constraintReason(name string, f *ast.File) string {
	base := filepath.Base(name)
	if strings.HasPrefix(base, "_") || strings.HasPrefix(base, ".") {
		return "the go command ignores names starting with " + strconv.Quote(base[:1])
	}
	for _, g := range f.Comments {
		if g.Pos() >= f.Package {
			break
		}
		for _, c := range g.List {
			if constraint.IsGoBuild(c.Text) || constraint.IsPlusBuild(c.Text) {
				return strings.TrimSpace(c.Text)
			}
		}
	}
	if !buildsEverywhere(base) {
		stem := strings.TrimSuffix(base, ".go")
		if i := strings.LastIndexByte(stem, '_'); i >= 0 {
			return "the " + stem[i:] + " suffix of its name"
		}
		return "its name"
	}
	for _, imp := range f.Imports {
		if imp.Path.Value == `"C"` {
			return `import "C": cgo files are left out when CGO_ENABLED=0`
		}
	}
	return ""
}

// checkExcludedDirs reports the directives of directories below the
// recursive patterns (./... and dir/...) that the load did not return: the
// go command leaves out a directory whose every file its build constraints
// exclude, so such a package is not even an empty result. loadedDirs holds
// the directories of the packages the load returned.
func checkExcludedDirs(dir string, patterns []string, loadedDirs map[string]bool, generated map[string]bool, ds *Diagnostics) {
	for _, p := range patterns {
		base, ok := strings.CutSuffix(p, "...")
		if !ok || !(strings.HasPrefix(p, ".") || filepath.IsAbs(p)) {
			continue // an import path pattern: the go command resolves it
		}
		base = strings.TrimSuffix(base, "/")
		if !filepath.IsAbs(base) {
			base = filepath.Join(dir, base)
		}
		_ = filepath.WalkDir(base, func(path string, d os.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if !d.IsDir() {
				return nil
			}
			name := d.Name()
			if path != base {
				if name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
					return filepath.SkipDir
				}
				if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil {
					return filepath.SkipDir // another module
				}
			}
			if loadedDirs[path] {
				return nil
			}
			entries, err := os.ReadDir(path)
			if err != nil {
				return nil
			}
			var files []string
			for _, e := range entries {
				if !e.IsDir() {
					files = append(files, filepath.Join(path, e.Name()))
				}
			}
			checkConstraintFiles(files, generated, ds)
			return nil
		})
	}
}
