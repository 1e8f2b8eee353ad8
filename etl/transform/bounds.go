package transform

import (
	"errors"
	"fmt"
	"math"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/cost"
	"cel.dev/cel-go/interpreter"
)

// DefaultMaxCost is the cost limit of an evaluation when WithMaxCost is
// not given: a million of CEL's cost units (about one per operation, a
// list or string costing in proportion to its size), a fraction of a
// second of CPU. Expressions over fields and lists of a record's size stay
// far below it; nested comprehensions over tens of elements each, whose
// cost multiplies with every level, do not.
const DefaultMaxCost uint64 = 1_000_000

// ErrMaxCost is the error of an evaluation whose cost went over the
// transform's max_cost, and of an expression whose cost is known, before
// any record is read, to go over it (a *CostError).
var ErrMaxCost = errors.New("transform: the expression's cost is over max_cost")

// Option configures Filter and Map.
type Option func(*options)

type options struct {
	maxCost uint64
}

// WithMaxCost sets the most one evaluation of the transform may cost on
// one record, in CEL's cost units: a filter's expression, or a map's
// expressions together. An evaluation that goes over stops and the record
// fails (dead-lettered) with ErrMaxCost; an expression whose cost is over
// for every record, or whose bounded estimate is over, does not compile
// (a *CostError). Zero is an error.
func WithMaxCost(n uint64) Option { return func(o *options) { o.maxCost = n } }

func newOptions(opts []Option) (options, error) {
	o := options{maxCost: DefaultMaxCost}
	for _, opt := range opts {
		opt(&o)
	}
	if o.maxCost == 0 {
		return o, errors.New("transform: max_cost is 0: want a positive number of cost units")
	}
	return o, nil
}

// CostError is an expression whose cost, estimated from the expression
// alone, is over its max_cost: at least Min for every record, or up to
// Max, a bound that does not depend on the record.
type CostError struct {
	// Fields are the map fields whose expressions together are over, or
	// nil for one expression.
	Fields []string
	// Min and Max are CEL's estimate of an evaluation's cost.
	Min, Max uint64
	// Limit is the max_cost.
	Limit uint64
}

// Error says the estimate and the limit.
func (e *CostError) Error() string {
	if e.Fields != nil {
		return fmt.Sprintf("transform: the expressions of %v together have %s", e.Fields, e.detail())
	}
	return "transform: the expression has " + e.detail()
}

func (e *CostError) detail() string {
	if e.Min > e.Limit {
		return fmt.Sprintf("a cost of at least %d per record, over max_cost %d: simplify or raise max_cost", e.Min, e.Limit)
	}
	return fmt.Sprintf("a cost of up to %d per record, over max_cost %d: simplify or raise max_cost", e.Max, e.Limit)
}

// Unwrap returns ErrMaxCost.
func (e *CostError) Unwrap() error { return ErrMaxCost }

// interruptCheckFrequency is how many comprehension iterations pass
// between two looks at the run's context: a look is a channel poll, and a
// hundred iterations take microseconds.
const interruptCheckFrequency = 100

// program is a planned expression.
type program struct {
	prg cel.Program
	// limit is the max_cost, enforced by cel-go's cost tracking, or 0
	// when the expression's estimated cost is bounded within it: tracking
	// costs time on every operation and would never stop it.
	limit uint64
	// interruptible: the expression has a comprehension, the only
	// construct whose running time is not bounded by the record's size,
	// and is evaluated with the run's context so that the run's end
	// stops it; any other expression needs no frame bound to a context.
	interruptible bool
	// usesParams: the expression refers to params, which eval then binds
	// from the context (a lookup no other expression pays for); params
	// are the names it reads.
	usesParams bool
	params     []string
}

// unbounded is CEL's estimate of a cost that depends on sizes it cannot
// know (a record's strings, lists and maps).
const unbounded = math.MaxUint64

// plan estimates a checked expression's cost against limit and builds its
// program. A *CostError is an expression always over, or bounded over.
func plan(e *cel.Env, a *cel.Ast, limit uint64) (*program, *CostError, error) {
	est, err := e.EstimateCost(a, unknownSizes{})
	if err != nil {
		return nil, nil, err
	}
	if est.Min > limit || (est.Max != unbounded && est.Max > limit) {
		return nil, &CostError{Min: est.Min, Max: est.Max, Limit: limit}, nil
	}
	p := &program{interruptible: hasComprehension(a)}
	p.params, p.usesParams = paramsRead(a)
	popts := []cel.ProgramOption{cel.EvalOptions(cel.OptOptimize)}
	if tracked(e, a, est, limit, p.interruptible) {
		p.limit = limit
		popts = append(popts, cel.CostLimit(limit))
	}
	if p.interruptible {
		popts = append(popts, cel.InterruptCheckFrequency(interruptCheckFrequency))
	}
	if p.prg, err = e.Program(a, popts...); err != nil {
		return nil, nil, err
	}
	return p, nil, nil
}

// untrackedSize is the size of a record's values (characters of a
// string, elements of a list) up to which an expression without a
// comprehension must stay within its limit to run without cost tracking.
const untrackedSize = 1 << 20

// tracked reports whether an expression's evaluations are to be tracked
// against limit: when its cost may go over. Tracking is a hook on every
// operation (a filter and a map of two fields cost half as much again
// with it), so an expression that cannot go over is not tracked: one
// whose cost is bounded within the limit whatever the record, and one
// without a comprehension that stays within it for values of up to
// untrackedSize elements. Without a comprehension an expression's cost
// grows with the size of the values it reads, not with its nesting, so
// one within the limit at a million characters goes over only for
// records larger than that, and only by as much as they are larger;
// an expression that multiplies sizes (s.replace(”, s)) is over at that
// size, and tracked.
func tracked(e *cel.Env, a *cel.Ast, est cost.Estimate, limit uint64, comprehension bool) bool {
	if est.Max <= limit {
		return false
	}
	if comprehension {
		return true
	}
	capped, err := e.EstimateCost(a, sizesUpTo(untrackedSize))
	return err != nil || capped.Max > limit
}

// hasComprehension reports whether a has a comprehension (all, exists,
// map, filter, ...).
func hasComprehension(a *cel.Ast) bool {
	return len(ast.MatchDescendants(ast.NavigateAST(a.NativeRep()), ast.KindMatcher(ast.ComprehensionKind))) > 0
}

// unknownSizes is the cost estimator of expressions over records: the
// sizes of a record's values are not known before it is read.
type unknownSizes struct{}

func (unknownSizes) EstimateSize(cost.AstNode) *cost.SizeEstimate { return nil }

func (unknownSizes) EstimateCallCost(string, string, *cost.AstNode, []cost.AstNode) *cost.CallEstimate {
	return nil
}

// sizesUpTo is the cost estimator of expressions over records whose
// values have up to that many elements.
type sizesUpTo uint64

func (n sizesUpTo) EstimateSize(cost.AstNode) *cost.SizeEstimate {
	return &cost.SizeEstimate{Min: 0, Max: uint64(n)}
}

func (sizesUpTo) EstimateCallCost(string, string, *cost.AstNode, []cost.AstNode) *cost.CallEstimate {
	return nil
}

// evalError is err, an evaluation's error, with a cost limit's stop said
// in agora's terms.
func (p *program) evalError(err error) error {
	var ce interpreter.EvalCancelledError
	if errors.As(err, &ce) && ce.Cause == interpreter.CostLimitExceeded {
		return fmt.Errorf("%w (%d): the evaluation was stopped; simplify the expression or raise max_cost", ErrMaxCost, p.limit)
	}
	return err
}
