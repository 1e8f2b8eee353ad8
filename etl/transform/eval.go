package transform

import (
	"context"
	"errors"
	"fmt"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/interpreter"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/runtime"
)

// activation binds `record` and `params`, without the map the
// cel.Program.Eval(map) form would build per call. It hands the record to
// the interpreter as the plain map[string]any it is, which CEL's field
// selection reads directly (a Go map lookup), so a record is not wrapped
// per evaluation and only the fields an expression reads are converted,
// by adapter, when they are read.
type activation struct {
	record map[string]any
	params map[string]string
}

// noParams is params outside a run with parameters: an empty map, so that
// params.day is "no such key", as for a run without that parameter.
var noParams = map[string]string{}

func (a *activation) ResolveName(name string) (any, bool) {
	switch name {
	case RecordVar:
		return a.record, true
	case ParamsVar:
		if a.params == nil {
			return noParams, true
		}
		return a.params, true
	}
	return nil, false
}

func (a *activation) Parent() interpreter.Activation { return nil }

// eval evaluates p over r, bound in act (which the caller reuses: a
// transform is applied from one goroutine at a time). An interruptible
// program stops when ctx ends, with an error wrapping ctx's cause.
func eval(ctx context.Context, p *program, act *activation, r etl.Record) (ref.Val, error) {
	act.record = r
	if p.usesParams {
		act.params = runtime.ParamsFromContext(ctx)
	}
	var out ref.Val
	var err error
	if p.interruptible {
		out, _, err = p.prg.ContextEval(ctx, act)
	} else {
		out, _, err = p.prg.Eval(act)
	}
	act.record, act.params = nil, nil
	if err != nil {
		return nil, p.evalError(err)
	}
	if types.IsError(out) {
		if e, ok := out.Value().(error); ok {
			return nil, e
		}
		return nil, errors.New(fmt.Sprint(out.Value()))
	}
	return out, nil
}
