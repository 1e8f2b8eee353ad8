package tracing

import "io"

// SetStdout points the stdout exporter at w until the returned function is
// called.
func SetStdout(w io.Writer) (restore func()) {
	old := stdout
	stdout = w
	return func() { stdout = old }
}
