package runtime

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/agora-etl/agora/runtime/internal/engine"
)

// Run parameters are the key=value pairs an operator gives a triggered run
// ("fleet trigger ID --param day=2026-01-01"): they travel with the trigger
// to the replica that claims it, reach the run through its context, and are
// kept with the run in the history. A scheduled run has none.

// ParamsFromContext returns the parameters of the run ctx belongs to: those
// its trigger gave, or nil for a scheduled run and outside a pool. The map
// is the run's own; treat it as read-only.
func ParamsFromContext(ctx context.Context) map[string]string {
	return engine.ParamsFromContext(ctx)
}

// ContextWithParams returns a copy of ctx whose ParamsFromContext is params,
// as the context of a triggered run has; tests of pipelines can use it to
// fake a trigger, and a pipeline wrapper to hand its parts the parameters
// with defaults filled in.
func ContextWithParams(ctx context.Context, params map[string]string) context.Context {
	return engine.ContextWithParams(ctx, params)
}

// ErrBadParam is wrapped by ValidateParams' errors: a parameter name that
// is not an identifier.
var ErrBadParam = errors.New("runtime: bad run parameter")

// MaxParams and MaxParamBytes bound the parameters of one trigger: they
// are kept with the trigger and with the run in the history, which every
// reader of the fleet's state reads.
const (
	MaxParams     = 64
	MaxParamBytes = 4096
)

// ValidParamName reports whether name can name a parameter: an identifier
// ([A-Za-z_][A-Za-z0-9_]*), so that it reads the same as SQL's :param_<name>
// and CEL's params.<name>.
func ValidParamName(name string) bool {
	if name == "" {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		letter := c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// ValidateParams checks the parameters of a trigger: every name an
// identifier, at most MaxParams of them and MaxParamBytes of names and
// values together. Its error wraps ErrBadParam and names the first
// offending name.
func ValidateParams(params map[string]string) error {
	if len(params) > MaxParams {
		return fmt.Errorf("%w: %d parameters; at most %d", ErrBadParam, len(params), MaxParams)
	}
	size := 0
	for _, k := range slices.Sorted(maps.Keys(params)) {
		if !ValidParamName(k) {
			return fmt.Errorf("%w: name %q is not an identifier ([A-Za-z_][A-Za-z0-9_]*)", ErrBadParam, k)
		}
		size += len(k) + len(params[k])
	}
	if size > MaxParamBytes {
		return fmt.Errorf("%w: the parameters are %d bytes; at most %d", ErrBadParam, size, MaxParamBytes)
	}
	return nil
}

// FormatParams writes params as "k=v k2=v2", sorted by name, for logs and
// tables; "" when there are none.
func FormatParams(params map[string]string) string { return engine.FormatParams(params) }

// ParseParams reads "key=value" arguments (fleet trigger --param, one
// line of the dashboard's form each) into parameters: the key is an
// identifier given once, the value everything after the first "=", taken
// as it is. Its error wraps ErrBadParam and quotes the argument at fault.
func ParseParams(args []string) (map[string]string, error) {
	if len(args) == 0 {
		return nil, nil
	}
	out := make(map[string]string, len(args))
	first := make(map[string]string, len(args))
	for _, arg := range args {
		key, value, ok := strings.Cut(arg, "=")
		switch {
		case !ok:
			return nil, fmt.Errorf("%w: %q is not key=value", ErrBadParam, arg)
		case key == "":
			return nil, fmt.Errorf("%w: %q has an empty key", ErrBadParam, arg)
		case !ValidParamName(key):
			return nil, fmt.Errorf("%w: %q: key %q is not an identifier ([A-Za-z_][A-Za-z0-9_]*)", ErrBadParam, arg, key)
		}
		if prev, dup := first[key]; dup {
			return nil, fmt.Errorf("%w: %q: key %q is given twice (first as %q)", ErrBadParam, arg, key, prev)
		}
		first[key], out[key] = arg, value
	}
	return out, ValidateParams(out)
}
