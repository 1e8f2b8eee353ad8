package transform

import (
	"fmt"
	"strings"
	"sync"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/ext"
)

// RecordVar is the name a record is bound to in expressions.
const RecordVar = "record"

// CompileError is an expression that does not compile: Line and Col (both
// from 1, Col in characters) place the problem inside the expression.
type CompileError struct {
	// Expr is the expression as written.
	Expr string
	// Line and Col locate the problem in Expr.
	Line, Col int
	// Message says what is wrong.
	Message string
	// Err, when not nil, is the cause Message describes (a *CostError).
	Err error
}

// Error is "line:col: message" inside the expression.
func (e *CompileError) Error() string {
	return fmt.Sprintf("transform: expression %q: %d:%d: %s", e.Expr, e.Line, e.Col, e.Message)
}

// Unwrap returns Err.
func (e *CompileError) Unwrap() error { return e.Err }

// Offset returns the character offset in Expr of Line and Col, from 0.
func (e *CompileError) Offset() int {
	off := 0
	lines := strings.SplitAfter(e.Expr, "\n")
	for i := 0; i < e.Line-1 && i < len(lines); i++ {
		off += len([]rune(lines[i]))
	}
	return off + max(e.Col-1, 0)
}

var (
	envOnce sync.Once
	env     *cel.Env
	envErr  error
)

// celEnv is the one environment every expression is compiled in.
func celEnv() (*cel.Env, error) {
	envOnce.Do(func() {
		env, envErr = cel.NewEnv(
			cel.Variable(RecordVar, cel.MapType(cel.StringType, cel.DynType)),
			cel.Variable(ParamsVar, cel.MapType(cel.StringType, cel.StringType)),
			cel.CrossTypeNumericComparisons(true),
			cel.CustomTypeAdapter(adapter{}),
			ext.Strings(),
		)
	})
	return env, envErr
}

// check parses and checks one expression; want, when not nil, is the
// type its result must have (dyn is accepted: known at run time only).
func check(expr string, want *cel.Type) (*cel.Env, *cel.Ast, error) {
	e, err := celEnv()
	if err != nil {
		return nil, nil, fmt.Errorf("transform: CEL environment: %w", err)
	}
	ast, iss := e.Compile(expr)
	if iss != nil && iss.Err() != nil {
		first := iss.Errors()[0]
		return nil, nil, &CompileError{Expr: expr, Line: max(first.Location.Line(), 1), Col: first.Location.Column() + 1, Message: first.Message}
	}
	if want != nil {
		out := ast.OutputType()
		if !out.IsExactType(want) && !out.IsExactType(cel.DynType) {
			return nil, nil, &CompileError{Expr: expr, Line: 1, Col: 1, Message: fmt.Sprintf("the expression gives %s, want %s", out, want)}
		}
	}
	return e, ast, nil
}

// compile checks and plans one expression against limit, its max_cost.
func compile(expr string, want *cel.Type, limit uint64) (*program, error) {
	e, ast, err := check(expr, want)
	if err != nil {
		return nil, err
	}
	p, cerr, err := plan(e, ast, limit)
	switch {
	case cerr != nil:
		return nil, &CompileError{Expr: expr, Line: 1, Col: 1, Message: "the expression has " + cerr.detail(), Err: cerr}
	case err != nil:
		return nil, &CompileError{Expr: expr, Line: 1, Col: 1, Message: err.Error()}
	}
	return p, nil
}
