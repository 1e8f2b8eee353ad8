package runtime

import (
	"errors"
	"fmt"
)

// ErrInvalidPipelineID is wrapped by the error of ValidatePipelineID.
var ErrInvalidPipelineID = errors.New("runtime: invalid pipeline id")

// PipelineIDRule says in words which pipeline ids ValidatePipelineID
// accepts, for messages and docs.
const PipelineIDRule = "a pipeline id uses only letters, digits, '_', '.' and '-'"

// ValidatePipelineID reports whether id can name a pipeline: one or more
// ASCII letters, digits, '_', '.' and '-'. It is the one rule for the Go
// API (ScheduledPipeline.Start, WorkerPool.Run), //agora:schedule id= and
// agora/v1 [pipelines.<id>]. The id ends up inside Redis keys, where '{'
// and '}' would change a Cluster hash tag and so the slot; in log lines and
// fleet tables, where a space, a newline or a control character would break
// the columns; and in the constant agoragen generates.
func ValidatePipelineID(id string) error {
	if id == "" {
		return fmt.Errorf("%w: empty id: %s, at least one", ErrInvalidPipelineID, PipelineIDRule)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '.' || c == '-' {
			continue
		}
		return &pipelineIDError{id: id}
	}
	return nil
}

// pipelineIDError names the refused id, quoted so that a newline or a
// control character in it is seen rather than acted on.
type pipelineIDError struct{ id string }

func (e *pipelineIDError) Error() string {
	return fmt.Sprintf("pipeline id %q: %s", e.id, PipelineIDRule)
}

func (e *pipelineIDError) Unwrap() error { return ErrInvalidPipelineID }
