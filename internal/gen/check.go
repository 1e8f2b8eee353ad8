package gen

import (
	"errors"
	"fmt"
	"go/ast"
	"go/token"
	"go/types"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"golang.org/x/tools/go/packages"

	"github.com/agora-etl/agora/runtime"
	"github.com/agora-etl/agora/templates"
)

// checker turns the directives of one package into a templates.Worker.
type checker struct {
	fset     *token.FileSet
	pkg      *packages.Package
	pipeline *types.Interface // runtime.Pipeline, in pkg's type universe
	ds       *Diagnostics
	// fates says what became of each schedule directive; see account.
	fates map[*directive]fate
	// deferred is set by factory when the package's compile errors, reported
	// later, explain why a factory could not be checked.
	deferred bool
}

// pipelineDecl is a checked schedule directive on its way into the model.
type pipelineDecl struct {
	templates.Pipeline
	dir   *directive
	idPos token.Position
	// afterAt is where each id of After is written, for diagnostics.
	afterAt []token.Position
	// at is the factory's "file.go:line", for diagnostics only: the
	// generated file names the file alone (Source), so that lines added
	// above a factory leave it byte-identical.
	at string
}

// want is the factory signature, as error messages spell it.
const want = "want func(context.Context) (P, error) with P implementing runtime.Pipeline"

// checkSchedules checks every schedule directive of the package and returns
// the pipelines that passed.
func (c *checker) checkSchedules(dirs []*directive) []pipelineDecl {
	var out []pipelineDecl
	byFunc := map[*ast.FuncDecl]*directive{}
	for _, d := range dirs {
		if first, dup := byFunc[d.Func]; dup {
			c.ds.Add(d.pos(c.fset, 0), "second %s%s on %s (first at line %d); a factory declares one pipeline", Namespace, ScheduleDirective, d.Func.Name.Name, c.fset.Position(first.Comment.Slash).Line)
			c.fates[d] = fateDiagnosed
			continue
		}
		byFunc[d.Func] = d
		before := c.ds.Len()
		c.deferred = false
		p, ok := c.checkSchedule(d)
		switch {
		case ok:
			out = append(out, p)
			c.fates[d] = fatePipeline
		case c.ds.Len() > before:
			c.fates[d] = fateDiagnosed
		case c.deferred:
			c.fates[d] = fateCompileError
		}
	}
	return out
}

func (c *checker) checkSchedule(d *directive) (pipelineDecl, bool) {
	ok := true
	fail := func(pos token.Position, format string, args ...any) {
		c.ds.Add(pos, format, args...)
		ok = false
	}
	before := c.ds.Len()
	vals, order := values(c.fset, d, c.ds)
	if c.ds.Len() > before {
		ok = false
	}
	fn := d.Func
	p := pipelineDecl{dir: d}
	p.Factory = fn.Name.Name
	pos := c.fset.Position(fn.Pos())
	p.Source = filepath.Base(pos.Filename)
	p.at = fmt.Sprintf("%s:%d", p.Source, pos.Line)

	var kinds []*value
	for _, v := range order {
		if v.Key.Kind {
			kinds = append(kinds, v)
		}
	}
	// A kind key that failed to parse still names a kind; count it so that
	// "every=5x" is not also reported as "no kind".
	kindWritten := len(kinds) > 0
	for _, a := range d.Args {
		if k, known := d.Def.Key(a.Key); known && k.Kind {
			kindWritten = true
		}
	}
	switch {
	case !kindWritten:
		fail(d.pos(c.fset, len(Namespace)), "%s%s needs a schedule: one of every=<duration>, cron=\"<expr>\", continuous, once", Namespace, ScheduleDirective)
	case len(kinds) > 1:
		for _, k := range kinds[1:] {
			fail(d.pos(c.fset, k.KeyOff), "two schedule kinds, %s and %s: a pipeline has exactly one", kinds[0].Key.Name, k.Key.Name)
		}
	case len(kinds) == 1:
		if s, sok := c.schedule(d, kinds[0], vals["timezone"]); sok {
			p.Schedule = s
		} else {
			ok = false
		}
	}

	p.idPos = d.pos(c.fset, len(Namespace))
	if v, has := vals["id"]; has {
		p.ID = v.Str
		p.idPos = d.pos(c.fset, v.ValueOff)
		if err := runtime.ValidatePipelineID(p.ID); err != nil {
			fail(p.idPos, "id=%s: %s", quoteIfNeeded(p.ID), runtime.PipelineIDRule)
		}
	} else if _, written := argKey(d, "id"); !written {
		p.ID = DefaultID(fn.Name.Name)
		if err := runtime.ValidatePipelineID(p.ID); err != nil {
			fail(c.fset.Position(fn.Name.Pos()), "the id derived from %s, %q, is not a valid pipeline id (%s); set one with id=", fn.Name.Name, p.ID, runtime.PipelineIDRule)
		}
	}
	p.Const = ConstName(p.ID)
	if v, has := vals["backoff"]; has {
		if v.Duration <= 0 {
			fail(d.pos(c.fset, v.ValueOff), "backoff=%s must be positive (omit it for the default %s)", v.Value, templates.ShortDuration(runtime.DefaultErrorBackoff))
		}
		p.Backoff = v.Duration
	}
	if v, has := vals["max_errors"]; has {
		if v.Int < 0 {
			fail(d.pos(c.fset, v.ValueOff), "max_errors=%d must be 0 (never stop) or more", v.Int)
		}
		p.MaxErrors = v.Int
	}
	cronOnly := func(v *value) {
		if len(kinds) == 1 && kinds[0].Key.Name != "cron" {
			fail(d.pos(c.fset, v.KeyOff), "%s applies to cron schedules only, not %s", v.Key.Name, kinds[0].Key.Name)
		}
	}
	if v, has := vals["catch_up"]; has {
		cronOnly(v)
		p.CatchUp = v.Str
		if p.CatchUp == "skip" {
			p.CatchUp = "" // the default
		}
	}
	if v, has := vals["timezone"]; has {
		cronOnly(v)
	}
	if v, has := vals["grace"]; has {
		cronOnly(v)
		if v.Duration <= 0 {
			fail(d.pos(c.fset, v.ValueOff), "grace=%s must be positive (omit it for the default %s)", v.Value, templates.ShortDuration(runtime.LateSlotGrace))
		}
		p.Grace = v.Duration
	}
	if v, has := vals["timeout"]; has {
		if v.Duration <= 0 {
			fail(d.pos(c.fset, v.ValueOff), "timeout=%s must be positive (omit it for no limit)", v.Value)
		}
		p.Timeout = v.Duration
	}
	if v, has := vals["deadline"]; has {
		// A deadline is counted from a slot's fire time; continuous and
		// once runs have none, so it would never apply.
		if len(kinds) == 1 && kinds[0].Key.Name != "cron" && kinds[0].Key.Name != "every" {
			fail(d.pos(c.fset, v.KeyOff), "deadline needs cron= or every=, not %s: it is counted from a slot's fire time", kinds[0].Key.Name)
		}
		if v.Duration <= 0 {
			fail(d.pos(c.fset, v.ValueOff), "deadline=%s must be positive (omit it for no deadline)", v.Value)
		}
		if e, ok := vals["every"]; ok && e.Duration > 0 && e.Duration < time.Second {
			// The pool refuses it too (runtime.ScheduledPipeline.Deadline):
			// runs this frequent are numbered one by one, not by a slot.
			fail(d.pos(c.fset, v.KeyOff), "deadline needs every= of at least a second, not every=%s: faster runs have no slot to judge", e.Value)
		}
		p.Deadline = v.Duration
	}
	c.checkAfterKeys(d, vals, kinds, &p)
	if v, has := vals["rerun_interrupted"]; has {
		if len(kinds) == 1 && kinds[0].Key.Name != "cron" && kinds[0].Key.Name != "every" {
			fail(d.pos(c.fset, v.KeyOff), "rerun_interrupted applies to cron and every schedules only, not %s: it re-runs a slot", kinds[0].Key.Name)
		}
		p.RerunInterrupted = true
	}
	if ref, rok := c.factory(fn); rok {
		p.Result = ref
	} else {
		ok = false
	}
	return p, ok
}

// argKey returns the argument of d called key, whether or not it parsed.
func argKey(d *directive, key string) (arg, bool) {
	for _, a := range d.Args {
		if a.Key == key {
			return a, true
		}
	}
	return arg{}, false
}

// schedule checks the value of the schedule-kind key v.
func (c *checker) schedule(d *directive, v *value, zone *value) (templates.Schedule, bool) {
	at := d.pos(c.fset, v.ValueOff)
	switch v.Key.Name {
	case "every":
		if v.Duration <= 0 {
			c.ds.Add(at, "every=%s must be positive", v.Value)
			return templates.Schedule{}, false
		}
		return templates.Schedule{Kind: templates.Every, Interval: v.Duration}, true
	case "cron":
		var s runtime.Schedule
		var err error
		if zone != nil {
			if zerr := runtime.CheckTimeZone(zone.Str); zerr != nil {
				c.ds.Add(d.pos(c.fset, zone.ValueOff), "timezone=%s: %v", quoteIfNeeded(zone.Str), zerr)
				return templates.Schedule{}, false
			}
			// The generated code carries the zone as the CRON_TZ= prefix
			// it stands for.
			s, err = runtime.CronIn(v.Str, zone.Str)
		} else {
			s, err = runtime.Cron(v.Str)
		}
		if err != nil {
			msg := strings.TrimPrefix(err.Error(), runtime.ErrInvalidSchedule.Error()+": ")
			c.ds.Add(at, "invalid %s", msg)
			return templates.Schedule{}, false
		}
		return templates.Schedule{Kind: templates.Cron, Expr: s.Expr()}, true
	case "continuous":
		return templates.Schedule{Kind: templates.Continuous}, true
	default:
		return templates.Schedule{Kind: templates.Once}, true
	}
}

// factory checks that fn is func(context.Context) (P, error) with P
// implementing runtime.Pipeline, and returns P as the templates name it.
func (c *checker) factory(fn *ast.FuncDecl) (templates.TypeRef, bool) {
	name := fn.Name.Name
	if name == "_" || name == "init" || name == "main" {
		c.ds.Add(c.fset.Position(fn.Name.Pos()), "func %s cannot be a pipeline factory: generated code cannot refer to it", name)
		return templates.TypeRef{}, false
	}
	if c.pkg.Types == nil {
		return c.uncheckable(fn, "the package did not type-check")
	}
	obj, _ := c.pkg.Types.Scope().Lookup(name).(*types.Func)
	if obj == nil {
		return c.uncheckable(fn, "it is not a package-level function of the type-checked package") // a redeclaration
	}
	sig, _ := obj.Type().(*types.Signature)
	if sig == nil || hasInvalid(sig) {
		return c.uncheckable(fn, "its signature did not type-check")
	}
	qual := func(p *types.Package) string {
		if p == c.pkg.Types {
			return ""
		}
		return p.Name()
	}
	got := types.TypeString(sig, qual)
	params, results := sig.Params(), sig.Results()
	if params.Len() != 1 || sig.Variadic() || !isContext(params.At(0).Type()) {
		c.ds.Add(c.fset.Position(fn.Type.Params.Pos()), "%s: %s, got %s", name, want, got)
		return templates.TypeRef{}, false
	}
	if results.Len() != 2 || !types.Identical(results.At(1).Type(), types.Universe.Lookup("error").Type()) {
		at := fn.Type.Params.End()
		if fn.Type.Results != nil {
			at = fn.Type.Results.Pos()
		}
		c.ds.Add(c.fset.Position(at), "%s: %s, got %s", name, want, got)
		return templates.TypeRef{}, false
	}
	p := results.At(0).Type()
	resultPos := c.fset.Position(fn.Type.Results.List[0].Type.Pos())
	iface := c.pipeline
	if iface == nil {
		// The package does not import the runtime: the parameter is the
		// context.Context of this very type universe.
		iface = PipelineInterface(params.At(0).Type())
	}
	if !types.Implements(p, iface) {
		ps := types.TypeString(p, qual)
		c.ds.Add(resultPos, "%s: %s, got %s: %s does not implement runtime.Pipeline (%s)", name, want, got, ps, missing(p, iface, qual))
		return templates.TypeRef{}, false
	}
	ref, err := typeRef(p, c.pkg.Types)
	if err != nil {
		c.ds.Add(resultPos, "%s: result type %s: %v", name, types.TypeString(p, qual), err)
		return templates.TypeRef{}, false
	}
	return ref, true
}

// uncheckable gives up on fn's signature. When the package has compile
// errors, they say why (and are reported); otherwise the factory is
// reported here, so that no directive is ever dropped without a word.
func (c *checker) uncheckable(fn *ast.FuncDecl, why string) (templates.TypeRef, bool) {
	if len(c.pkg.Errors) > 0 || len(c.pkg.TypeErrors) > 0 {
		c.deferred = true
	} else {
		c.ds.Add(c.fset.Position(fn.Name.Pos()), "%s: cannot check the factory's signature: %s", fn.Name.Name, why)
	}
	return templates.TypeRef{}, false
}

// missing says why t does not implement iface.
func missing(t types.Type, iface *types.Interface, qual types.Qualifier) string {
	m, wrongType := types.MissingMethod(t, iface, true)
	if m == nil {
		return "it cannot"
	}
	wantSig := m.Name() + strings.TrimPrefix(types.TypeString(m.Type(), qual), "func")
	switch {
	case !isPointer(t) && types.Implements(types.NewPointer(t), iface):
		return fmt.Sprintf("method %s has a pointer receiver; return *%s", m.Name(), types.TypeString(t, qual))
	case wrongType:
		return fmt.Sprintf("its method %s has the wrong signature, want %s", m.Name(), wantSig)
	default:
		return fmt.Sprintf("missing method %s", wantSig)
	}
}

func isPointer(t types.Type) bool {
	_, ok := types.Unalias(t).(*types.Pointer)
	return ok
}

// isContext reports whether t is context.Context.
func isContext(t types.Type) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Pkg() != nil && n.Obj().Pkg().Path() == "context" && n.Obj().Name() == "Context"
}

// hasInvalid reports whether the signature mentions a type that did not
// type-check: the compile error is reported instead of a guess.
func hasInvalid(sig *types.Signature) bool {
	for _, tuple := range []*types.Tuple{sig.Params(), sig.Results()} {
		for v := range tuple.Variables() {
			if invalid(v.Type()) {
				return true
			}
		}
	}
	return false
}

func invalid(t types.Type) bool {
	switch t := t.(type) {
	case *types.Basic:
		return t.Kind() == types.Invalid
	case *types.Pointer:
		return invalid(t.Elem())
	case *types.Slice:
		return invalid(t.Elem())
	case *types.Named:
		for a := range t.TypeArgs().Types() {
			if invalid(a) {
				return true
			}
		}
	}
	return false
}

// typeRef describes t so that generated code can spell it.
func typeRef(t types.Type, self *types.Package) (templates.TypeRef, error) {
	switch t := t.(type) {
	case *types.Pointer:
		elem, err := typeRef(t.Elem(), self)
		if err != nil {
			return templates.TypeRef{}, err
		}
		return templates.TypeRef{Pointer: true, Elem: &elem}, nil
	case *types.Named:
		return namedRef(t.Obj(), t.TypeArgs(), self)
	case *types.Alias:
		return namedRef(t.Obj(), t.TypeArgs(), self)
	case *types.Basic:
		return templates.TypeRef{Name: t.Name()}, nil
	}
	return templates.TypeRef{}, errors.New("it has no name that generated code can spell; declare a named type for it")
}

func namedRef(obj *types.TypeName, args *types.TypeList, self *types.Package) (templates.TypeRef, error) {
	ref := templates.TypeRef{Name: obj.Name()}
	if pkg := obj.Pkg(); pkg != nil {
		if pkg != self && !obj.Exported() {
			return templates.TypeRef{}, fmt.Errorf("%s is unexported in package %s, so generated code cannot name it", obj.Name(), pkg.Path())
		}
		if obj.Parent() != nil && obj.Parent() != pkg.Scope() {
			return templates.TypeRef{}, fmt.Errorf("%s is declared inside a function, so generated code cannot name it", obj.Name())
		}
		ref.Path, ref.PkgName = pkg.Path(), pkg.Name()
	}
	for t := range args.Types() {
		a, err := typeRef(t, self)
		if err != nil {
			return templates.TypeRef{}, err
		}
		ref.Args = append(ref.Args, a)
	}
	return ref, nil
}

// sortedKeys returns the keys of m in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
