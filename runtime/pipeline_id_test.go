package runtime_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agora-etl/agora/runtime"
)

func TestValidatePipelineID(t *testing.T) {
	for _, id := range []string{"orders", "orders-hourly", "events_consumer", "v1.2", "A-9"} {
		if err := runtime.ValidatePipelineID(id); err != nil {
			t.Errorf("ValidatePipelineID(%q) = %v, want nil", id, err)
		}
	}
	for id, quoted := range map[string]string{
		"}": `"}"`, "{orders}": `"{orders}"`, "a\nb": `"a\nb"`, "a b": `"a b"`, "é": `"é"`, "a/b": `"a/b"`, "a:b": `"a:b"`, "": "empty id",
	} {
		err := runtime.ValidatePipelineID(id)
		if !errors.Is(err, runtime.ErrInvalidPipelineID) || !strings.Contains(err.Error(), quoted) || !strings.Contains(err.Error(), runtime.PipelineIDRule) {
			t.Errorf("ValidatePipelineID(%q) = %v, want ErrInvalidPipelineID naming %s and the rule", id, err, quoted)
		}
	}
}

// TestGoAPIRefusesInvalidPipelineIDs: an id '}' (a Cluster hash tag) or one
// with a newline (a fleet table row) used to be accepted by the Go API, the
// one way in that did not check.
func TestGoAPIRefusesInvalidPipelineIDs(t *testing.T) {
	for _, id := range []string{"}", "orders\nfake-row"} {
		sp := &runtime.ScheduledPipeline{PipelineID: id, Schedule: runtime.Once(), Factory: nopFactory}
		err := sp.Start(context.Background())
		if !errors.Is(err, runtime.ErrInvalidPipelineID) {
			t.Errorf("Start with id %q = %v, want ErrInvalidPipelineID", id, err)
		}
		pool := runtime.NewWorkerPool(runtime.WithSignalHandling(false)).
			Register(&runtime.ScheduledPipeline{PipelineID: id, Schedule: runtime.Once(), Factory: nopFactory})
		err = pool.Run(context.Background())
		if !errors.Is(err, runtime.ErrInvalidPipelineID) || !errors.Is(err, runtime.ErrInvalidPipeline) || strings.Contains(err.Error(), "\nfake-row") {
			t.Errorf("pool.Run with id %q = %v, want ErrInvalidPipelineID with the id quoted", id, err)
		}
	}
}
