package gen

import (
	"fmt"
	"go/token"
	"strconv"
	"time"
)

// value is one checked key of a directive.
type value struct {
	arg
	Key      Key
	Duration time.Duration
	Int      int
	Str      string
}

// values parses the arguments of d against its registry entry. Unknown and
// repeated keys, values where none belong, missing values and values that do
// not parse as the key's type are reported to ds; the keys that did parse
// are returned by name, in argument order in order.
func values(fset *token.FileSet, d *directive, ds *Diagnostics) (byName map[string]*value, order []*value) {
	byName = map[string]*value{}
	name := Namespace + d.Def.Name
	for _, a := range d.Args {
		at := d.pos(fset, a.KeyOff)
		valueAt := d.pos(fset, a.ValueOff)
		key, ok := d.Def.Key(a.Key)
		if !ok {
			ds.Add(at, "unknown key %q in %s%s", a.Key, name, didYouMean(a.Key, d.Def.KeyNames(), ""))
			continue
		}
		if _, dup := byName[a.Key]; dup {
			ds.Add(at, "%s given twice in %s", a.Key, name)
			continue
		}
		v := &value{arg: a, Key: key}
		switch {
		case key.Type == Flag && a.HasValue:
			ds.Add(at, "%s takes no value; write just %s", a.Key, a.Key)
			continue
		case key.Type != Flag && !a.HasValue:
			ds.Add(at, "%s needs a value: %s", a.Key, key.Usage())
			continue
		}
		if err := parseValue(v); err != nil {
			ds.Add(valueAt, "%s", err)
			continue
		}
		byName[a.Key] = v
		order = append(order, v)
	}
	return byName, order
}

// parseValue converts v.Value to v.Key's type.
func parseValue(v *value) error {
	switch v.Key.Type {
	case Duration:
		d, err := time.ParseDuration(v.Value)
		if err != nil {
			return fmt.Errorf("%s=%s is not a Go duration (such as 90s, 5m or 1h30m)", v.Key.Name, quoteIfNeeded(v.Value))
		}
		v.Duration = d
	case Int:
		n, err := strconv.Atoi(v.Value)
		if err != nil {
			return fmt.Errorf("%s=%s is not an integer", v.Key.Name, quoteIfNeeded(v.Value))
		}
		v.Int = n
	case Enum:
		for _, allowed := range v.Key.Values {
			if v.Value == allowed {
				v.Str = v.Value
				return nil
			}
		}
		return fmt.Errorf("%s=%s: want one of %s%s", v.Key.Name, quoteIfNeeded(v.Value), v.Key.Usage()[len(v.Key.Name)+1:], didYouMean(v.Value, v.Key.Values, ""))
	default:
		v.Str = v.Value
	}
	return nil
}

// quoteIfNeeded quotes s when it is empty or would not read back as one
// bare word.
func quoteIfNeeded(s string) string {
	if s == "" {
		return `""`
	}
	for _, r := range s {
		if r == ' ' || r == '\t' || r == '"' || r < 0x20 {
			return strconv.Quote(s)
		}
	}
	return s
}
