package gen

import (
	"fmt"
	"go/token"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"golang.org/x/tools/go/packages"

	"github.com/agora-etl/agora/templates"
)

// pkgResult is what checking one package produced.
type pkgResult struct {
	pkg *packages.Package
	// directives is false for a package without any //agora: comment.
	directives bool
	worker     *templates.Worker
	// dir is the package's directory.
	dir string
	// internal is a broken invariant of the checks: agoragen's bug, not the
	// user's.
	internal error
}

// checkPackage scans and checks one loaded package. forceMain is the -main
// flag.
func checkPackage(l *loaded, pkg *packages.Package, forceMain bool, ds *Diagnostics) pkgResult {
	res := pkgResult{pkg: pkg, dir: packageDir(pkg)}
	var files = pkg.Syntax
	s := scanFiles(l.fset, files, ds)
	constrained := checkConstraints(pkg, l.generated, ds)
	if !s.any {
		res.directives = constrained
		return res
	}
	res.directives = true
	c := &checker{fset: l.fset, pkg: pkg, pipeline: pipelineInterface(pkg), ds: ds, fates: map[*directive]fate{}}
	before := ds.Len()

	w := &templates.Worker{PackagePath: pkg.PkgPath, PackageName: pkg.Name}
	c.checkWorker(s.workers, w, forceMain)
	if len(s.workers) > 0 && len(s.schedules) == 0 {
		ds.Add(s.workers[0].pos(l.fset, 0), "%s%s in a package without any %s%s: there is nothing for the worker to run", Namespace, WorkerDirective, Namespace, ScheduleDirective)
	}
	decls := c.checkSchedules(s.schedules)
	generated := c.checkNames(decls, w)
	c.checkAfter(decls, w)
	beforeCompile := ds.Len()
	c.compileErrors(generated)
	if ds.Len() > before {
		res.internal = account(l.fset, s, c.fates, ds.Len() > beforeCompile, nil)
		return res
	}
	for _, d := range decls {
		w.Pipelines = append(w.Pipelines, d.Pipeline)
	}
	res.internal = account(l.fset, s, c.fates, false, w)
	if pkg.Types != nil {
		w.Taken = pkg.Types.Scope().Names()
	}
	res.worker = w
	return res
}

// checkWorker checks the worker directives and fills w's settings.
func (c *checker) checkWorker(dirs []*directive, w *templates.Worker, forceMain bool) {
	if len(dirs) > 1 {
		first := c.fset.Position(dirs[0].Comment.Slash)
		for _, d := range dirs[1:] {
			c.ds.Add(d.pos(c.fset, 0), "second %s%s in package %s (first at %s:%d); a package has at most one", Namespace, WorkerDirective, c.pkg.Name, filepath.Base(first.Filename), first.Line)
		}
	}
	if forceMain {
		w.Main = true
		if c.pkg.Name != "main" && len(c.pkg.Syntax) > 0 {
			c.ds.Add(c.fset.Position(c.pkg.Syntax[0].Name.Pos()), "-main: package %s is not package main", c.pkg.Name)
		}
	}
	if len(dirs) == 0 {
		return
	}
	d := dirs[0]
	vals, _ := values(c.fset, d, c.ds)
	if v, ok := vals["health_port"]; ok {
		if v.Int < 0 || v.Int > 65535 {
			c.ds.Add(d.pos(c.fset, v.ValueOff), "health_port=%d is not a port (0-65535)", v.Int)
		}
		w.HealthPort, w.HasHealthPort = v.Int, true
	}
	if v, ok := vals["graceful_shutdown"]; ok {
		if v.Duration <= 0 {
			c.ds.Add(d.pos(c.fset, v.ValueOff), "graceful_shutdown=%s must be positive", v.Value)
		}
		w.GracefulShutdown = v.Duration
	}
	if v, ok := vals["distributed"]; ok {
		switch v.Str {
		case "required":
			w.Distributed = templates.DistributedRequired
		case "off":
			w.Distributed = templates.DistributedOff
		}
	}
	if v, ok := vals["main"]; ok {
		if c.pkg.Name != "main" {
			c.ds.Add(d.pos(c.fset, v.KeyOff), "main: package %s is not package main; generate func main in a main package, or call worker.Main(%s.GetWorker) from one", c.pkg.Name, c.pkg.Name)
		}
		w.Main = true
	}
}

// checkNames reports ids used twice, constants that collide, and generated
// names the user's code already declares. It returns every name the
// generated file declares.
func (c *checker) checkNames(decls []pipelineDecl, w *templates.Worker) map[string]bool {
	generated := map[string]bool{"GetWorker": true}
	if w.Main {
		generated["main"] = true
	}
	byID := map[string]pipelineDecl{}
	byConst := map[string]pipelineDecl{}
	for _, d := range decls {
		if d.ID == "" {
			continue
		}
		if first, dup := byID[d.ID]; dup {
			c.ds.Add(d.idPos, "duplicate pipeline id %q: %s (%s) has it too", d.ID, first.Factory, first.at)
			continue
		}
		byID[d.ID] = d
		if first, dup := byConst[d.Const]; dup {
			c.ds.Add(d.idPos, "pipeline ids %q and %q both make the constant %s; choose ids that differ in more than punctuation", first.ID, d.ID, d.Const)
			continue
		}
		byConst[d.Const] = d
		generated[d.Const] = true
	}
	if c.pkg.Types == nil {
		return generated
	}
	for _, name := range sortedKeys(generated) {
		obj := c.pkg.Types.Scope().Lookup(name)
		if obj == nil || !obj.Pos().IsValid() {
			continue
		}
		if d, ok := byConst[name]; ok {
			c.ds.Add(d.idPos, "pipeline id %q makes the constant %s, which %s already declares; choose another id", d.ID, name, shortPos(c.fset, obj.Pos()))
			continue
		}
		c.ds.Add(c.fset.Position(obj.Pos()), "%s is declared here, but agoragen generates it; rename this one", name)
	}
	return generated
}

func shortPos(fset *token.FileSet, pos token.Pos) string {
	p := fset.Position(pos)
	return fmt.Sprintf("%s:%d", filepath.Base(p.Filename), p.Line)
}

// undefinedRE matches the type checker's message for a missing name.
var undefinedRE = regexp.MustCompile(`^undefined: ([A-Za-z_][A-Za-z0-9_]*)$`)

// compileErrors reports the package's errors from parsing and type checking.
// It leaves out the build output of go list (the type checker reports the
// same errors, without the stale generated file) and references to names the
// generated file is about to declare again.
func (c *checker) compileErrors(generated map[string]bool) {
	seen := map[*packages.Package]bool{}
	var visit func(p *packages.Package, root bool)
	visit = func(p *packages.Package, root bool) {
		if seen[p] {
			return
		}
		seen[p] = true
		for _, e := range p.Errors {
			if e.Kind == packages.ListError && strings.HasPrefix(e.Msg, "# ") {
				continue
			}
			if m := undefinedRE.FindStringSubmatch(e.Msg); root && m != nil && generated[m[1]] {
				continue
			}
			if m := unresolvedImportRE.FindStringSubmatch(e.Msg); root && m != nil && unresolved(c.pkg, m[1]) {
				continue // the import's own error below says why, and what to do
			}
			msg := e.Msg
			switch {
			case !root && unresolved(c.pkg, p.PkgPath):
				msg = missingModuleMsg(e.Msg)
			case !root:
				msg = fmt.Sprintf("%s (in dependency %s)", e.Msg, p.PkgPath)
			}
			c.ds.Add(parsePos(e.Pos), "%s", msg)
		}
		for _, imp := range p.Imports {
			if imp.PkgPath == templates.RuntimePath || imp.PkgPath == templates.DistributedPath {
				continue // not the user's to fix; the generated code only needs their names
			}
			visit(imp, false)
		}
	}
	visit(c.pkg, true)
}

// unresolvedImportRE matches the type checker's message for an import that
// go list could not resolve to a package at all.
var unresolvedImportRE = regexp.MustCompile(`^could not import (\S+) \(invalid package name: ""\)$`)

// unresolved reports whether root imports path directly and go list could
// not even name that package: a module missing from go.mod or go.sum, the
// usual state of a new import before the first go mod tidy.
func unresolved(root *packages.Package, path string) bool {
	imp, ok := root.Imports[path]
	if !ok || imp.Name != "" {
		return false
	}
	for _, e := range imp.Errors {
		if e.Kind == packages.ListError {
			return true
		}
	}
	return false
}

// missingModuleMsg turns go list's answer for an unresolved import into one
// line that says what to run. go list's own advice (go get in a dependency)
// is dropped: go mod tidy is what fixes both a missing requirement and a
// missing go.sum line.
func missingModuleMsg(msg string) string {
	first, _, _ := strings.Cut(msg, "\n")
	for _, cut := range []string{"; to add it:", "; to add:"} {
		first, _, _ = strings.Cut(first, cut)
	}
	return strings.TrimSpace(first) + "; run go mod tidy (it adds the module to go.mod and go.sum), then go generate again"
}

// parsePos turns a go/packages error position ("file:line:col", "file:line",
// "file" or "-") back into a token.Position.
func parsePos(s string) token.Position {
	if s == "" || s == "-" {
		return token.Position{}
	}
	parts := strings.Split(s, ":")
	nums := []int{}
	for len(parts) > 1 && len(nums) < 2 {
		n, err := strconv.Atoi(parts[len(parts)-1])
		if err != nil {
			break
		}
		nums = append([]int{n}, nums...)
		parts = parts[:len(parts)-1]
	}
	p := token.Position{Filename: strings.Join(parts, ":")}
	if len(nums) > 0 {
		p.Line = nums[0]
		p.Column = 1
	}
	if len(nums) > 1 {
		p.Column = nums[1]
	}
	return p
}

// packageDir returns the directory of pkg's files.
func packageDir(pkg *packages.Package) string {
	for _, f := range append(append([]string(nil), pkg.GoFiles...), pkg.CompiledGoFiles...) {
		return filepath.Dir(f)
	}
	return ""
}
