package cli

import (
	"fmt"
	"strings"
)

// ownFlags separates the flags a command defines itself (such as --config)
// from the rest, which go unchanged to the worker (worker.RunMain parses
// them, so a worker run by agora takes exactly the flags of a generated
// worker binary). Flags may be written -name or --name, with the value
// after '=' or as the next argument. Repeated flags collect every value.
type ownFlags struct {
	values map[string][]string
	help   bool
	rest   []string
}

// splitFlags takes the flags named in own out of args.
func splitFlags(args []string, own ...string) (ownFlags, error) {
	out := ownFlags{values: map[string][]string{}}
	known := map[string]bool{}
	for _, name := range own {
		known[name] = true
	}
	for i := 0; i < len(args); i++ {
		arg := args[i]
		if arg == "--" {
			out.rest = append(out.rest, args[i:]...)
			break
		}
		if !strings.HasPrefix(arg, "-") {
			out.rest = append(out.rest, arg)
			continue
		}
		name := strings.TrimLeft(arg, "-")
		value, hasValue := "", false
		if k := strings.IndexByte(name, '='); k >= 0 {
			name, value, hasValue = name[:k], name[k+1:], true
		}
		switch {
		case name == "h" || name == "help":
			out.help = true
		case known[name]:
			if !hasValue {
				if i+1 >= len(args) {
					return out, fmt.Errorf("flag --%s needs a value", name)
				}
				i++
				value = args[i]
			}
			out.values[name] = append(out.values[name], value)
		default:
			out.rest = append(out.rest, arg)
		}
	}
	return out, nil
}

// one returns the flag's single value, "" when it was not given.
func (f ownFlags) one(name string) (string, error) {
	v := f.values[name]
	switch len(v) {
	case 0:
		return "", nil
	case 1:
		return v[0], nil
	}
	return "", fmt.Errorf("flag --%s given %d times; give it once", name, len(v))
}
