package config

import (
	"strconv"
	"strings"
)

// path names a value of the document: table keys and, for array elements,
// indexes. It is written the way a user would, pipelines.orders.sinks[0].type.
type path []string

// indexMark prefixes the elements of a path that are array indexes; no TOML
// key can start with it unquoted, and quoted keys starting with a control
// character are not worth telling apart.
const indexMark = "\x00"

func (p path) child(key string) path { return append(p[:len(p):len(p)], key) }

func (p path) index(i int) path { return append(p[:len(p):len(p)], indexMark+strconv.Itoa(i)) }

// idSep separates the parts of a path id.
const idSep = '\x1f'

// id is the map key for p in a position index.
func (p path) id() string { return strings.Join(p, string(idSep)) }

// appendID appends p.id() to b.
func (p path) appendID(b []byte) []byte {
	for i, part := range p {
		if i > 0 {
			b = append(b, idSep)
		}
		b = append(b, part...)
	}
	return b
}

// last returns the key p ends with, or "" for the root.
func (p path) last() string {
	if len(p) == 0 {
		return ""
	}
	return p[len(p)-1]
}

// String writes p as a dotted key, quoting parts that are not bare keys.
func (p path) String() string {
	var b strings.Builder
	for _, part := range p {
		if i, ok := strings.CutPrefix(part, indexMark); ok {
			b.WriteString("[" + i + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		if isBareKey(part) {
			b.WriteString(part)
		} else {
			b.WriteString(strconv.Quote(part))
		}
	}
	return b.String()
}

// isBareKey reports whether s can be written as a TOML key without quotes.
func isBareKey(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
