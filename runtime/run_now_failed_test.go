package runtime_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agora-etl/agora/runtime"
)

// Rule: the part of RunNow's error about a run that started and failed
// matches ErrRunFailed (the pool logged it already); a pipeline that was
// not run does not, and the error's text is unchanged.
func TestRunNowMarksFailedRunsWithErrRunFailed(t *testing.T) {
	var n atomic.Int32
	boom := errors.New("boom")
	pool := runtime.NewWorkerPool(runtime.WithLogger(quietLogger()), runtime.WithSignalHandling(false)).
		Register(countingPipeline("bad", &n, boom))
	err := pool.RunNow(context.Background())
	if !errors.Is(err, runtime.ErrRunFailed) || !errors.Is(err, boom) {
		t.Fatalf("RunNow = %v, want ErrRunFailed wrapping the run's error", err)
	}
	if strings.Contains(err.Error(), runtime.ErrRunFailed.Error()) {
		t.Errorf("the sentinel's text is in the error: %v", err)
	}
	if err := pool.RunNow(context.Background(), "nope"); errors.Is(err, runtime.ErrRunFailed) {
		t.Errorf("an unknown pipeline matches ErrRunFailed: %v", err)
	}
}
