package gen

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"strings"
)

// directive is one //agora: comment found in a file, with its arguments and
// the declaration it documents.
type directive struct {
	Def     *Directive
	Comment *ast.Comment
	Args    []arg
	// Func is the function whose doc comment holds a schedule directive.
	Func *ast.FuncDecl
	File *ast.File
}

// pos returns the position of the byte at off in the directive's comment.
func (d *directive) pos(fset *token.FileSet, off int) token.Position {
	return fset.Position(d.Comment.Slash + token.Pos(off))
}

// scanned is what the scanner found in one package.
type scanned struct {
	schedules []*directive
	workers   []*directive
	// any is true when the package holds any //agora: comment, even a bad
	// one: such a package is the generator's business.
	any bool
	// silent lists the //agora: comments rejected without a diagnostic,
	// which account reports as an internal error.
	silent []*ast.Comment
}

// scanFiles finds every //agora: comment in files, checks its syntax and
// placement, and reports problems to ds.
func scanFiles(fset *token.FileSet, files []*ast.File, ds *Diagnostics) scanned {
	var s scanned
	for _, f := range files {
		owners := docOwners(f)
		for _, g := range f.Comments {
			for _, c := range g.List {
				if !strings.HasPrefix(c.Text, Namespace) {
					continue
				}
				s.any = true
				before := ds.Len()
				d := parseDirective(fset, f, c, ds)
				if d == nil || !place(fset, f, g, owners[g], d, ds) {
					if ds.Len() == before {
						s.silent = append(s.silent, c)
					}
					continue
				}
				if d.Def.Name == ScheduleDirective {
					s.schedules = append(s.schedules, d)
				} else {
					s.workers = append(s.workers, d)
				}
			}
		}
	}
	return s
}

// parseDirective splits c into a known directive and its arguments, or
// reports why it cannot and returns nil.
func parseDirective(fset *token.FileSet, f *ast.File, c *ast.Comment, ds *Diagnostics) *directive {
	name, argsOff := directiveName(c.Text)
	at := func(off int) token.Position { return fset.Position(c.Slash + token.Pos(off)) }
	if name == "" {
		ds.Add(at(0), "missing directive name after %s (want %s)", Namespace, knownDirectives())
		return nil
	}
	def, ok := lookupDirective(name)
	if !ok {
		var names []string
		for _, d := range Registry {
			names = append(names, d.Name)
		}
		ds.Add(at(len(Namespace)), "unknown directive %s%s%s", Namespace, name, didYouMean(name, names, Namespace))
		return nil
	}
	args, errs := splitArgs(c.Text[argsOff:], argsOff)
	for _, e := range errs {
		ds.Add(at(e.Off), "%s%s: %s", Namespace, name, e.Msg)
	}
	if len(errs) > 0 {
		return nil
	}
	return &directive{Def: def, Comment: c, Args: args, File: f}
}

func knownDirectives() string {
	var names []string
	for _, d := range Registry {
		names = append(names, Namespace+d.Name)
	}
	return strings.Join(names, " or ")
}

// docOwners maps each doc comment group of f to the node it documents.
func docOwners(f *ast.File) map[*ast.CommentGroup]ast.Node {
	owners := map[*ast.CommentGroup]ast.Node{}
	if f.Doc != nil {
		owners[f.Doc] = f
	}
	for _, decl := range f.Decls {
		switch decl := decl.(type) {
		case *ast.FuncDecl:
			if decl.Doc != nil {
				owners[decl.Doc] = decl
			}
		case *ast.GenDecl:
			if decl.Doc != nil {
				owners[decl.Doc] = decl
			}
			for _, spec := range decl.Specs {
				var doc *ast.CommentGroup
				switch spec := spec.(type) {
				case *ast.ValueSpec:
					doc = spec.Doc
				case *ast.TypeSpec:
					doc = spec.Doc
				case *ast.ImportSpec:
					doc = spec.Doc
				}
				if doc != nil {
					owners[doc] = decl
				}
			}
		}
	}
	return owners
}

// place checks that d sits where its directive belongs and records the
// function a schedule documents. It reports false after reporting why not.
func place(fset *token.FileSet, f *ast.File, g *ast.CommentGroup, owner ast.Node, d *directive, ds *Diagnostics) bool {
	at := d.pos(fset, 0)
	name := Namespace + d.Def.Name
	switch d.Def.Name {
	case WorkerDirective:
		if owner == ast.Node(f) {
			return true
		}
		if g.End() < f.Package && fset.Position(f.Package).Line > fset.Position(g.End()).Line+1 {
			ds.Add(at, "%s is separated from the package clause by a blank line; the package doc comment must end on the line above it", name)
			return false
		}
		ds.Add(at, "%s belongs in the package doc comment (directly above the package clause), not %s", name, describePlace(fset, f, g, owner))
		return false
	default:
		fn, ok := owner.(*ast.FuncDecl)
		if !ok {
			if next := nextFunc(f, g); next != nil && owner == nil {
				ds.Add(at, "%s is separated from func %s by a blank line; remove it so the directive is part of the function's doc comment", name, next.Name.Name)
				return false
			}
			ds.Add(at, "%s belongs in the doc comment of a top-level function, not %s", name, describePlace(fset, f, g, owner))
			return false
		}
		if fn.Recv != nil && len(fn.Recv.List) > 0 {
			ds.Add(at, "%s on method %s.%s: pipelines are declared on top-level functions", name, types.ExprString(fn.Recv.List[0].Type), fn.Name.Name)
			return false
		}
		if fn.Type.TypeParams != nil && len(fn.Type.TypeParams.List) > 0 {
			ds.Add(at, "%s on generic function %s: agoragen cannot choose its type arguments; declare a non-generic factory that calls it", name, fn.Name.Name)
			return false
		}
		d.Func = fn
		return true
	}
}

// nextFunc returns the function declared right after g, when nothing but
// blank lines and other comments separate them.
func nextFunc(f *ast.File, g *ast.CommentGroup) *ast.FuncDecl {
	for _, decl := range f.Decls {
		if decl.Pos() < g.End() {
			if decl.End() > g.Pos() {
				return nil // g is inside this declaration
			}
			continue
		}
		fn, _ := decl.(*ast.FuncDecl)
		return fn
	}
	return nil
}

// describePlace says in words where a misplaced directive is.
func describePlace(fset *token.FileSet, f *ast.File, g *ast.CommentGroup, owner ast.Node) string {
	switch owner := owner.(type) {
	case *ast.File:
		return "in the package doc comment"
	case *ast.FuncDecl:
		if owner.Recv != nil {
			return "on method " + owner.Name.Name
		}
		return "on func " + owner.Name.Name
	case *ast.GenDecl:
		return fmt.Sprintf("on a %s declaration", owner.Tok)
	}
	for _, decl := range f.Decls {
		if decl.Pos() <= g.Pos() && g.End() <= decl.End() {
			if fn, ok := decl.(*ast.FuncDecl); ok {
				return "inside func " + fn.Name.Name
			}
			return "inside a declaration"
		}
	}
	if g.End() < f.Package {
		return "above the package clause"
	}
	return "in a free-standing comment"
}
