package etl

import (
	"encoding/json"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// recordDecoder decodes JSON objects into records, the way encoding/json
// with UseNumber does, several times faster: strings and numbers are
// substrings of the input (no copy, no reflection), and field names repeat
// from record to record, so they are interned. Input it is not sure about
// (invalid UTF-8, odd escapes, syntax errors) it declines, and the caller
// falls back to encoding/json, which gives the same result or the error.
type recordDecoder struct {
	keys map[string]string
}

// maxInterned bounds the field names a decoder keeps.
const maxInterned = 4096

// decode returns the object s holds, with nothing but blanks around it.
func (d *recordDecoder) decode(s string) (Record, bool) {
	p := parser{s: s, d: d}
	p.blank()
	if p.i >= len(s) || s[p.i] != '{' {
		return nil, false
	}
	m, ok := p.object()
	if !ok {
		return nil, false
	}
	p.blank()
	if p.i != len(s) {
		return nil, false
	}
	return Record(m), true
}

func (d *recordDecoder) intern(k string) string {
	if v, ok := d.keys[k]; ok {
		return v
	}
	if d.keys == nil {
		d.keys = make(map[string]string)
	}
	if len(d.keys) < maxInterned {
		d.keys[k] = k
	}
	return k
}

type parser struct {
	s     string
	i     int
	d     *recordDecoder
	depth int
}

// maxDepth is where the parser declines and leaves deep nesting to
// encoding/json.
const maxDepth = 1000

func (p *parser) blank() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

func (p *parser) value() (any, bool) {
	p.blank()
	if p.i >= len(p.s) {
		return nil, false
	}
	switch c := p.s[p.i]; {
	case c == '{':
		m, ok := p.object()
		return m, ok
	case c == '[':
		return p.array()
	case c == '"':
		return p.str()
	case c == '-' || c >= '0' && c <= '9':
		return p.number()
	case c == 't':
		return true, p.word("true")
	case c == 'f':
		return false, p.word("false")
	case c == 'n':
		return nil, p.word("null")
	}
	return nil, false
}

func (p *parser) word(w string) bool {
	if len(p.s)-p.i >= len(w) && p.s[p.i:p.i+len(w)] == w {
		p.i += len(w)
		return true
	}
	return false
}

func (p *parser) object() (map[string]any, bool) {
	if p.depth++; p.depth > maxDepth {
		return nil, false
	}
	defer func() { p.depth-- }()
	p.i++ // {
	m := make(map[string]any)
	p.blank()
	if p.i < len(p.s) && p.s[p.i] == '}' {
		p.i++
		return m, true
	}
	for {
		p.blank()
		if p.i >= len(p.s) || p.s[p.i] != '"' {
			return nil, false
		}
		k, ok := p.str()
		if !ok {
			return nil, false
		}
		p.blank()
		if p.i >= len(p.s) || p.s[p.i] != ':' {
			return nil, false
		}
		p.i++
		v, ok := p.value()
		if !ok {
			return nil, false
		}
		m[p.d.intern(k)] = v
		p.blank()
		if p.i >= len(p.s) {
			return nil, false
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case '}':
			p.i++
			return m, true
		default:
			return nil, false
		}
	}
}

func (p *parser) array() (any, bool) {
	if p.depth++; p.depth > maxDepth {
		return nil, false
	}
	defer func() { p.depth-- }()
	p.i++ // [
	a := []any{}
	p.blank()
	if p.i < len(p.s) && p.s[p.i] == ']' {
		p.i++
		return a, true
	}
	for {
		v, ok := p.value()
		if !ok {
			return nil, false
		}
		a = append(a, v)
		p.blank()
		if p.i >= len(p.s) {
			return nil, false
		}
		switch p.s[p.i] {
		case ',':
			p.i++
		case ']':
			p.i++
			return a, true
		default:
			return nil, false
		}
	}
}

// str reads a string at p.i (a '"'). Without escapes it is a substring of
// the input.
func (p *parser) str() (string, bool) {
	start := p.i + 1
	ascii := true
	for j := start; j < len(p.s); j++ {
		switch c := p.s[j]; {
		case c == '"':
			p.i = j + 1
			v := p.s[start:j]
			if !ascii && !utf8.ValidString(v) {
				return "", false // encoding/json replaces bad bytes; let it
			}
			return v, true
		case c == '\\':
			return p.escaped(start)
		case c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			ascii = false
		}
	}
	return "", false
}

// escaped reads a string with escapes, from its first content byte.
func (p *parser) escaped(start int) (string, bool) {
	b := make([]byte, 0, 32)
	for j := start; j < len(p.s); {
		c := p.s[j]
		switch {
		case c == '"':
			p.i = j + 1
			if !utf8.Valid(b) {
				return "", false
			}
			return string(b), true
		case c < 0x20:
			return "", false
		case c != '\\':
			b = append(b, c)
			j++
			continue
		}
		if j+1 >= len(p.s) {
			return "", false
		}
		switch e := p.s[j+1]; e {
		case '"', '\\', '/':
			b = append(b, e)
		case 'b':
			b = append(b, '\b')
		case 'f':
			b = append(b, '\f')
		case 'n':
			b = append(b, '\n')
		case 'r':
			b = append(b, '\r')
		case 't':
			b = append(b, '\t')
		case 'u':
			r, ok := hex4(p.s, j+2)
			if !ok {
				return "", false
			}
			j += 6
			if utf16.IsSurrogate(r) {
				// Only a well-formed pair; encoding/json decides the rest.
				if j+1 >= len(p.s) || p.s[j] != '\\' || p.s[j+1] != 'u' {
					return "", false
				}
				r2, ok := hex4(p.s, j+2)
				if !ok {
					return "", false
				}
				r = utf16.DecodeRune(r, r2)
				if r == utf8.RuneError {
					return "", false
				}
				j += 6
			}
			b = utf8.AppendRune(b, r)
			continue
		default:
			return "", false
		}
		j += 2
	}
	return "", false
}

func hex4(s string, at int) (rune, bool) {
	if at+4 > len(s) {
		return 0, false
	}
	n, err := strconv.ParseUint(s[at:at+4], 16, 32)
	if err != nil {
		return 0, false
	}
	return rune(n), true
}

// number reads a JSON number: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?
func (p *parser) number() (any, bool) {
	s, j := p.s, p.i
	if s[j] == '-' {
		j++
	}
	digits := func() int {
		k := j
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		return j - k
	}
	switch {
	case j < len(s) && s[j] == '0':
		j++
	case digits() == 0:
		return nil, false
	}
	if j < len(s) && s[j] == '.' {
		j++
		if digits() == 0 {
			return nil, false
		}
	}
	if j < len(s) && (s[j] == 'e' || s[j] == 'E') {
		j++
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if digits() == 0 {
			return nil, false
		}
	}
	n := json.Number(s[p.i:j])
	p.i = j
	return n, true
}
