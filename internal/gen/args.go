package gen

import (
	"fmt"
	"strconv"
	"strings"
)

// arg is one "key" or "key=value" of a directive, with byte offsets into the
// comment text so diagnostics can point at it.
type arg struct {
	Key      string
	KeyOff   int
	Value    string
	ValueOff int
	HasValue bool
	// Quoted says the value was a Go string literal.
	Quoted bool
}

// argError is a syntax error at an offset of the comment text.
type argError struct {
	Off int
	Msg string
}

// splitArgs splits the text after the directive name into arguments. start
// is the offset of text within the comment. Values are bare words or Go
// string literals ("..." with escapes, or `...`), so a cron expression with
// spaces is written cron="0 * * * *".
func splitArgs(text string, start int) ([]arg, []argError) {
	var args []arg
	var errs []argError
	i := 0
	for {
		for i < len(text) && isSpace(text[i]) {
			i++
		}
		if i >= len(text) {
			return args, errs
		}
		a := arg{KeyOff: start + i}
		j := i
		for j < len(text) && !isSpace(text[j]) && text[j] != '=' {
			j++
		}
		a.Key = text[i:j]
		if a.Key == "" {
			errs = append(errs, argError{start + i, "missing key before '='"})
		}
		i = j
		if i < len(text) && text[i] == '=' {
			i++
			a.HasValue = true
			a.ValueOff = start + i
			if i < len(text) && (text[i] == '"' || text[i] == '`') {
				lit, n, ok := quotedPrefix(text[i:])
				if !ok {
					errs = append(errs, argError{start + i, fmt.Sprintf("unterminated string in %s=", a.Key)})
					return args, errs
				}
				v, err := strconv.Unquote(lit)
				if err != nil {
					errs = append(errs, argError{start + i, fmt.Sprintf("bad string %s in %s=: %v", lit, a.Key, err)})
				}
				a.Value = v
				a.Quoted = true
				i += n
				if i < len(text) && !isSpace(text[i]) {
					errs = append(errs, argError{start + i, fmt.Sprintf("want a space after the quoted value of %s", a.Key)})
					for i < len(text) && !isSpace(text[i]) {
						i++
					}
				}
			} else {
				j := i
				for j < len(text) && !isSpace(text[j]) {
					j++
				}
				a.Value = text[i:j]
				i = j
			}
		}
		if a.Key != "" {
			args = append(args, a)
		}
	}
}

// quotedPrefix returns the Go string literal s starts with and its length.
func quotedPrefix(s string) (string, int, bool) {
	q := s[0]
	for i := 1; i < len(s); i++ {
		switch {
		case s[i] == '\\' && q == '"':
			i++
		case s[i] == q:
			return s[:i+1], i + 1, true
		}
	}
	return "", 0, false
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' }

// directiveName splits "//agora:name rest" into name and the offset where
// the arguments start.
func directiveName(text string) (name string, argsOff int) {
	rest := text[len(Namespace):]
	end := strings.IndexAny(rest, " \t")
	if end < 0 {
		end = len(rest)
	}
	return rest[:end], len(Namespace) + end
}
