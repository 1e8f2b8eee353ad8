package config

import (
	"fmt"
	"strconv"
	"strings"
)

// envProblem is one reference that could not be expanded; needle is the
// text of the reference, to place the diagnostic inside the string.
type envProblem struct {
	needle string
	msg    string
}

// expand replaces ${VAR} and ${VAR:-default} in s with the environment
// variable's value, and $$ with a literal $. ${VAR:-default} gives default
// when VAR is unset or empty, as in a shell; the default is taken as
// written, without expansion. Any other $ is kept as it is, so a password
// with a $ in it needs no escaping unless a { or $ follows.
func expand(s string, lookup func(string) (string, bool)) (string, []envProblem) {
	if !strings.Contains(s, "$") {
		return s, nil
	}
	var b strings.Builder
	var problems []envProblem
	for i := 0; i < len(s); {
		c := s[i]
		if c != '$' || i+1 == len(s) {
			b.WriteByte(c)
			i++
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i += 2
			continue
		case '{':
		default:
			b.WriteByte(c)
			i++
			continue
		}
		end := strings.IndexByte(s[i:], '}')
		if end < 0 {
			problems = append(problems, envProblem{needle: s[i:], msg: fmt.Sprintf("unterminated %q: write ${VAR} or ${VAR:-default}, or $$ for a literal $", s[i:])})
			break
		}
		ref := s[i+2 : i+end]
		name, def, hasDef := strings.Cut(ref, ":-")
		switch {
		case !validEnvName(name):
			problems = append(problems, envProblem{needle: s[i : i+end+1], msg: fmt.Sprintf("%q is not a valid environment variable reference: write ${VAR} or ${VAR:-default} with VAR of letters, digits and _", s[i:i+end+1])})
		default:
			v, ok := lookup(name)
			switch {
			case ok && (v != "" || !hasDef):
				b.WriteString(v)
			case hasDef:
				b.WriteString(def)
			default:
				problems = append(problems, envProblem{needle: s[i : i+end+1], msg: fmt.Sprintf("environment variable %s is not set (write ${%s:-default} to give a default)", name, name)})
			}
		}
		i += end + 1
	}
	return b.String(), problems
}

// validEnvName reports whether name is a portable environment variable name.
func validEnvName(name string) bool {
	if name == "" || name[0] >= '0' && name[0] <= '9' {
		return false
	}
	for _, c := range name {
		if !(c == '_' || c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// interpolate expands every string of the decoded document in place and
// reports references that cannot be expanded at the reference itself.
// at's backing array is reused for the paths below it, which are only
// used while their value is checked.
func (d *decoder) interpolate(v any, at path) any {
	switch v := v.(type) {
	case string:
		out, problems := expand(v, d.lookupEnv)
		for _, p := range problems {
			d.addAt(d.ix.within(at, p.needle), "%s: %s", at, p.msg)
		}
		if len(problems) > 0 {
			// Whatever later checks say about a value that could not be
			// expanded would only repeat this problem.
			d.broken[at.id()] = true
		} else if out != v || strings.Contains(v, "${") {
			if d.fromEnv == nil {
				d.fromEnv = map[string]envValue{}
			}
			d.fromEnv[at.id()] = envValue{raw: v, value: out}
		}
		return out
	case map[string]any:
		for k, el := range v {
			if s, isStr := el.(string); isStr && !strings.Contains(s, "$") {
				continue // nothing to expand
			}
			v[k] = d.interpolate(el, append(at, k))
		}
	case []any:
		for i, el := range v {
			v[i] = d.interpolate(el, append(at, indexMark+strconv.Itoa(i)))
		}
	case []map[string]any:
		for i, el := range v {
			d.interpolate(el, append(at, indexMark+strconv.Itoa(i)))
		}
	}
	return v
}
