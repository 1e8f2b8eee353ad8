package gen

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// DefaultID derives a pipeline id from a factory name: a leading "Build" or
// "New" is dropped when a capital letter follows, and the rest is written in
// kebab-case with acronyms kept together: BuildOrdersHourly is
// "orders-hourly", NewHTTPSync is "http-sync", loadEvents is "load-events".
func DefaultID(funcName string) string {
	name := funcName
	for _, prefix := range []string{"Build", "New", "build", "new"} {
		rest, ok := strings.CutPrefix(name, prefix)
		if ok && rest != "" {
			if r, _ := utf8.DecodeRuneInString(rest); unicode.IsUpper(r) {
				name = rest
				break
			}
		}
	}
	runes := []rune(name)
	var b strings.Builder
	for i, r := range runes {
		if r == '_' {
			b.WriteByte('-')
			continue
		}
		if i > 0 && unicode.IsUpper(r) {
			prev := runes[i-1]
			nextLower := i+1 < len(runes) && unicode.IsLower(runes[i+1])
			if prev != '_' && (unicode.IsLower(prev) || unicode.IsDigit(prev) || (unicode.IsUpper(prev) && nextLower)) {
				b.WriteByte('-')
			}
		}
		b.WriteRune(unicode.ToLower(r))
	}
	return b.String()
}

// ConstName returns the name of the constant generated for a pipeline id:
// "Pipeline" followed by the id's parts, split at '-', '_' and '.', each
// with its first letter capitalized: "orders-hourly" is
// PipelineOrdersHourly.
func ConstName(id string) string {
	var b strings.Builder
	b.WriteString("Pipeline")
	for _, part := range strings.FieldsFunc(id, func(r rune) bool { return r == '-' || r == '_' || r == '.' }) {
		r, n := utf8.DecodeRuneInString(part)
		b.WriteRune(unicode.ToUpper(r))
		b.WriteString(part[n:])
	}
	return b.String()
}
