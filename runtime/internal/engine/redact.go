package engine

import "github.com/agora-etl/agora/internal/redact"

// redactedError is a run's error as the worker shows it (the "run failed"
// log line, /status last_error, the fleet's records): a URL with a
// password in it, from a pipeline's own error, is shown with the password
// replaced. The chain is kept for errors.Is and errors.As.
type redactedError struct{ err error }

func (e redactedError) Error() string { return redact.Text(e.err.Error()) }
func (e redactedError) Unwrap() error { return e.err }
