package engine

import (
	"maps"
	"slices"
	"strings"
)

// FormatParams writes params as "k=v" pairs sorted by key, for logs;
// runtime.FormatParams documents it.
func FormatParams(params map[string]string) string {
	var b strings.Builder
	for i, k := range slices.Sorted(maps.Keys(params)) {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(params[k])
	}
	return b.String()
}
