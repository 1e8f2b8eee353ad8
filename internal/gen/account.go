package gen

import (
	"errors"
	"fmt"
	"go/token"
	"strings"

	"github.com/agora-etl/agora/templates"
)

// ErrInternal is wrapped by errors that are agoragen's bugs rather than the
// user's (exit code 2): a check let a declaration through, or lost one.
var ErrInternal = errors.New("agoragen: internal error")

// fate is what became of one schedule directive.
type fate uint8

const (
	// fatePipeline: the directive is a pipeline of the model.
	fatePipeline fate = iota + 1
	// fateDiagnosed: checking it produced at least one diagnostic.
	fateDiagnosed
	// fateCompileError: its factory could not be checked because the
	// package does not compile; the compile errors are its diagnostics.
	fateCompileError
)

// account enforces the invariant that keeps a declared pipeline from
// vanishing: every schedule directive either becomes a pipeline in the model
// or produces at least one diagnostic, and so does every other //agora:
// comment the scanner rejected. compileErrors says whether the
// package's compile errors were reported; model is the worker about to be
// rendered, nil when there were diagnostics. A directive that broke the rule
// is an internal error, so the run fails loudly instead of writing a worker
// without it.
func account(fset *token.FileSet, s scanned, fates map[*directive]fate, compileErrors bool, model *templates.Worker) error {
	var lost []string
	for _, c := range s.silent {
		lost = append(lost, fmt.Sprintf("%s: %s", fset.Position(c.Slash), c.Text))
	}
	became := 0
	for _, d := range s.schedules {
		switch f := fates[d]; {
		case f == fatePipeline:
			became++
			continue
		case f == fateDiagnosed, f == fateCompileError && compileErrors:
			continue
		}
		lost = append(lost, fmt.Sprintf("%s: %s%s on %s", fset.Position(d.Comment.Slash), Namespace, ScheduleDirective, d.Func.Name.Name))
	}
	if model != nil && len(model.Pipelines) != became {
		lost = append(lost, fmt.Sprintf("%d directives became pipelines, but the model has %d", became, len(model.Pipelines)))
	}
	if len(lost) == 0 {
		return nil
	}
	return fmt.Errorf("%w: neither a pipeline nor a diagnostic for %s; please report this", ErrInternal, strings.Join(lost, "; "))
}
