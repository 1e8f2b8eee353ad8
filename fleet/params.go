package fleet

import (
	"errors"
	"strings"

	"github.com/agora-etl/agora/runtime"
)

// paramList is the repeatable --param key=value flag of trigger. Each
// argument is checked as it is given (runtime.ParseParams), so a mistake
// is a usage error (exit 2) naming the argument, and no value is ever
// changed to fit.
type paramList struct {
	args   []string
	params map[string]string
}

func (p *paramList) String() string { return runtime.FormatParams(p.params) }

// Set adds one key=value.
func (p *paramList) Set(arg string) error {
	params, err := runtime.ParseParams(append(p.args, arg))
	if err != nil {
		// The flag package names the flag already.
		return errors.New(strings.TrimPrefix(err.Error(), runtime.ErrBadParam.Error()+": "))
	}
	p.args, p.params = append(p.args, arg), params
	return nil
}
