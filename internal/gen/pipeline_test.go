package gen

import (
	"go/types"
	"testing"

	"golang.org/x/tools/go/packages"

	"github.com/agora-etl/agora/templates"
)

// TestPipelineInterfaceMatchesRuntime keeps the interface agoragen builds
// for packages that do not import the runtime identical to runtime.Pipeline.
func TestPipelineInterfaceMatchesRuntime(t *testing.T) {
	pkgs, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedTypes | packages.NeedImports}, templates.RuntimePath)
	if err != nil || len(pkgs) != 1 || pkgs[0].Types == nil {
		t.Fatalf("load runtime: %v", err)
	}
	rt := pkgs[0]
	real := rt.Types.Scope().Lookup("Pipeline").Type().Underlying().(*types.Interface)
	ctx := rt.Imports["context"].Types.Scope().Lookup("Context").Type()
	built := PipelineInterface(ctx)
	if !types.Identical(real, built) {
		t.Fatalf("runtime.Pipeline is %s, agoragen checks against %s", real, built)
	}
	if got := pipelineInterface(rt); got == nil || !types.Identical(got, real) {
		t.Fatalf("pipelineInterface(runtime) = %v", got)
	}
}
