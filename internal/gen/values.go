package gen

import (
	"fmt"
	"go/token"
	"regexp"
	"strconv"
	"strings"
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
	consumed := unquotedCron(fset, d, ds)
	for i, a := range d.Args {
		if consumed[i] {
			continue
		}
		at := d.pos(fset, a.KeyOff)
		valueAt := d.pos(fset, a.ValueOff)
		key, ok := d.Def.Key(a.Key)
		if !ok {
			ds.Add(at, "unknown key %q in %s%s; known keys: %s", a.Key, name, didYouMean(a.Key, d.Def.KeyNames(), ""), strings.Join(d.Def.KeyNames(), ", "))
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

// cronField matches one field of a cron expression written bare: digits,
// names (MON, JAN), ranges, steps, lists and the * and ? wildcards.
var cronField = regexp.MustCompile(`^[0-9A-Za-z*?/,\-]+$`)

// unquotedCron finds cron= values written without quotes, whose remaining
// fields the splitter took for keys (cron=0 * * * *), reports each once with
// the quoted form to write, and returns the indexes of the arguments that
// belong to it, which are then not reported again as unknown keys.
func unquotedCron(fset *token.FileSet, d *directive, ds *Diagnostics) map[int]bool {
	consumed := map[int]bool{}
	for i, a := range d.Args {
		if a.Key != "cron" || !a.HasValue || a.Quoted {
			continue
		}
		fields := []string{a.Value}
		j := i + 1
		for ; j < len(d.Args); j++ {
			next := d.Args[j]
			if _, known := d.Def.Key(next.Key); known || next.HasValue || !cronField.MatchString(next.Key) {
				break
			}
			fields = append(fields, next.Key)
		}
		if len(fields) == 1 {
			continue
		}
		for k := i; k < j; k++ {
			consumed[k] = true
		}
		expr := strings.Join(fields, " ")
		ds.Add(d.pos(fset, a.ValueOff), "quote the cron expression: write cron=%q (unquoted, the value ends at the first space)", expr)
	}
	return consumed
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
