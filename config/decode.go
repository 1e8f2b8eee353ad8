package config

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/agora-etl/agora/etl"
	"github.com/agora-etl/agora/internal/redact"
	"github.com/agora-etl/agora/internal/typo"
	"github.com/pelletier/go-toml/v2"
)

// decoder checks one decoded document against the agora/v1 schema,
// collecting a diagnostic per problem instead of stopping at the first.
type decoder struct {
	file      string
	dir       string // the file's directory, absolute: relative paths start here
	ix        *index
	lookupEnv func(string) (string, bool)
	registry  *etl.Registry
	diags     Diagnostics
	broken    map[string]bool   // values already reported, by path id
	known     *redact.Known     // the file's secrets, hidden in every message
	texts     map[string]string // redacted strings, by value
	crons     map[cronKey]cronParsed
	fromEnv   map[string]envValue // strings expanded from ${VAR}, by path id
}

// addAt records a problem at pos. Messages hide the file's secrets, since
// they may quote values, and escape control characters (escapeControl).
func (d *decoder) addAt(pos position, format string, args ...any) {
	d.diags = append(d.diags, Diagnostic{File: d.file, Line: pos.line, Col: pos.col, Message: escapeControl(d.known.Text(fmt.Sprintf(format, args...)))})
}

// atKey records a problem about the key at p.
func (d *decoder) atKey(p path, format string, args ...any) {
	if !d.broken[p.id()] {
		d.addAt(d.ix.keyPos(p), format, args...)
	}
}

// atValue records a problem about the value at p. When that value came
// from ${VAR}, the message names the reference instead of quoting the
// value (envReferences); messages where the value is the point show it
// with quoted.
func (d *decoder) atValue(p path, format string, args ...any) {
	if !d.broken[p.id()] {
		d.addAt(d.ix.valuePos(p), "%s", d.envReferences(p, fmt.Sprintf(format, args...)))
	}
}

// knownKeys reports every key of table m (at p) that is not in allowed,
// with the closest allowed key when one is near, or the list of them.
func (d *decoder) knownKeys(m map[string]any, p path, allowed []string) {
	for k := range m {
		if !slices.Contains(allowed, k) {
			d.unknownKey(p, k, allowed)
		}
	}
}

func (d *decoder) unknownKey(p path, k string, allowed []string) {
	where := p.String()
	if where == "" {
		where = "top level"
	}
	d.atKey(p.child(k), "%s: unknown key %q%s", where, k, hint(k, allowed, "keys"))
}

// hint is " (did you mean "x"?)" when word is a likely typo of one of
// candidates, or else "; known <what>: a, b, c".
func hint(word string, candidates []string, what string) string {
	if s := typo.Closest(word, candidates); s != "" {
		return fmt.Sprintf(" (did you mean %q?)", s)
	}
	if len(candidates) == 0 {
		return fmt.Sprintf("; no %s are known", what)
	}
	sorted := slices.Sorted(slices.Values(candidates))
	return fmt.Sprintf("; known %s: %s", what, strings.Join(sorted, ", "))
}

// tomlType names the TOML type of a decoded value, with an article.
func tomlType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case map[string]any:
		return "a table"
	case []any, []map[string]any:
		return "an array"
	case time.Time:
		return "a date-time"
	case toml.LocalDate:
		return "a local date"
	case toml.LocalTime:
		return "a local time"
	case toml.LocalDateTime:
		return "a local date-time"
	default:
		return fmt.Sprintf("a %T", v)
	}
}

// wrongType records that the value at p is not of the type wanted.
func (d *decoder) wrongType(p path, want string, v any) {
	note := ""
	if _, isStr := v.(string); isStr && want != "a string" && d.ix.raw(p, "${") {
		note = " (${VAR} is expanded inside strings only, and the value stays a string)"
	}
	d.atValue(p, "%s: want %s, got %s%s", p, want, tomlType(v), note)
}

// str returns m[key] as a string; ok is false when it is absent or of
// another type (reported).
func (d *decoder) str(m map[string]any, p path, key string) (s string, ok bool) {
	v, has := m[key]
	if !has {
		return "", false
	}
	if s, ok = v.(string); !ok {
		d.wrongType(p.child(key), "a string", v)
	}
	return s, ok
}

// integer returns m[key] as an int between lo and hi.
func (d *decoder) integer(m map[string]any, p path, key string, lo, hi int64) (n int, ok bool) {
	v, has := m[key]
	if !has {
		return 0, false
	}
	i, isInt := v.(int64)
	if !isInt {
		d.wrongType(p.child(key), "an integer", v)
		return 0, false
	}
	if i < lo || i > hi {
		if hi == math.MaxInt {
			d.atValue(p.child(key), "%s: %d is out of range: want at least %d", p.child(key), i, lo)
		} else {
			d.atValue(p.child(key), "%s: %d is out of range: want %d to %d", p.child(key), i, lo, hi)
		}
		return 0, false
	}
	return int(i), true
}

// boolean returns m[key] as a bool.
func (d *decoder) boolean(m map[string]any, p path, key string) (b bool, ok bool) {
	v, has := m[key]
	if !has {
		return false, false
	}
	if b, ok = v.(bool); !ok {
		d.wrongType(p.child(key), "a boolean", v)
	}
	return b, ok
}

// duration returns m[key], a Go duration string ("90s", "1h30m") or a
// number of seconds, which must be positive, or at least zero when zeroOK.
func (d *decoder) duration(m map[string]any, p path, key string, zeroOK bool) (time.Duration, bool) {
	v, has := m[key]
	if !has {
		return 0, false
	}
	at := p.child(key)
	var dur time.Duration
	switch v := v.(type) {
	case string:
		parsed, err := time.ParseDuration(strings.TrimSpace(v))
		if err != nil {
			d.atValue(at, "%s: %s is not a duration: write a Go duration such as \"90s\" or \"1h30m\", or a number of seconds", at, d.quoted(at, v))
			return 0, false
		}
		dur = parsed
	case int64:
		if v > math.MaxInt64/int64(time.Second) || v < math.MinInt64/int64(time.Second) {
			d.atValue(at, "%s: %d seconds is too long", at, v)
			return 0, false
		}
		dur = time.Duration(v) * time.Second
	case float64:
		if math.IsNaN(v) || math.Abs(v) > float64(math.MaxInt64)/float64(time.Second) {
			d.atValue(at, "%s: %v seconds is not a usable duration", at, v)
			return 0, false
		}
		dur = time.Duration(v * float64(time.Second))
	default:
		d.wrongType(at, "a duration (a string such as \"90s\" or a number of seconds)", v)
		return 0, false
	}
	if dur < 0 || dur == 0 && !zeroOK {
		want := "positive"
		if zeroOK {
			want = "zero or more"
		}
		d.atValue(at, "%s: %s must be %s", at, dur, want)
		return 0, false
	}
	return dur, true
}

// table returns m[key] as a table; ok is false when it is absent or not a
// table (reported).
func (d *decoder) table(m map[string]any, p path, key string) (t map[string]any, ok bool) {
	v, has := m[key]
	if !has {
		return nil, false
	}
	if t, ok = v.(map[string]any); !ok {
		d.wrongType(p.child(key), "a table", v)
	}
	return t, ok
}

// tables returns m[key] as an array of tables, reporting elements that are
// not tables.
func (d *decoder) tables(m map[string]any, p path, key string) ([]map[string]any, bool) {
	v, has := m[key]
	if !has {
		return nil, false
	}
	at := p.child(key)
	var out []map[string]any
	switch v := v.(type) {
	case []map[string]any:
		return v, true
	case []any:
		ok := true
		for i, el := range v {
			t, isTable := el.(map[string]any)
			if !isTable {
				d.wrongType(at.index(i), "a table", el)
				ok = false
				continue
			}
			out = append(out, t)
		}
		if !ok {
			return nil, false
		}
		return out, true
	case map[string]any:
		d.atValue(at, "%s: want an array of tables, got a table: write [[%s]], with double brackets, once per element", at, at)
		return nil, false
	default:
		d.wrongType(at, "an array of tables", v)
		return nil, false
	}
}

// redacted is d.known.Text(s), worked out once per distinct s: a file's
// pipelines often share URLs.
func (d *decoder) redacted(s string) string {
	if r, ok := d.texts[s]; ok {
		return r
	}
	if d.texts == nil {
		d.texts = map[string]string{}
	}
	r := d.known.Text(s)
	d.texts[s] = r
	return r
}
