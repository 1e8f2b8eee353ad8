package transform

import (
	"slices"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/operators"
	"cel.dev/cel-go/common/types"

	"github.com/agora-etl/agora/etl"
)

// ParamsVar is the name the run's parameters are bound to in expressions:
// a map from names to string values (runtime.ParamsFromContext; in an
// agora/v1 pipeline, its declared params with their defaults filled in),
// read as params.day or params["day"]. A name the run has no value for is
// an evaluation error, as a missing record field is.
const ParamsVar = "params"

// paramsRead returns the parameter names a checked expression reads by
// name (params.day, params["day"]), sorted and once each, and whether it
// refers to params at all.
func paramsRead(a *cel.Ast) (names []string, uses bool) {
	isParams := func(e ast.Expr) bool { return e.Kind() == ast.IdentKind && e.AsIdent() == ParamsVar }
	root := ast.NavigateAST(a.NativeRep())
	if len(ast.MatchDescendants(root, func(e ast.NavigableExpr) bool { return isParams(e) })) == 0 {
		return nil, false
	}
	for _, e := range ast.MatchDescendants(root, func(e ast.NavigableExpr) bool {
		switch e.Kind() {
		case ast.SelectKind:
			return isParams(e.AsSelect().Operand())
		case ast.CallKind:
			c := e.AsCall()
			return c.FunctionName() == operators.Index && len(c.Args()) == 2 && isParams(c.Args()[0]) &&
				c.Args()[1].Kind() == ast.LiteralKind && c.Args()[1].AsLiteral().Type() == types.StringType
		}
		return false
	}) {
		if e.Kind() == ast.SelectKind {
			names = append(names, e.AsSelect().FieldName())
		} else {
			names = append(names, string(e.AsCall().Args()[1].AsLiteral().(types.String)))
		}
	}
	slices.Sort(names)
	return slices.Compact(names), true
}

// RunParams returns the run parameters the filter's expression reads by
// name (etl.ParamReader), so an agora/v1 file can check that its pipeline
// declares them.
func (f *filter) RunParams() []etl.ParamUse {
	var out []etl.ParamUse
	for _, name := range f.prg.params {
		out = append(out, etl.ParamUse{Key: "expr", Name: name})
	}
	return out
}

// RunParams returns the run parameters the map's expressions read by name
// (etl.ParamReader), keyed by the field each expression sets.
func (m *mapper) RunParams() []etl.ParamUse {
	var out []etl.ParamUse
	for i, prg := range m.prgs {
		for _, name := range prg.params {
			out = append(out, etl.ParamUse{Key: "fields." + m.names[i], Name: name})
		}
	}
	return out
}
