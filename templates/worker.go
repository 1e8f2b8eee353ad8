package templates

import (
	"bytes"
	"errors"
	"fmt"
	"go/format"
	"sort"
	"strings"
	"time"

	"github.com/dave/jennifer/jen"
)

// ErrInvalidModel is wrapped by Render's errors about a model the checks
// should never have let through.
var ErrInvalidModel = errors.New("templates: invalid model")

// Render returns the gofmt'd source of the generated file for w. The same
// model always gives the same bytes: pipelines are sorted by ID and nothing
// depends on time, paths or the environment.
func Render(w Worker) ([]byte, error) {
	if err := validate(w); err != nil {
		return nil, err
	}
	pipelines := append([]Pipeline(nil), w.Pipelines...)
	sort.Slice(pipelines, func(i, j int) bool { return pipelines[i].ID < pipelines[j].ID })

	f := jen.NewFilePathName(w.PackagePath, w.PackageName)
	f.HeaderComment(Header)
	imp := newImports(f, w)

	if len(pipelines) > 0 {
		f.Comment("Pipeline ids declared in this package, one per //agora:schedule.")
		f.Const().DefsFunc(func(g *jen.Group) {
			for _, p := range pipelines {
				g.Comment(fmt.Sprintf("%s runs %s (%s) %s.", p.Const, p.Factory, p.Source, describe(p.Schedule)))
				g.Id(p.Const).Op("=").Lit(p.ID)
			}
		})
		f.Line()
		f.Comment("Each guard stops the build when its factory's signature no longer matches")
		f.Comment("the one agoragen saw.")
		f.Var().DefsFunc(func(g *jen.Group) {
			for _, p := range pipelines {
				g.Id("_").Func().Params(imp.qual("context", "Context")).
					Params(imp.typeRef(p.Result), jen.Error()).
					Op("=").Id(p.Factory).
					Comment(p.Source + ": signature changed? re-run go generate")
			}
		})
		f.Line()
	}

	f.Comment("GetWorker returns a worker pool that runs every pipeline declared in this")
	f.Comment("package, with the settings of its //agora:worker directive.")
	f.Comment(distributedDoc(w.Distributed))
	f.Func().Id("GetWorker").Params().
		Params(jen.Op("*").Add(imp.qual(RuntimePath, "WorkerPool")), jen.Error()).
		BlockFunc(func(g *jen.Group) { getWorkerBody(g, imp, w, pipelines) })

	if w.Main {
		f.Line()
		f.Comment("main runs the worker until it is interrupted; see package worker for its")
		f.Comment("flags, commands and exit codes.")
		f.Func().Id("main").Params().Block(
			imp.qual(WorkerPath, "Main").Call(jen.Id("GetWorker")),
		)
	}

	// One gofmt pass, after the imports are grouped, rather than one by
	// jennifer and another after grouping: formatting dominates rendering.
	f.NoFormat = true
	var buf bytes.Buffer
	if err := f.Render(&buf); err != nil {
		return nil, fmt.Errorf("templates: render %s: %w", w.PackageName, err)
	}
	out, err := groupImports(buf.Bytes())
	if err != nil {
		return nil, fmt.Errorf("templates: render %s: %w", w.PackageName, err)
	}
	return out, nil
}

// groupImports puts standard library imports in a group of their own above
// the others, as goimports would; jennifer writes one sorted block.
func groupImports(src []byte) ([]byte, error) {
	const open, closing = "\nimport (\n", "\n)\n"
	start := bytes.Index(src, []byte(open))
	if start < 0 {
		return format.Source(src)
	}
	bodyStart := start + len(open)
	end := bytes.Index(src[bodyStart:], []byte(closing))
	if end < 0 {
		return format.Source(src)
	}
	var std, other []string
	for _, line := range strings.Split(string(src[bodyStart:bodyStart+end]), "\n") {
		path := line[strings.IndexByte(line, '"')+1:]
		if first, _, _ := strings.Cut(path, "/"); strings.Contains(first, ".") {
			other = append(other, line)
		} else {
			std = append(std, line)
		}
	}
	var out bytes.Buffer
	out.Write(src[:bodyStart])
	out.WriteString(strings.Join(std, "\n"))
	if len(std) > 0 && len(other) > 0 {
		out.WriteString("\n\n")
	}
	out.WriteString(strings.Join(other, "\n"))
	out.Write(src[bodyStart+end:])
	return format.Source(out.Bytes())
}

func distributedDoc(d Distributed) string {
	switch d {
	case DistributedRequired:
		return "It fails unless AGORA_DISTRIBUTED_REDIS_URL names the Redis that replicas share leases through."
	case DistributedOff:
		return "It never shares leases: each replica runs every pipeline."
	default:
		return "When AGORA_DISTRIBUTED_REDIS_URL is set, replicas share leases through that Redis."
	}
}

func getWorkerBody(g *jen.Group, imp *imports, w Worker, pipelines []Pipeline) {
	rt := func(name string) *jen.Statement { return imp.qual(RuntimePath, name) }
	var opts []jen.Code
	if w.HasHealthPort {
		opts = append(opts, rt("WithHealthPort").Call(jen.Lit(w.HealthPort)))
	}
	if w.GracefulShutdown > 0 {
		opts = append(opts, rt("WithGracefulShutdownTimeout").Call(imp.duration(w.GracefulShutdown)))
	}
	if w.Distributed != DistributedOff {
		distributedWiring(g, imp, w.Distributed)
		opts = append(opts, jen.Id("coordinator"))
	}
	newPool := g.Id("pool").Op(":=").Add(rt("NewWorkerPool"))
	if len(opts) > 1 {
		newPool.CallFunc(multiline(opts))
	} else {
		newPool.Call(opts...)
	}
	for _, p := range pipelines {
		fields := []jen.Code{
			field("PipelineID", jen.Id(p.Const)),
			field("Factory", rt("FactoryOf").Call(jen.Id(p.Factory))),
			field("Schedule", imp.schedule(p.Schedule)),
		}
		if p.Backoff > 0 {
			fields = append(fields, field("ErrorBackoff", imp.duration(p.Backoff)))
		}
		if p.MaxErrors > 0 {
			fields = append(fields, field("MaxConsecutiveErrors", jen.Lit(p.MaxErrors)))
		}
		switch p.CatchUp {
		case "latest":
			fields = append(fields, field("CatchUp", rt("CatchUpLatest")))
		case "all":
			fields = append(fields, field("CatchUp", rt("CatchUpAll")))
		}
		if p.Grace > 0 {
			fields = append(fields, field("Grace", imp.duration(p.Grace)))
		}
		if p.Timeout > 0 {
			fields = append(fields, field("Timeout", imp.duration(p.Timeout)))
		}
		if p.Deadline > 0 {
			fields = append(fields, field("Deadline", imp.duration(p.Deadline)))
		}
		if p.RerunInterrupted {
			fields = append(fields, field("RerunInterrupted", jen.True()))
		}
		if len(p.After) > 0 {
			ids := make([]jen.Code, len(p.After))
			for i, id := range p.After {
				ids[i] = jen.Lit(id)
			}
			fields = append(fields, field("After", jen.Index().String().Values(ids...)))
		}
		if p.AfterTimeout > 0 {
			fields = append(fields, field("AfterTimeout", imp.duration(p.AfterTimeout)))
		}
		fields = append(fields, jen.Line())
		g.Id("pool").Dot("Register").Call(jen.Op("&").Add(rt("ScheduledPipeline")).Values(fields...))
	}
	g.Return(jen.Id("pool"), jen.Nil())
}

// field is one "Name: value" line of a composite literal; a slice of them
// keeps the order a reader expects, which jen.Dict (sorted) would not.
func field(name string, value jen.Code) jen.Code {
	return jen.Line().Id(name).Op(":").Add(value)
}

func multiline(items []jen.Code) func(*jen.Group) {
	return func(g *jen.Group) {
		for _, it := range items {
			g.Line().Add(it)
		}
		if len(items) > 0 {
			g.Line()
		}
	}
}

// distributedWiring reads the coordinator from the environment. Its errors
// already name the variable and carry the distributed package's prefix, so
// they are returned as they are: one prefix per message.
func distributedWiring(g *jen.Group, imp *imports, mode Distributed) {
	modeName := map[Distributed]string{DistributedAuto: "ModeAuto", DistributedRequired: "ModeRequired"}[mode]
	g.List(jen.Id("coordinator"), jen.Err()).Op(":=").
		Add(imp.qual(DistributedPath, "CoordinatorFromEnv")).Call(imp.qual(DistributedPath, modeName))
	g.If(jen.Err().Op("!=").Nil()).Block(jen.Return(jen.Nil(), jen.Err()))
}

func describe(s Schedule) string {
	switch s.Kind {
	case Every:
		return "every " + ShortDuration(s.Interval)
	case Cron:
		return fmt.Sprintf("on cron %q", s.Expr)
	case Continuous:
		return "continuously"
	case Once:
		return "once"
	}
	return ""
}

func validate(w Worker) error {
	if w.PackageName == "" || w.PackagePath == "" {
		return fmt.Errorf("%w: package name and path are required", ErrInvalidModel)
	}
	seen := map[string]bool{}
	for _, p := range w.Pipelines {
		switch {
		case p.ID == "" || p.Const == "" || p.Factory == "":
			return fmt.Errorf("%w: pipeline %q lacks an id, constant or factory", ErrInvalidModel, p.ID)
		case seen[p.ID]:
			return fmt.Errorf("%w: duplicate pipeline id %q", ErrInvalidModel, p.ID)
		case p.Schedule.Kind == Every && p.Schedule.Interval <= 0:
			return fmt.Errorf("%w: pipeline %q: every needs a positive interval", ErrInvalidModel, p.ID)
		case p.Schedule.Kind == Cron && strings.TrimSpace(p.Schedule.Expr) == "":
			return fmt.Errorf("%w: pipeline %q: empty cron expression", ErrInvalidModel, p.ID)
		case p.Schedule.Kind < Every || p.Schedule.Kind > Once:
			return fmt.Errorf("%w: pipeline %q has no schedule", ErrInvalidModel, p.ID)
		case p.Result.Name == "" && !p.Result.Pointer:
			return fmt.Errorf("%w: pipeline %q has no result type", ErrInvalidModel, p.ID)
		}
		seen[p.ID] = true
	}
	return nil
}

// imports hands out qualified names, renaming a standard or agora import
// whose name a package-scope identifier already takes.
type imports struct {
	f     *jen.File
	taken map[string]bool
}

func newImports(f *jen.File, w Worker) *imports {
	imp := &imports{f: f, taken: map[string]bool{}}
	for _, t := range w.Taken {
		imp.taken[t] = true
	}
	for path, name := range map[string]string{
		"context": "context", "errors": "errors", "fmt": "fmt", "time": "time",
		RuntimePath: "runtime", DistributedPath: "distributed", WorkerPath: "worker",
	} {
		imp.name(path, name)
	}
	return imp
}

// name declares the package name of path, or a stable alias when the user's
// package already declares that identifier.
func (imp *imports) name(path, name string) {
	if !imp.taken[name] {
		imp.f.ImportName(path, name)
		return
	}
	alias := "agora" + name
	for i := 2; imp.taken[alias]; i++ {
		alias = fmt.Sprintf("agora%s%d", name, i)
	}
	imp.f.ImportAlias(path, alias)
}

func (imp *imports) qual(path, name string) *jen.Statement { return jen.Qual(path, name) }

func (imp *imports) typeRef(t TypeRef) *jen.Statement {
	if t.Pointer {
		if t.Elem == nil {
			return jen.Op("*").Id("invalid")
		}
		return jen.Op("*").Add(imp.typeRef(*t.Elem))
	}
	var s *jen.Statement
	if t.Path == "" {
		s = jen.Id(t.Name)
	} else {
		if t.PkgName != "" {
			imp.name(t.Path, t.PkgName)
		}
		s = jen.Qual(t.Path, t.Name)
	}
	if len(t.Args) > 0 {
		s = s.IndexFunc(func(g *jen.Group) {
			for _, a := range t.Args {
				g.Add(imp.typeRef(a))
			}
		})
	}
	return s
}

func (imp *imports) schedule(s Schedule) *jen.Statement {
	rt := func(name string) *jen.Statement { return imp.qual(RuntimePath, name) }
	switch s.Kind {
	case Every:
		return rt("Every").Call(imp.duration(s.Interval))
	case Cron:
		return rt("MustCron").Call(jen.Lit(s.Expr))
	case Continuous:
		return rt("Continuous").Call()
	default:
		return rt("Once").Call()
	}
}

// duration writes d as a multiple of the largest unit that divides it, the
// way a person would: 90 * time.Second is 90s, not 1m30s spelled as
// nanoseconds.
func (imp *imports) duration(d time.Duration) *jen.Statement {
	units := []struct {
		name string
		d    time.Duration
	}{
		{"Hour", time.Hour}, {"Minute", time.Minute}, {"Second", time.Second},
		{"Millisecond", time.Millisecond}, {"Microsecond", time.Microsecond}, {"Nanosecond", time.Nanosecond},
	}
	for _, u := range units {
		if d%u.d == 0 {
			n := int64(d / u.d)
			if n == 1 {
				return imp.qual("time", u.name)
			}
			return jen.Lit(int(n)).Op("*").Add(imp.qual("time", u.name))
		}
	}
	return jen.Lit(int64(d))
}

// ShortDuration writes d without zero units, 1m rather than 1m0s, as the
// generated comments and agoragen's messages spell durations.
func ShortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}
