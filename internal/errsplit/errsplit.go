// Package errsplit takes apart errors joined with errors.Join (or any error
// with an Unwrap() []error method), for code that reports each problem on
// its own line: the config checker, the environment settings, the agora
// command's run-now and the sink tests.
package errsplit

// Split returns the errors err joins, joined errors inside it split too,
// in order; err alone when it joins none; nil for a nil err.
func Split(err error) []error {
	if err == nil {
		return nil
	}
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return []error{err}
	}
	var out []error
	for _, e := range j.Unwrap() {
		out = append(out, Split(e)...)
	}
	return out
}
