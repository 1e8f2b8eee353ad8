package gen

import (
	"fmt"
	"go/token"
	"go/types"
	"os"
	"path/filepath"

	"golang.org/x/mod/modfile"
	"golang.org/x/tools/go/packages"

	"github.com/agora-etl/agora/templates"
)

// pipelineInterface returns the runtime.Pipeline interface of pkg's import
// graph, read from it at no cost, or nil when pkg does not import the
// runtime. The factory check then builds the interface from the factory's
// own context.Context parameter (PipelineInterface), which is always in the
// factory's type universe, whatever the package imports, and whether or not
// a generated file that imports the runtime exists yet. Loading the runtime
// or context for the purpose would cost more than the rest of a run (the
// runtime imports net/http), and a separate load would be another universe,
// whose context.Context no user type could implement against. Interface
// satisfaction is structural, so the answer is the same;
// TestPipelineInterfaceMatchesRuntime keeps the two declarations identical.
func pipelineInterface(pkg *packages.Package) *types.Interface {
	var runtimePkg *types.Package
	seen := map[*packages.Package]bool{}
	var visit func(p *packages.Package)
	visit = func(p *packages.Package) {
		if seen[p] || runtimePkg != nil {
			return
		}
		seen[p] = true
		if p.PkgPath == templates.RuntimePath {
			runtimePkg = p.Types
		}
		for _, imp := range p.Imports {
			visit(imp)
		}
	}
	visit(pkg)
	if runtimePkg == nil {
		return nil
	}
	if obj, ok := runtimePkg.Scope().Lookup("Pipeline").(*types.TypeName); ok {
		if iface, ok := obj.Type().Underlying().(*types.Interface); ok {
			return iface
		}
	}
	return nil
}

// PipelineInterface builds interface{ Run(ctx context.Context) error } with
// the given context.Context type: the method set of runtime.Pipeline.
func PipelineInterface(contextType types.Type) *types.Interface {
	params := types.NewTuple(types.NewParam(token.NoPos, nil, "ctx", contextType))
	results := types.NewTuple(types.NewParam(token.NoPos, nil, "", types.Universe.Lookup("error").Type()))
	run := types.NewFunc(token.NoPos, nil, "Run", types.NewSignatureType(nil, nil, nil, params, results, false))
	return types.NewInterfaceType([]*types.Func{run}, nil).Complete()
}

// requiresAgora reports an error when pkg's module cannot reach the agora
// runtime the generated code imports: the module is neither agora itself nor
// requires it in go.mod, and no go.work can supply it.
func requiresAgora(pkg *packages.Package) error {
	const agora = "github.com/agora-etl/agora"
	m := pkg.Module
	if m == nil || m.GoMod == "" || m.Path == agora {
		return nil
	}
	for _, p := range pkg.Imports {
		if p.PkgPath == templates.RuntimePath {
			return nil
		}
	}
	data, err := os.ReadFile(m.GoMod)
	if err != nil {
		return nil // go list read it; nothing better to say than it did
	}
	mf, err := modfile.ParseLax(m.GoMod, data, nil)
	if err != nil {
		return nil
	}
	for _, r := range mf.Require {
		if r.Mod.Path == agora {
			return nil
		}
	}
	if workspace(filepath.Dir(m.GoMod)) {
		return nil
	}
	return fmt.Errorf("%w: module %s does not require %s, which the generated code imports: run go get %s", ErrLoad, m.Path, agora, agora)
}

// workspace reports whether a go.work file may supply modules to dir.
func workspace(dir string) bool {
	switch gowork := os.Getenv("GOWORK"); gowork {
	case "off":
		return false
	case "":
	default:
		return true
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return true
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return false
		}
		dir = parent
	}
}
