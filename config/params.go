package config

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/runtime"
)

// A pipeline's params table declares the run parameters it reads, each with
// its default:
//
//	[pipelines.daily]
//	params = { day = "2026-01-01" }
//
// A scheduled run reads the defaults; a run triggered with
// "fleet trigger daily --param day=2026-01-02" reads the trigger's value
// for each parameter it gives and the default for the others. SQL sources
// read a parameter as :param_<name>, CEL expressions as params.<name>, and
// both are checked against the table when the file is loaded: a name that
// is not declared is a diagnostic at the key that reads it, since no
// scheduled run could give it a value. A trigger that gives a parameter
// the pipeline does not declare fails the run (ErrUndeclaredParam) before
// anything is read: a trigger is not checked against the file when it is
// made (the fleet knows pipelines, not their files), and a run that
// quietly ignored a parameter would do something other than what was
// asked.

// ErrUndeclaredParam is wrapped by the error of a run triggered with a
// parameter its pipeline's params table does not declare.
var ErrUndeclaredParam = errors.New("config: the trigger gave a parameter the pipeline does not declare")

// params checks the pipeline's params table: string values under keys
// that are identifiers.
func (d *decoder) params(m map[string]any, at path) map[string]string {
	t, ok := d.table(m, at, "params")
	if !ok {
		return nil
	}
	out := make(map[string]string, len(t))
	for _, k := range slices.Sorted(maps.Keys(t)) {
		p := at.child("params").child(k)
		if !runtime.ValidParamName(k) {
			d.atKey(p, "%s: parameter name %q is not an identifier ([A-Za-z_][A-Za-z0-9_]*), so :param_%s and params.%s could not name it", p, k, k, k)
			continue
		}
		s, isStr := t[k].(string)
		if !isStr {
			d.wrongType(p, "a string (the default; a trigger's --param gives another)", t[k])
			continue
		}
		out[k] = s
	}
	return out
}

// checkParamsRead reports, at the key that reads it, each run parameter
// that cfg (a component configuration or a transform at at) reads and
// declared does not hold.
func (d *decoder) checkParamsRead(cfg any, at path, pipeline path, declared map[string]string) {
	pr, ok := cfg.(etl.ParamReader)
	if !ok {
		return
	}
	for _, use := range pr.RunParams() {
		if _, ok := declared[use.Name]; ok {
			continue
		}
		p := append(at[:len(at):len(at)], strings.Split(use.Key, ".")...)
		d.atValue(p, "%s: parameter %s is not declared: add it with a default to the pipeline, params = { %s = \"...\" } in [%s] (declared: %s)",
			p, use.Name, use.Name, pipeline, declaredList(declared))
	}
}

// declaredList names the declared parameters in a message.
func declaredList(declared map[string]string) string {
	if len(declared) == 0 {
		return "none"
	}
	return strings.Join(slices.Sorted(maps.Keys(declared)), ", ")
}

// runParams returns the parameters of the run of ctx: the pipeline's
// defaults, overridden by its trigger's values. A trigger's parameter the
// pipeline does not declare is an error wrapping ErrUndeclaredParam naming
// it and the declared ones. A pipeline that declares none and a run given
// none get nil.
func (p *Pipeline) runParams(ctx context.Context) (map[string]string, error) {
	given := runtime.ParamsFromContext(ctx)
	var unknown []string
	for k := range given {
		if _, ok := p.Params[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		slices.Sort(unknown)
		return nil, fmt.Errorf("%w: %s (declared in its params: %s)", ErrUndeclaredParam, strings.Join(unknown, ", "), declaredList(p.Params))
	}
	if len(p.Params) == 0 {
		return nil, nil
	}
	out := maps.Clone(p.Params)
	maps.Copy(out, given)
	return out, nil
}
