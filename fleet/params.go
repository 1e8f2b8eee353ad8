package fleet

import (
	"fmt"
	"strings"

	"github.com/agora-etl/agora/runtime"
)

// paramList is the repeatable --param key=value flag of trigger. Each
// argument is checked as it is given, so a mistake is a usage error (exit
// 2) naming the argument, and no value is ever changed to fit.
type paramList map[string]string

func (p *paramList) String() string { return runtime.FormatParams(*p) }

// Set adds one key=value: the key an identifier ([A-Za-z_][A-Za-z0-9_]*,
// so SQL's :param_<key> and CEL's params.<key> can name it) not given
// before; the value is everything after the first "=", taken as it is.
func (p *paramList) Set(arg string) error {
	key, value, ok := strings.Cut(arg, "=")
	switch {
	case !ok:
		return fmt.Errorf("%q is not key=value", arg)
	case key == "":
		return fmt.Errorf("%q has an empty key", arg)
	case !runtime.ValidParamName(key):
		return fmt.Errorf("%q: key %q is not an identifier ([A-Za-z_][A-Za-z0-9_]*)", arg, key)
	}
	if prev, dup := (*p)[key]; dup {
		return fmt.Errorf("%q: key %q is given twice (first as %q)", arg, key, key+"="+prev)
	}
	if *p == nil {
		*p = paramList{}
	}
	(*p)[key] = value
	return nil
}
