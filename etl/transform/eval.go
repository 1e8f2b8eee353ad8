package transform

import (
	"context"
	"errors"
	"fmt"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/interpreter"

	"github.com/agora-etl/agora/etl"
)

// activation binds `record` and nothing else, without the map the
// cel.Program.Eval(map) form would build per call. It hands the record to
// the interpreter as the plain map[string]any it is, which CEL's field
// selection reads directly (a Go map lookup), so a record is not wrapped
// per evaluation and only the fields an expression reads are converted,
// by adapter, when they are read.
type activation struct{ record map[string]any }

func (a *activation) ResolveName(name string) (any, bool) {
	if name == RecordVar {
		return a.record, true
	}
	return nil, false
}

func (a *activation) Parent() interpreter.Activation { return nil }

// eval evaluates p over r, bound in act (which the caller reuses: a
// transform is applied from one goroutine at a time). An interruptible
// program stops when ctx ends, with an error wrapping ctx's cause.
func eval(ctx context.Context, p *program, act *activation, r etl.Record) (ref.Val, error) {
	act.record = r
	var out ref.Val
	var err error
	if p.interruptible {
		out, _, err = p.prg.ContextEval(ctx, act)
	} else {
		out, _, err = p.prg.Eval(act)
	}
	act.record = nil
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
